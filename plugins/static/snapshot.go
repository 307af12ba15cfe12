package static

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/trust/redact"
)

type renderer struct {
	b         *Browser
	tree      strings.Builder
	text      strings.Builder
	elements  []engine.Element
	truncated bool
}

func (r *renderer) line(depth int, s string) {
	if r.tree.Len()+len(s)+2*depth+1 > r.b.maxTree {
		r.truncated = true
		return
	}
	r.tree.WriteString(strings.Repeat("  ", depth))
	r.tree.WriteString(s)
	r.tree.WriteByte('\n')
}

func (r *renderer) addText(s string) {
	s = collapse(s)
	if s == "" {
		return
	}
	if r.text.Len()+len(s)+1 > r.b.maxText {
		r.truncated = true
		return
	}
	if r.text.Len() > 0 {
		r.text.WriteByte('\n')
	}
	r.text.WriteString(s)
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
		r.addText(t)
		if !inNamed {
			r.line(depth, "- text "+quote(t))
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
		var sb strings.Builder
		sb.WriteString("- " + rl)
		if name != "" {
			sb.WriteString(" " + quote(name))
		}
		if actionable {
			ref := fmt.Sprintf("e%d", r.b.ids[n])
			el := engine.Element{Ref: ref, Role: rl, Name: name, States: states(n)}
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
			r.elements = append(r.elements, el)
			fmt.Fprintf(&sb, " [ref=%s]", ref)
			if el.Value != "" {
				sb.WriteString(" value=" + quote(el.Value))
			}
			for _, s := range el.States {
				sb.WriteString(" [" + s + "]")
			}
		}
		r.line(depth, sb.String())
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
				r.line(childDepth, "- option "+quote(optionLabel(o))+st)
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

func quote(s string) string {
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return fmt.Sprintf("%q", s)
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
	r := &renderer{b: b}
	body := find(b.doc, func(n *html.Node) bool { return n.DataAtom == atom.Body })
	if body == nil {
		body = b.doc
	}
	r.walk(body, 0, false)
	tree := r.tree.String()
	if r.truncated {
		tree += "- … (truncated)\n"
	}
	return &engine.Snapshot{URL: b.url.String(), Title: b.title, Elements: r.elements, Tree: tree, Text: r.text.String(), Truncated: r.truncated}, nil
}
