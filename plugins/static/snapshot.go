package static

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/trust/redact"
	"github.com/engine-dev/engine/plugins/shared"
)

// renderer walks a page's parsed HTML into a snapshot (shared.SnapshotWriter).
type renderer struct {
	*shared.SnapshotWriter
	b *Browser
}

func states(n *html.Node) []string {
	var out []string
	if disabled(n) {
		out = append(out, "disabled")
	}
	if n.DataAtom == atom.Input {
		switch inputType(n) {
		case "checkbox", "radio":
			if hasAttr(n, "checked") {
				out = append(out, "checked")
			}
		}
	}
	if hasAttr(n, "required") {
		out = append(out, "required")
	}
	if hasAttr(n, "readonly") {
		out = append(out, "readonly")
	}
	if v := attr(n, "aria-expanded"); v == "true" {
		out = append(out, "expanded")
	} else if v == "false" {
		out = append(out, "collapsed")
	}
	if attr(n, "aria-pressed") == "true" {
		out = append(out, "pressed")
	}
	if attr(n, "aria-checked") == "true" {
		out = append(out, "checked")
	}
	if attr(n, "aria-selected") == "true" {
		out = append(out, "selected")
	}
	return out
}

// walk renders n's subtree; inLabel is set inside an element whose name is
// its text, so that text is not repeated as text lines.
func (r *renderer) walk(n *html.Node, depth int, inNamed bool) {
	switch n.Type {
	case html.TextNode:
		t := collapse(n.Data)
		if t == "" {
			return
		}
		r.Text(t)
		if !inNamed {
			r.Line(depth, "- text "+shared.Quote(t))
		}
		return
	case html.DocumentNode:
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			r.walk(c, depth, inNamed)
		}
		return
	case html.ElementNode:
	default:
		return
	}
	if hidden(n) {
		return
	}
	rl, actionable := role(n)
	if n.DataAtom == atom.Input && inputType(n) == "hidden" {
		return
	}
	childDepth := depth
	named := inNamed
	if rl != "" {
		name := r.b.name(n)
		var el *engine.Element
		if actionable {
			el = &engine.Element{Ref: fmt.Sprintf("e%d", r.b.ids[n]), Role: rl, Name: name, States: states(n)}
			if n.DataAtom == atom.Input || n.DataAtom == atom.Textarea || n.DataAtom == atom.Select {
				switch inputType(n) {
				case "checkbox", "radio", "submit", "button", "reset", "image":
				default:
					if n.DataAtom == atom.Select {
						for _, o := range options(n) {
							if optionValue(o) == value(n) {
								el.Value = optionLabel(o)
								break
							}
						}
					} else {
						el.Value = value(n)
					}
				}
			}
			if r.b.secret(n) {
				// Never reported: the state says it is there, and filled.
				if el.Value != "" {
					el.States = append(el.States, stateFilled)
				}
				el.Value = ""
				el.States = append(el.States, engine.StateSecret)
			}
		}
		r.Node(depth, rl, name, el)
		childDepth = depth + 1
		named = named || (name != "" && rl != "Iframe" && rl != "form" && rl != "list" && rl != "navigation" && rl != "main" && rl != "table" && rl != "dialog")
	}
	if n.DataAtom == atom.Select || n.DataAtom == atom.Textarea {
		if n.DataAtom == atom.Select {
			for _, o := range options(n) {
				st := ""
				if hasAttr(o, "selected") {
					st = " [selected]"
				}
				if hasAttr(o, "disabled") {
					st += " [disabled]"
				}
				r.Line(childDepth, "- option "+shared.Quote(optionLabel(o))+st)
			}
		}
		return
	}
	if doc, ok := r.b.frameFor[n]; ok {
		r.walk(doc, childDepth, false)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		r.walk(c, childDepth, named)
	}
}

// stateFilled marks a secret field that holds a value (never shown).
const stateFilled = "filled"

// secret reports whether n is a secret field (redact.SecretField on its
// type, autocomplete, name, id, label, aria-label and placeholder): its
// value is never reported.
func (b *Browser) secret(n *html.Node) bool {
	if n.DataAtom != atom.Input && n.DataAtom != atom.Textarea {
		return false
	}
	t := inputType(n)
	switch t {
	case "checkbox", "radio", "submit", "button", "reset", "image", "hidden", "file", "range", "color":
		return false
	}
	words := strings.Join([]string{attr(n, "name"), attr(n, "id"), attr(n, "aria-label"), attr(n, "placeholder"), b.name(n)}, " ")
	return redact.SecretField(t, attr(n, "autocomplete"), words)
}

// Snapshot implements engine.Browser.
func (b *Browser) Snapshot(context.Context) (*engine.Snapshot, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(); err != nil {
		return nil, err
	}
	if b.doc == nil {
		return &engine.Snapshot{URL: "about:blank"}, nil
	}
	r := &renderer{SnapshotWriter: shared.NewSnapshotWriter(b.bounds), b: b}
	body := find(b.doc, func(n *html.Node) bool { return n.DataAtom == atom.Body })
	if body == nil {
		body = b.doc
	}
	r.walk(body, 0, false)
	return r.Snapshot(b.url.String(), b.title), nil
}
