package fingerprint

import (
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

func el(role, name string) engine.Element { return engine.Element{Role: role, Name: name} }

// home is the demo shop's home page as a browser reports it; redesign is
// the redesigned one (the search button says "Find", no cookie banner).
func home() []engine.Element {
	return []engine.Element{el("link", "Demo Shop"), el("searchbox", "Search products"), el("button", "Search"), el("button", "Accept cookies")}
}

func redesign() []engine.Element {
	return []engine.Element{el("link", "Demo Shop"), el("searchbox", "Search products"), el("button", "Find")}
}

// results is a results page with a search form before the product list.
func results(products ...string) []engine.Element {
	els := []engine.Element{el("heading", "Demo Shop"), el("searchbox", "Search products"), el("button", "Search")}
	for _, p := range products {
		els = append(els, el("link", p))
	}
	return append(els, el("link", "Home"))
}

func TestSamePageTwice(t *testing.T) {
	a, b := home(), home()
	b[1].Value, b[1].States, b[2].Ref = "padel", []string{"focused"}, "e99" // values, states and refs are noise
	if Page(a) != Page(b) || Element(a, 2) != Element(b, 2) {
		t.Fatalf("same page, other fingerprints: %s/%s vs %s/%s", Page(a), Element(a, 2), Page(b), Element(b, 2))
	}
	if len(Page(a)) != 8 || len(Element(a, 2)) != 8 {
		t.Fatalf("fingerprints are 8 hex digits: %q %q", Page(a), Element(a, 2))
	}
	// Order and repeats do not change the page's.
	c := append([]engine.Element{a[3], a[2], a[1], a[0]}, a[0])
	if Page(c) != Page(a) {
		t.Fatal("the page's fingerprint depends on element order or repeats")
	}
	// Case and spaces in names are not structure.
	d := home()
	d[2].Name, d[2].Role = "  search ", "Button"
	if Element(d, 2) != Element(a, 2) {
		t.Fatal("the element's fingerprint depends on case or spaces")
	}
}

func TestRedesignChangesTheSearchButton(t *testing.T) {
	was := Of("/", home(), Find(home(), "button", "Search"))
	now := redesign()
	if Find(now, "button", "Search") >= 0 {
		t.Fatal("the redesign still has the Search button")
	}
	if Page(now) == was.Page {
		t.Fatal("the redesign kept the page's fingerprint")
	}
	if Element(now, Find(now, "button", "Find")) == was.Fingerprint {
		t.Fatal("the renamed button kept the search button's fingerprint")
	}
	got := Change(was, "/", now, "button", "Search")
	want := "the element is gone from /; the page changed: fingerprint " + was.Page + " → " + Page(now)
	if got != want {
		t.Fatalf("Change = %q, want %q", got, want)
	}
}

func TestChangedProductListKeepsTheButton(t *testing.T) {
	a := results("Padel Racket Pro", "Padel Balls", "Padel Bag")
	b := results("Padel Racket Ultra 4000", "Padel Balls", "Padel Grip", "Padel Shoes")
	i, j := Find(a, "button", "search"), Find(b, "button", "Search")
	if Element(a, i) != Element(b, j) {
		t.Fatal("another product list changed the search button's fingerprint")
	}
	if Page(a) == Page(b) {
		t.Fatal("another product list kept the page's fingerprint")
	}
	was := Of("/search", a, i)
	if got := Change(was, "/search", b, "button", "Search"); !strings.HasPrefix(got, "the page changed: fingerprint "+was.Page+" → ") {
		t.Fatalf("Change = %q", got)
	}
}

func TestElementMoved(t *testing.T) {
	a := results("Padel Racket")
	// The button moved under a dialog, after a checkbox: its neighbours changed.
	b := []engine.Element{el("heading", "Demo Shop"), el("searchbox", "Search products"), el("link", "Padel Racket"),
		el("dialog", "Newsletter"), el("checkbox", "Subscribe"), el("button", "Search"), el("link", "Home")}
	was := Of("/search", a, Find(a, "button", "Search"))
	got := Change(was, "/search", b, "button", "Search")
	if !strings.HasPrefix(got, "the element moved: its surroundings changed (fingerprint "+was.Fingerprint+" → ") {
		t.Fatalf("Change = %q", got)
	}
	// The same heading by another name is another part of the page.
	c := results("Padel Racket")
	c[0].Name = "Sale"
	if Element(c, 2) == Element(a, 2) {
		t.Fatal("the nearest heading is not part of the element's fingerprint")
	}
}

func TestUnknownAndUnchanged(t *testing.T) {
	a := home()
	if got := Change(engine.Checked{}, "/", redesign(), "button", "Find"); got != "" {
		t.Fatalf("nothing recorded, element there: %q", got)
	}
	if got := Change(engine.Checked{}, "", redesign(), "button", "Search"); got != "the element is gone from /" {
		t.Fatalf("nothing recorded, element gone: %q", got)
	}
	if got := Change(Of("/", a, 2), "/", home(), "button", "Search"); got != "" {
		t.Fatalf("unchanged: %q", got)
	}
	if got := Change(Of("/", a, -1), "/", redesign(), "", ""); !strings.HasPrefix(got, "the page changed") {
		t.Fatalf("no element, page changed: %q", got)
	}
	if Element(a, -1) != "" || Element(a, 4) != "" || Page(nil) != "" {
		t.Fatal("out of range or empty is not \"\"")
	}
}

// A 204-element page: its fingerprint and one element's, as an action
// computes them.
func BenchmarkPageAndElement(b *testing.B) {
	els := results(strings.Fields(strings.Repeat("Product ", 200))...)
	for i := range els {
		els[i].Name += string(rune('a' + i%26))
	}
	b.ReportAllocs()
	for b.Loop() {
		Page(els)
		Element(els, 2)
	}
}
