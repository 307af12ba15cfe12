package static

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

func site(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Form</title>
<form method="post" action="/post">
  <textarea name="note" aria-label="Note">old</textarea>
  <input type="radio" name="ship" value="fast" aria-label="Fast" checked>
  <input type="radio" name="ship" value="slow" aria-label="Slow">
  <input type="hidden" name="token" value="t0k">
  <input name="qty" aria-label="Quantity" value="1" readonly>
  <input type="submit" value="Order">
</form>
<div hidden><button>Invisible</button></div>
<div style="display: none"><a href="/x">Gone</a></div>
<my-card><template shadowrootmode="open"><button>Shadow buy</button></template></my-card>
<iframe src="/inner" title="Inner"></iframe>
<button onclick="go()">Scripted</button>
<script>function go() {}</script>`)
	})
	mux.HandleFunc("/inner", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<a href="/">Frame link</a>`)
	})
	mux.HandleFunc("/post", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, `<title>Posted</title><p>%s %s</p>`, r.Method, b)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

func TestPluginStaticBackend(t *testing.T) {
	ts := site(t)
	ctx := context.Background()
	b := New()
	if err := b.Open(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Navigate(ctx, ts.URL+"/"); err != nil {
		t.Fatal(err)
	}
	s, err := b.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]string{}
	for _, e := range s.Elements {
		refs[e.Role+" "+e.Name] = e.Ref
	}
	for _, want := range []string{"textbox Note", "radio Fast", "radio Slow", "textbox Quantity", "button Order", "button Shadow buy", "link Frame link", "button Scripted"} {
		if refs[want] == "" {
			t.Errorf("no %s in\n%s", want, s.Tree)
		}
	}
	for _, hiddenName := range []string{"Invisible", "Gone", "t0k"} {
		if strings.Contains(s.Tree, hiddenName) {
			t.Errorf("hidden %q shows in\n%s", hiddenName, s.Tree)
		}
	}
	act := func(a engine.Action) error { return b.Act(ctx, a) }
	if err := act(engine.Action{Kind: engine.ActFill, Ref: refs["textbox Quantity"], Value: "3"}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("fill readonly: %v", err)
	}
	if err := act(engine.Action{Kind: engine.ActClick, Ref: refs["button Scripted"]}); err == nil || !strings.Contains(err.Error(), "JavaScript") {
		t.Fatalf("click a scripted button: %v", err)
	}
	if _, err := b.Screenshot(ctx); err == nil || !strings.Contains(err.Error(), "use --browser chromedp") {
		t.Fatalf("screenshot: %v", err)
	}
	if err := act(engine.Action{Kind: engine.ActType, Ref: refs["textbox Note"], Value: " and new"}); err != nil {
		t.Fatal(err)
	}
	if err := act(engine.Action{Kind: engine.ActClick, Ref: refs["radio Slow"]}); err != nil {
		t.Fatal(err)
	}
	if err := act(engine.Action{Kind: engine.ActClick, Ref: refs["button Order"]}); err != nil {
		t.Fatal(err)
	}
	s, _ = b.Snapshot(ctx)
	if s.Title != "Posted" || !strings.Contains(s.Text, "POST note=old+and+new&ship=slow&token=t0k&qty=1") {
		t.Fatalf("posted: %q %q", s.Title, s.Text)
	}
	err = act(engine.Action{Kind: engine.ActClick, Ref: refs["button Order"]})
	if ae, ok := engine.AsActionError(err); !ok || ae.Code != engine.CodeStaleRef {
		t.Fatalf("stale: %v", err)
	}
	err = act(engine.Action{Kind: engine.ActClick, Ref: "e999999"})
	if ae, ok := engine.AsActionError(err); !ok || ae.Code != engine.CodeNotFound {
		t.Fatalf("not found: %v", err)
	}
	if err := act(engine.Action{Kind: engine.ActBack}); err != nil {
		t.Fatal(err)
	}
	err = act(engine.Action{Kind: engine.ActBack})
	if ae, ok := engine.AsActionError(err); !ok || !strings.Contains(ae.Message, "no previous page") {
		t.Fatalf("back past the start: %v", err)
	}
	err = b.Navigate(ctx, "http://127.0.0.1:1/")
	if ae, ok := engine.AsActionError(err); !ok || ae.Code != engine.CodeNavigation || !strings.Contains(ae.Message, "connection refused") {
		t.Fatalf("navigate to a closed port: %v", err)
	}
}
