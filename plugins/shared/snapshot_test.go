package shared

import (
	"reflect"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

// The snapshot text every Go browser plugin writes: a node line with its
// element's ref, value and states, text lines, and bounds that drop what
// does not fit and say so.
func TestSnapshotWriter(t *testing.T) {
	w := NewSnapshotWriter(Bounds{Tree: 1000, Text: 1000})
	w.Node(0, "form", "Search", nil)
	el := &engine.Element{Ref: "e3", Role: "searchbox", Name: "Query", Value: "padel", States: []string{"required"}}
	w.Node(1, "searchbox", "Query", el)
	w.Node(1, "button", "", &engine.Element{Ref: "e4", Role: "button"})
	w.Line(1, "- text "+Quote("Results"))
	w.Text("  Results \n for   padel ")
	w.Text(" ")
	w.Text("2 items")
	s := w.Snapshot("https://shop.example/", "Shop")
	want := &engine.Snapshot{URL: "https://shop.example/", Title: "Shop",
		Elements: []engine.Element{*el, {Ref: "e4", Role: "button"}},
		Tree:     "- form \"Search\"\n  - searchbox \"Query\" [ref=e3] value=\"padel\" [required]\n  - button [ref=e4]\n  - text \"Results\"\n",
		Text:     "Results for padel\n2 items"}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("snapshot\n%+v\nwant\n%+v", s, want)
	}

	w = NewSnapshotWriter(Bounds{Tree: 12, Text: 5})
	w.Line(0, "- a")    // 4 bytes
	w.Line(1, "- b")    // 6 more: 10
	w.Line(0, "- long") // would pass 12
	w.Line(0, "- c")    // 14: dropped as well
	w.Text("abcde")     // 5 bytes and a newline would pass 5
	w.Text("ab")
	s = w.Snapshot("u", "")
	if s.Tree != "- a\n  - b\n- … (truncated)\n" || s.Text != "ab" || !s.Truncated {
		t.Fatalf("bounded: %q %q %v", s.Tree, s.Text, s.Truncated)
	}
	if q := Quote(strings.Repeat("x", 250)); q != `"`+strings.Repeat("x", 197)+`..."` {
		t.Fatalf("Quote clips to %d bytes: %s", len(q), q)
	}
}

// A browser's bounds start at the defaults; open options and a snapshot
// request's positive bounds replace them.
func TestBounds(t *testing.T) {
	b := DefaultBounds()
	if b != (Bounds{Tree: 64 << 10, Text: 16 << 10}) {
		t.Fatalf("defaults %+v", b)
	}
	if err := b.Open(map[string]string{"max_tree_bytes": "300"}, "static"); err != nil || b != (Bounds{Tree: 300, Text: 16 << 10}) {
		t.Fatalf("open: %+v %v", b, err)
	}
	if err := b.Open(map[string]string{"max_text_bytes": "0"}, "static"); err == nil || err.Error() != `static: max_text_bytes: "0" is not a positive number` {
		t.Fatalf("open with 0: %v", err)
	}
	b.Set(0, 40)
	if b != (Bounds{Tree: 300, Text: 40}) {
		t.Fatalf("set: %+v", b)
	}
}
