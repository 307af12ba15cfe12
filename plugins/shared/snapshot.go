package shared

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/engine-dev/engine/engine"
)

// Bounds are a browser plugin's bounds on a snapshot, in bytes: its tree
// text's and its visible text's.
type Bounds struct{ Tree, Text int }

// DefaultBounds are a browser plugin's snapshot bounds until the host's
// open options or a snapshot request set others.
func DefaultBounds() Bounds { return Bounds{Tree: 64 << 10, Text: 16 << 10} }

// Set applies a snapshot request's bounds (SnapshotBounds): a positive
// one replaces its bound, another leaves it.
func (b *Bounds) Set(maxTree, maxText int) {
	if maxTree > 0 {
		b.Tree = maxTree
	}
	if maxText > 0 {
		b.Text = maxText
	}
}

// Open applies the open options max_tree_bytes and max_text_bytes; a
// value that is not a positive number is an error that names plugin.
func (b *Bounds) Open(o map[string]string, plugin string) error {
	for key, dst := range map[string]*int{"max_tree_bytes": &b.Tree, "max_text_bytes": &b.Text} {
		if v := o[key]; v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("%s: %s: %q is not a positive number", plugin, key, v)
			}
			*dst = n
		}
	}
	return nil
}

// SnapshotWriter writes a snapshot the way every browser plugin written in
// Go does, whatever it walks (chromium's accessibility tree, parsed HTML):
// the tree text, one line a node ("- role \"name\" [ref=e3] value=\"…\"
// [state]"), indented two spaces a level; the visible text, one line a
// piece with its white space collapsed; and the actionable elements. Each
// text is bounded in bytes: what does not fit is dropped and the snapshot
// marked truncated.
type SnapshotWriter struct {
	maxTree, maxText int
	tree, text       strings.Builder
	elements         []engine.Element
	truncated        bool
}

// NewSnapshotWriter returns a writer whose tree text and visible text stay
// within b.
func NewSnapshotWriter(b Bounds) *SnapshotWriter {
	return &SnapshotWriter{maxTree: b.Tree, maxText: b.Text}
}

// Line writes s as a line of the tree at depth.
func (w *SnapshotWriter) Line(depth int, s string) {
	if w.tree.Len()+len(s)+2*depth+1 > w.maxTree {
		w.truncated = true
		return
	}
	w.tree.WriteString(strings.Repeat("  ", depth))
	w.tree.WriteString(s)
	w.tree.WriteByte('\n')
}

// Text adds s, its white space collapsed, to the visible text.
func (w *SnapshotWriter) Text(s string) {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return
	}
	if w.text.Len()+len(s)+1 > w.maxText {
		w.truncated = true
		return
	}
	if w.text.Len() > 0 {
		w.text.WriteByte('\n')
	}
	w.text.WriteString(s)
}

// Node writes a node's line at depth: its role and name and, when el is
// not nil (an actionable element), el's ref, value and states; el is added
// to the snapshot's elements.
func (w *SnapshotWriter) Node(depth int, role, name string, el *engine.Element) {
	var b strings.Builder
	b.WriteString("- " + role)
	if name != "" {
		b.WriteString(" " + Quote(name))
	}
	if el != nil {
		w.elements = append(w.elements, *el)
		fmt.Fprintf(&b, " [ref=%s]", el.Ref)
		if el.Value != "" {
			b.WriteString(" value=" + Quote(el.Value))
		}
		for _, s := range el.States {
			b.WriteString(" [" + s + "]")
		}
	}
	w.Line(depth, b.String())
}

// Snapshot is what was written, as the snapshot of the page at url: a
// truncated tree ends with a line that says so.
func (w *SnapshotWriter) Snapshot(url, title string) *engine.Snapshot {
	tree := w.tree.String()
	if w.truncated {
		tree += "- … (truncated)\n"
	}
	return &engine.Snapshot{URL: url, Title: title, Elements: w.elements, Tree: tree, Text: w.text.String(), Truncated: w.truncated}
}

// Quote quotes a name or value for the tree text, cut to 200 bytes.
func Quote(s string) string {
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return fmt.Sprintf("%q", s)
}
