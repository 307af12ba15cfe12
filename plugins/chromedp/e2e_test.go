package chromedp

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	dp "github.com/chromedp/chromedp"

	"github.com/engine-dev/engine/engine"
)

// End-to-end tests against real chromium and local pages. They need
// chromium (scripts/install-deps.sh installs it); without it they skip,
// except in CI where they fail.

const indexHTML = `<!doctype html>
<html><head><title>Shop</title></head><body>
<h1>Padel shop</h1>
<a href="/next" target="_blank">Next page</a>
<input id="q" aria-label="Search">
<textarea aria-label="Notes"></textarea>
<button id="go" onclick="document.getElementById('out').textContent = 'clicked ' + document.getElementById('q').value">Go</button>
<div id="out">nothing yet</div>
<div tabindex="0" class="fake-button" onclick="this.textContent = 'fake clicked'">Fake button</div>
<select aria-label="Size"><option value="s">Small</option><option value="m">Medium</option><option value="xl" disabled>XL</option></select>
<div style="position: relative; height: 60px">
  <button id="covered" onclick="document.getElementById('out').textContent = 'covered clicked'">Covered</button>
  <div id="cookie" class="banner modal" style="position: absolute; top: 0; left: 0; width: 300px; height: 60px; background: white">We use cookies</div>
</div>
<button id="hov" onmouseenter="this.textContent = 'hovered'">Hover me</button>
<button id="alerter" onclick="alert('Are you sure?'); this.textContent = 'alerted'">Alert me</button>
<label><input type="checkbox" id="agree"> Agree</label>
<input aria-label="Enter box" onkeydown="if (event.key === 'Enter') document.getElementById('out').textContent = 'enter:' + this.value">
<input aria-label="Readonly" readonly value="fixed">
<shadow-host></shadow-host>
<iframe src="/frame" title="Inner frame" style="width: 300px; height: 80px"></iframe>
<div style="height: 3000px"></div>
<button id="far" onclick="this.textContent = 'far clicked'">Far button</button>
<script>
customElements.define('shadow-host', class extends HTMLElement {
  constructor() {
    super();
    const r = this.attachShadow({mode: 'open'});
    r.innerHTML = '<button onclick="this.textContent = \'shadow clicked\'">Shadow button</button>';
  }
});
</script>
</body></html>`

const nextHTML = `<!doctype html><html><head><title>Next</title></head><body>
<p>Second page</p><a href="/">Home</a>
<button id="later" onclick="setTimeout(() => { const p = document.createElement('p'); p.textContent = 'Appeared later'; document.body.append(p) }, 150)">Later</button>
</body></html>`

const frameHTML = `<!doctype html><html><body><button onclick="this.textContent = 'frame clicked'">Frame button</button></body></html>`

func server(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	serve := func(s string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, s)
		}
	}
	mux.HandleFunc("/{$}", serve(indexHTML))
	mux.HandleFunc("/next", serve(nextHTML))
	mux.HandleFunc("/frame", serve(frameHTML))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

func needChromium(t testing.TB) {
	t.Helper()
	if _, err := FindChromium(os.Getenv("ENGINE_CHROMIUM")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium is missing in CI: %v", err)
		}
		t.Skip(err)
	}
}

func open(t testing.TB) *Browser {
	t.Helper()
	needChromium(t)
	b := New()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Open(ctx, map[string]string{"chromium_path": os.Getenv("ENGINE_CHROMIUM"), "nav_timeout": "10s"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

type tab struct {
	t    *testing.T
	b    *Browser
	snap *engine.Snapshot
}

func (p *tab) snapshot() *engine.Snapshot {
	p.t.Helper()
	s, err := p.b.Snapshot(context.Background())
	if err != nil {
		p.t.Fatal(err)
	}
	p.snap = s
	return s
}

// ref finds the ref of the element with this role and name.
func (p *tab) ref(role, name string) string {
	p.t.Helper()
	for _, e := range p.snap.Elements {
		if e.Role == role && e.Name == name {
			return e.Ref
		}
	}
	p.t.Fatalf("no %s %q in snapshot:\n%s", role, name, p.snap.Tree)
	return ""
}

func (p *tab) element(ref string) engine.Element {
	p.t.Helper()
	for _, e := range p.snap.Elements {
		if e.Ref == ref {
			return e
		}
	}
	p.t.Fatalf("no element %s in snapshot:\n%s", ref, p.snap.Tree)
	return engine.Element{}
}

func (p *tab) act(a engine.Action) error {
	return p.b.Act(context.Background(), a)
}

func (p *tab) mustAct(a engine.Action) {
	p.t.Helper()
	if err := p.act(a); err != nil {
		p.t.Fatalf("%s: %v", a, err)
	}
}

func (p *tab) wantActionError(a engine.Action, code, msg string) {
	p.t.Helper()
	err := p.act(a)
	ae, ok := engine.AsActionError(err)
	if !ok {
		p.t.Fatalf("%s: err = %v, want an ActionError %s", a, err, code)
	}
	if ae.Code != code || !strings.Contains(ae.Message, msg) {
		p.t.Fatalf("%s: got %s %q, want %s containing %q", a, ae.Code, ae.Message, code, msg)
	}
}

func (p *tab) eval(expr string) string {
	p.t.Helper()
	v, err := dp.Run(p.b.ctx, dp.Evaluate[string](expr))
	if err != nil {
		p.t.Fatal(err)
	}
	return v
}

func TestPluginChromedpEndToEnd(t *testing.T) {
	b := open(t)
	ts := server(t)
	ctx := context.Background()
	if err := b.Navigate(ctx, ts.URL+"/"); err != nil {
		t.Fatal(err)
	}
	p := &tab{t: t, b: b}
	s := p.snapshot()

	t.Run("snapshot", func(t *testing.T) {
		p.t = t
		if s.Title != "Shop" || s.URL != ts.URL+"/" {
			t.Fatalf("title %q url %q", s.Title, s.URL)
		}
		for _, want := range [][2]string{
			{"link", "Next page"}, {"textbox", "Search"}, {"textbox", "Notes"}, {"button", "Go"},
			{"combobox", "Size"}, {"checkbox", "Agree"}, {"button", "Shadow button"}, {"button", "Frame button"},
			{"button", "Far button"},
		} {
			ref := p.ref(want[0], want[1])
			if !strings.HasPrefix(ref, "e") || !strings.Contains(s.Tree, "[ref="+ref+"]") {
				t.Errorf("%v: ref %q not in tree", want, ref)
			}
		}
		if !strings.Contains(s.Text, "Padel shop") || !strings.Contains(s.Text, "We use cookies") {
			t.Errorf("text misses visible text:\n%s", s.Text)
		}
		if strings.Contains(s.Tree, `heading "Padel shop" [ref=`) {
			t.Errorf("a heading is not actionable and should have no ref:\n%s", s.Tree)
		}
		if !strings.Contains(s.Tree, `heading "Padel shop"`) {
			t.Errorf("tree misses the heading:\n%s", s.Tree)
		}
		p.ref("generic", "Fake button") // focusable, so actionable, named by its text
		if ro := p.element(p.ref("textbox", "Readonly")); ro.Value != "fixed" || !contains(ro.States, "readonly") {
			t.Errorf("readonly textbox = %+v", ro)
		}
		// Refs are stable across snapshots of one document.
		again, err := b.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(again.Elements) != len(s.Elements) {
			t.Fatalf("element count changed: %d then %d", len(s.Elements), len(again.Elements))
		}
		for i := range s.Elements {
			if again.Elements[i].Ref != s.Elements[i].Ref {
				t.Fatalf("ref %d changed: %s then %s", i, s.Elements[i].Ref, again.Elements[i].Ref)
			}
		}
	})

	t.Run("fill type click", func(t *testing.T) {
		p.t = t
		search := p.ref("textbox", "Search")
		p.mustAct(engine.Action{Kind: engine.ActFill, Ref: search, Value: "old text"})
		p.mustAct(engine.Action{Kind: engine.ActFill, Ref: search, Value: "padel"})
		p.mustAct(engine.Action{Kind: engine.ActType, Ref: search, Value: " rackets"})
		p.snapshot()
		if v := p.element(search).Value; v != "padel rackets" {
			t.Fatalf("search value = %q", v)
		}
		p.mustAct(engine.Action{Kind: engine.ActClick, Ref: p.ref("generic", "Fake button")})
		if got := p.eval(`document.querySelector('.fake-button').textContent`); got != "fake clicked" {
			t.Fatalf("fake button = %q", got)
		}
		p.mustAct(engine.Action{Kind: engine.ActClick, Ref: p.ref("button", "Go")})
		if got := p.eval(`document.getElementById('out').textContent`); got != "clicked padel rackets" {
			t.Fatalf("out = %q", got)
		}
		p.mustAct(engine.Action{Kind: engine.ActFill, Ref: p.ref("textbox", "Notes"), Value: "line"})
		if got := p.eval(`document.querySelector('textarea').value`); got != "line" {
			t.Fatalf("textarea = %q", got)
		}
	})

	t.Run("not an input", func(t *testing.T) {
		p.t = t
		p.wantActionError(engine.Action{Kind: engine.ActFill, Ref: p.ref("button", "Go"), Value: "x"}, engine.CodeNotEditable, "element is not an input")
		p.wantActionError(engine.Action{Kind: engine.ActType, Ref: p.ref("checkbox", "Agree"), Value: "x"}, engine.CodeNotEditable, "checkbox input")
		p.wantActionError(engine.Action{Kind: engine.ActFill, Ref: p.ref("textbox", "Readonly"), Value: "x"}, engine.CodeNotEditable, "read-only")
	})

	t.Run("covered click", func(t *testing.T) {
		p.t = t
		p.wantActionError(engine.Action{Kind: engine.ActClick, Ref: p.ref("button", "Covered")}, engine.CodeIntercepted,
			`another element would receive the click: div#cookie.banner.modal "We use cookies"`)
		if got := p.eval(`document.getElementById('out').textContent`); got == "covered clicked" {
			t.Fatal("the covered button was clicked")
		}
	})

	t.Run("select", func(t *testing.T) {
		p.t = t
		size := p.ref("combobox", "Size")
		p.mustAct(engine.Action{Kind: engine.ActSelect, Ref: size, Value: "Medium"})
		if got := p.eval(`document.querySelector('select').value`); got != "m" {
			t.Fatalf("select value = %q", got)
		}
		p.wantActionError(engine.Action{Kind: engine.ActSelect, Ref: size, Value: "Huge"}, engine.CodeNoSuchOption, `no option "Huge" (options: "Small", "Medium", "XL")`)
		p.wantActionError(engine.Action{Kind: engine.ActSelect, Ref: size, Value: "xl"}, engine.CodeNoSuchOption, `disabled`)
		p.wantActionError(engine.Action{Kind: engine.ActSelect, Ref: p.ref("button", "Go"), Value: "x"}, engine.CodeNotEditable, "not a select")
	})

	t.Run("checkbox hover press", func(t *testing.T) {
		p.t = t
		agree := p.ref("checkbox", "Agree")
		p.mustAct(engine.Action{Kind: engine.ActClick, Ref: agree})
		p.snapshot()
		if st := p.element(agree).States; !contains(st, "checked") {
			t.Fatalf("checkbox states = %v", st)
		}
		p.mustAct(engine.Action{Kind: engine.ActHover, Ref: p.ref("button", "Hover me")})
		if got := p.eval(`document.getElementById('hov').textContent`); got != "hovered" {
			t.Fatalf("hover: %q", got)
		}
		box := p.ref("textbox", "Enter box")
		p.mustAct(engine.Action{Kind: engine.ActFill, Ref: box, Value: "42"})
		p.mustAct(engine.Action{Kind: engine.ActPress, Ref: box, Value: "Enter"})
		if got := p.eval(`document.getElementById('out').textContent`); got != "enter:42" {
			t.Fatalf("press: %q", got)
		}
		p.wantActionError(engine.Action{Kind: engine.ActPress, Value: "Hyperspace"}, engine.CodeInvalid, "unknown key")
	})

	t.Run("dialog", func(t *testing.T) {
		p.t = t
		p.snapshot()
		p.mustAct(engine.Action{Kind: engine.ActClick, Ref: p.ref("button", "Alert me")})
		s := p.snapshot()
		if !strings.Contains(s.Text, "[alert dialog, accepted] Are you sure?") {
			t.Fatalf("dialog not reported:\n%s", s.Text)
		}
		p.ref("button", "alerted")
		if s := p.snapshot(); strings.Contains(s.Text, "Are you sure?") {
			t.Fatal("a dialog is reported once")
		}
	})

	t.Run("shadow iframe far", func(t *testing.T) {
		p.t = t
		p.snapshot()
		p.mustAct(engine.Action{Kind: engine.ActClick, Ref: p.ref("button", "Shadow button")})
		p.mustAct(engine.Action{Kind: engine.ActClick, Ref: p.ref("button", "Frame button")})
		p.mustAct(engine.Action{Kind: engine.ActClick, Ref: p.ref("button", "Far button")})
		p.snapshot()
		for _, want := range []string{"shadow clicked", "frame clicked", "far clicked"} {
			if !strings.Contains(p.snap.Tree, want) {
				t.Errorf("tree misses %q:\n%s", want, p.snap.Tree)
			}
		}
	})

	t.Run("scroll", func(t *testing.T) {
		p.t = t
		p.eval(`window.scrollTo(0, 0), ''`)
		p.mustAct(engine.Action{Kind: engine.ActScroll, Value: "down"})
		if y := p.eval(`String(window.scrollY)`); y == "0" {
			t.Fatal("scroll down did not move")
		}
		p.mustAct(engine.Action{Kind: engine.ActScroll, Value: "up"})
		p.mustAct(engine.Action{Kind: engine.ActScroll, Ref: p.ref("button", "far clicked")})
		if y := p.eval(`String(window.scrollY)`); y == "0" {
			t.Fatal("scroll to a ref did not move")
		}
	})

	t.Run("refs", func(t *testing.T) {
		p.t = t
		p.wantActionError(engine.Action{Kind: engine.ActClick, Ref: "e99999999"}, engine.CodeNotFound, "no element has ref e99999999")
		p.wantActionError(engine.Action{Kind: engine.ActClick, Ref: "button"}, engine.CodeInvalid, "not a snapshot ref")
	})

	t.Run("navigation stale back wait", func(t *testing.T) {
		p.t = t
		p.snapshot()
		old := p.ref("button", "Go")
		p.mustAct(engine.Action{Kind: engine.ActClick, Ref: p.ref("link", "Next page")})
		if s := p.snapshot(); s.Title != "Next" || s.URL != ts.URL+"/next" {
			t.Fatalf("after the link: %q %q", s.Title, s.URL)
		}
		p.wantActionError(engine.Action{Kind: engine.ActClick, Ref: old}, engine.CodeStaleRef, "stale ref "+old)
		p.mustAct(engine.Action{Kind: engine.ActClick, Ref: p.ref("button", "Later")})
		p.mustAct(engine.Action{Kind: engine.ActWait, Value: "Appeared later", Millis: 3000})
		p.wantActionError(engine.Action{Kind: engine.ActWait, Value: "Never there", Millis: 200}, engine.CodeTimeout, `waiting for the text "Never there"`)
		p.mustAct(engine.Action{Kind: engine.ActBack})
		if s := p.snapshot(); s.Title != "Shop" {
			t.Fatalf("after back: %q", s.Title)
		}
	})

	t.Run("navigate errors and screenshot", func(t *testing.T) {
		p.t = t
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		err = b.Navigate(ctx, "http://"+addr+"/")
		if ae, ok := engine.AsActionError(err); !ok || ae.Code != engine.CodeNavigation || !strings.Contains(ae.Message, "ERR_CONNECTION_REFUSED") {
			t.Fatalf("navigate to a closed port: %v", err)
		}
		if err := b.Navigate(ctx, ts.URL+"/next"); err != nil {
			t.Fatal(err)
		}
		png, err := b.Screenshot(ctx)
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
			t.Fatalf("screenshot: %d bytes, %v", len(png), err)
		}
	})
}

func TestPluginChromedpSnapshotBound(t *testing.T) {
	b := open(t)
	ts := server(t)
	if err := b.Navigate(context.Background(), ts.URL+"/"); err != nil {
		t.Fatal(err)
	}
	b.SetSnapshotBounds(300, 40)
	s, err := b.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !s.Truncated || len(s.Tree) > 300+len("- … (truncated)\n") || len(s.Text) > 40 {
		t.Fatalf("bounds not applied: truncated=%v tree=%d text=%d", s.Truncated, len(s.Tree), len(s.Text))
	}
	if len(s.Elements) < 9 {
		t.Fatalf("elements should stay complete: %d", len(s.Elements))
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// listHTML is a list that grows as it is scrolled to its end, under a
// veil that lifts once the list has loaded (the shape of a slow infinite
// list).
const listHTML = `<!doctype html><html><head><title>List</title>
<style>
body { margin: 0; padding: 0 2em; }
.hero { height: 150px; }
a { display: block; height: 70px; margin: 0 0 10px; border: 1px solid #ccd; }
footer { height: 350px; }
#veil { position: fixed; inset: 0; background: rgba(255,255,255,0.7); }
#veil[hidden] { display: none; }
</style></head><body>
<div class="hero">List</div><p id="status">loading</p><div id="rows"></div><footer>End</footer><div id="veil"></div>
<script>
let n = 0, lastY = -1;
function more() {
  for (let k = 0; k < 6; k++) {
    const a = document.createElement('a');
    a.href = '#'; a.textContent = 'Row ' + (++n);
    a.onclick = e => { e.preventDefault(); document.title = 'clicked ' + a.textContent };
    document.getElementById('rows').append(a);
  }
  const veil = document.getElementById('veil'), status = document.getElementById('status');
  veil.hidden = false; status.textContent = 'loading';
  setTimeout(() => { veil.hidden = true; status.textContent = 'ready' }, 200);
}
more();
window.addEventListener('scroll', () => {
  if (scrollY > lastY && innerHeight + scrollY >= document.documentElement.scrollHeight - 20) { lastY = scrollY; more() }
});
</script></body></html>`

// TestPluginChromedpClickScrolled clicks an element in view on a list an
// earlier action scrolled (so the click needs no scroll into view): the
// hit test must find the element under the mouse, not one a scroll's
// height above it.
func TestPluginChromedpClickScrolled(t *testing.T) {
	b := open(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, listHTML)
	}))
	t.Cleanup(ts.Close)
	if err := b.Navigate(context.Background(), ts.URL); err != nil {
		t.Fatal(err)
	}
	p := &tab{t: t, b: b}
	p.mustAct(engine.Action{Kind: engine.ActScroll, Value: "down"})
	p.mustAct(engine.Action{Kind: engine.ActWait, Value: "ready"})
	p.snapshot()
	p.mustAct(engine.Action{Kind: engine.ActClick, Ref: p.ref("link", "Row 9")})
	if got := p.eval(`document.title`); got != "clicked Row 9" {
		t.Fatalf("title %q after clicking Row 9", got)
	}
}

// TestPluginChromedpScrollLoadsMore scrolls a list that grows on its
// scroll event: when the scroll returns, the page has had the event and
// grown, every time (the event comes with a frame, which a page that
// changes nothing may not get for a long time).
func TestPluginChromedpScrollLoadsMore(t *testing.T) {
	b := open(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, listHTML)
	}))
	t.Cleanup(ts.Close)
	p := &tab{t: t, b: b}
	for load := 0; load < 3; load++ {
		if err := b.Navigate(context.Background(), ts.URL); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 3; i++ {
			p.mustAct(engine.Action{Kind: engine.ActScroll, Value: "down"})
			if got, want := p.eval(`String(document.querySelectorAll('#rows a').length)`), fmt.Sprint(6*(i+1)); got != want {
				t.Fatalf("load %d, after scroll %d: %s rows, want %s", load, i, got, want)
			}
		}
	}
}
