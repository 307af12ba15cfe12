package loader

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

// The same scenario against both browser backends, each as a subprocess:
// swapping --browser changes nothing the agent sees.

func formServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><head><title>Shop</title></head><body>
<h1>Padel shop</h1>
<form action="/search" method="get">
  <label for="q">Search</label><input id="q" name="q">
  <select name="size" aria-label="Size"><option value="s">Small</option><option value="m">Medium</option></select>
  <label><input type="checkbox" name="stock"> In stock only</label>
  <button type="submit">Find</button>
</form>
<p>Free delivery over 50 EUR</p>
</body></html>`)
	})
	mux.HandleFunc("/search", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><html><head><title>Results</title></head><body>
<p>Results for %s size %s stock %s</p><a href="/">Back home</a></body></html>`,
			r.URL.Query().Get("q"), r.URL.Query().Get("size"), r.URL.Query().Get("stock"))
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

func TestPluginSwapBrowsers(t *testing.T) {
	for _, name := range []string{"static", "chromedp"} {
		t.Run(name, func(t *testing.T) {
			if name == "chromedp" {
				needChromium(t)
			}
			ts := formServer(t)
			opts, _ := testOptions(t, "")
			ctx := context.Background()
			b, err := OpenBrowser(ctx, name, BrowserOptions{Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if b.Info().Name != name {
				t.Fatalf("Info = %+v", b.Info())
			}
			if err := b.Navigate(ctx, ts.URL+"/"); err != nil {
				t.Fatal(err)
			}
			s, err := b.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ref := func(role, nm string) string {
				for _, e := range s.Elements {
					if e.Role == role && e.Name == nm {
						return e.Ref
					}
				}
				t.Fatalf("no %s %q:\n%s", role, nm, s.Tree)
				return ""
			}
			if s.Title != "Shop" || !strings.Contains(s.Text, "Free delivery over 50 EUR") {
				t.Fatalf("title %q text %q", s.Title, s.Text)
			}
			search, find := ref("textbox", "Search"), ref("button", "Find")
			act := func(a engine.Action) {
				t.Helper()
				if err := b.Act(ctx, a); err != nil {
					t.Fatalf("%s: %v", a, err)
				}
			}
			err = b.Act(ctx, engine.Action{Kind: engine.ActFill, Ref: find, Value: "x"})
			if ae, ok := engine.AsActionError(err); !ok || ae.Code != engine.CodeNotEditable || ae.Message != "element is not an input" {
				t.Fatalf("fill a button: %v", err)
			}
			act(engine.Action{Kind: engine.ActFill, Ref: search, Value: "rackets"})
			act(engine.Action{Kind: engine.ActSelect, Ref: ref("combobox", "Size"), Value: "Medium"})
			act(engine.Action{Kind: engine.ActClick, Ref: ref("checkbox", "In stock only")})
			err = b.Act(ctx, engine.Action{Kind: engine.ActSelect, Ref: ref("combobox", "Size"), Value: "XXL"})
			if ae, ok := engine.AsActionError(err); !ok || ae.Code != engine.CodeNoSuchOption || !strings.Contains(ae.Message, `no option "XXL" (options: "Small", "Medium")`) {
				t.Fatalf("select a missing option: %v", err)
			}
			act(engine.Action{Kind: engine.ActClick, Ref: find})
			s, err = b.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if s.Title != "Results" || !strings.Contains(s.Text, "Results for rackets size m stock on") {
				t.Fatalf("after submit: %q %q", s.Title, s.Text)
			}
			err = b.Act(ctx, engine.Action{Kind: engine.ActClick, Ref: search})
			if ae, ok := engine.AsActionError(err); !ok || ae.Code != engine.CodeStaleRef || !strings.Contains(ae.Message, "stale ref "+search) {
				t.Fatalf("old ref: %v", err)
			}
			act(engine.Action{Kind: engine.ActBack})
			if s, _ = b.Snapshot(ctx); s.Title != "Shop" {
				t.Fatalf("after back: %q", s.Title)
			}
		})
	}
}
