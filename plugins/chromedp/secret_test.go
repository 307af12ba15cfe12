package chromedp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

const fieldStyle = `font: 40px monospace; color: black; background: white; width: 900px; height: 70px; border: 0; outline: 0; padding: 0 10px; display: block; margin: 20px`

var secretHTML = `<!doctype html><html><body style="background: white; margin: 0">
<input id="card" name="cardnumber" aria-label="Card number" value="4111 1111 1111 1111 4111 1111" style="` + fieldStyle + `">
<input id="plain" aria-label="City" value="WWWWWWWWWWWWWWWWWWWWWWWWW" style="` + fieldStyle + `">
<label>API key <input id="key" value="sk-abcdefghijklmnopqrstuvwx"></label>
<div id="host"></div>
<iframe src="/frame-login" title="Login frame"></iframe>
<script>
const root = document.getElementById("host").attachShadow({mode: "open"});
root.innerHTML = '<input type="password" aria-label="Shadow password" value="shadow-pw-123">';
</script>
</body></html>`

const frameLoginHTML = `<!doctype html><html><body><input autocomplete="one-time-code" aria-label="Code" value="987654321"></body></html>`

func secretServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, secretHTML) })
	mux.HandleFunc("/frame-login", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, frameLoginHTML) })
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// Secret fields (by name, label, type, autocomplete; in shadow roots and
// same-origin frames) are marked and never reported, before or after a
// fill; an ordinary field's value is.
func TestPluginChromedpSecretSnapshot(t *testing.T) {
	b := open(t)
	ts := secretServer(t)
	if err := b.Navigate(context.Background(), ts.URL+"/"); err != nil {
		t.Fatal(err)
	}
	p := &tab{t: t, b: b}
	p.snapshot()
	p.mustAct(engine.Action{Kind: engine.ActFill, Ref: p.ref("textbox", "Shadow password"), Value: "typed-secret-456"})
	p.mustAct(engine.Action{Kind: engine.ActFill, Ref: p.ref("textbox", "API key"), Value: "sk-typedtypedtypedtyped0"})
	for _, s := range []*engine.Snapshot{p.snap, p.snapshot()} {
		all := fmt.Sprintf("%+v", *s)
		for _, v := range []string{"4111", "sk-abcdef", "shadow-pw", "typed-secret", "sk-typed", "987654321"} {
			if strings.Contains(all, v) {
				t.Errorf("the snapshot reports %q:\n%s", v, all)
			}
		}
		if !strings.Contains(s.Tree, "WWWWWWWW") {
			t.Errorf("an ordinary field's value is not reported:\n%s", s.Tree)
		}
		var secret []string
		for _, el := range s.Elements {
			if slices.Contains(el.States, engine.StateSecret) {
				secret = append(secret, el.Name)
				if !slices.Contains(el.States, stateFilled) {
					t.Errorf("%s holds a value but is not marked filled: %v", el.Name, el.States)
				}
			}
		}
		slices.Sort(secret)
		if want := []string{"API key", "Card number", "Code", "Shadow password"}; !slices.Equal(secret, want) {
			t.Errorf("secret fields %q, want %q\n%s", secret, want, s.Tree)
		}
	}
}

// A screenshot hides the text of secret fields (and only theirs), and the
// page is as it was afterwards.
func TestPluginChromedpScreenshotMasksSecrets(t *testing.T) {
	b := open(t)
	ts := secretServer(t)
	if err := b.Navigate(context.Background(), ts.URL+"/"); err != nil {
		t.Fatal(err)
	}
	p := &tab{t: t, b: b}
	shot, err := b.Screenshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	scale := float64(img.Bounds().Dx()) / jsNumber(t, p, "window.innerWidth")
	dark := func(id string) int {
		var r struct{ X, Y, Width, Height float64 }
		if err := json.Unmarshal([]byte(p.eval(`JSON.stringify(document.getElementById("`+id+`").getBoundingClientRect())`)), &r); err != nil {
			t.Fatal(err)
		}
		n := 0
		for y := int((r.Y + 4) * scale); y < int((r.Y+r.Height-4)*scale); y++ {
			for x := int((r.X + 4) * scale); x < int((r.X+r.Width-4)*scale); x++ {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				if cr>>8 < 100 && cg>>8 < 100 && cb>>8 < 100 {
					n++
				}
			}
		}
		return n
	}
	if n := dark("plain"); n < 200 {
		t.Fatalf("the ordinary field shows %d dark pixels: the test cannot see text", n)
	}
	if n := dark("card"); n != 0 {
		t.Fatalf("the card number field shows %d dark pixels in the screenshot", n)
	}
	if c := p.eval(`getComputedStyle(document.getElementById("card")).color`); c != "rgb(0, 0, 0)" {
		t.Fatalf("the field's style was not restored: color %s", c)
	}
	if s := p.eval(`document.getElementById("plain").getAttribute("style")`); !strings.HasPrefix(s, "font: 40px") || strings.Contains(s, "transparent") {
		t.Fatalf("an ordinary field's style changed: %s", s)
	}
}

func jsNumber(t *testing.T, p *tab, expr string) float64 {
	t.Helper()
	var f float64
	if _, err := fmt.Sscan(p.eval(`String(`+expr+`)`), &f); err != nil || f == 0 {
		t.Fatalf("%s: %v", expr, err)
	}
	return f
}
