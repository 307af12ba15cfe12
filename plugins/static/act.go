package static

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/engine-dev/engine/engine"
)

func actionErr(code, format string, args ...any) error {
	return &engine.ActionError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// resolve finds the element of a ref in the current document.
func (b *Browser) resolve(ref string) (*html.Node, error) {
	if !strings.HasPrefix(ref, "e") {
		return nil, actionErr(engine.CodeInvalid, "%q is not a snapshot ref (refs look like e37)", ref)
	}
	id, err := strconv.Atoi(ref[1:])
	if err != nil || id <= 0 {
		return nil, actionErr(engine.CodeInvalid, "%q is not a snapshot ref (refs look like e37)", ref)
	}
	if id < b.firstID {
		return nil, actionErr(engine.CodeStaleRef, "stale ref %s: it is from an earlier page (the page changed since that snapshot); take a new snapshot", ref)
	}
	n, ok := b.nodes[id]
	if !ok {
		return nil, actionErr(engine.CodeNotFound, "no element has ref %s (take a snapshot and use one of its refs)", ref)
	}
	return n, nil
}

// Act implements engine.Browser.
func (b *Browser) Act(ctx context.Context, a engine.Action) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(); err != nil {
		return err
	}
	switch a.Kind {
	case engine.ActNavigate:
		if a.Value == "" {
			return actionErr(engine.CodeInvalid, "navigate needs a URL")
		}
		return b.load(ctx, request{method: http.MethodGet, url: a.Value}, true)
	case engine.ActBack:
		if len(b.history) < 2 {
			return actionErr(engine.CodeNavigation, "there is no previous page to go back to")
		}
		b.history = b.history[:len(b.history)-1]
		return b.load(ctx, b.history[len(b.history)-1], false)
	case engine.ActWait:
		return b.wait(ctx, a)
	case engine.ActScroll:
		if a.Ref == "" {
			switch strings.ToLower(a.Value) {
			case "", "up", "down":
				return nil // the whole page is always in view
			}
			return actionErr(engine.CodeInvalid, "scroll direction %q: use up or down, or give a ref to scroll to", a.Value)
		}
	case engine.ActPress:
		if a.Value == "" {
			return actionErr(engine.CodeInvalid, "press needs a key, such as Enter")
		}
		if a.Ref == "" {
			return nil // no focused element to receive it
		}
	case engine.ActClick, engine.ActFill, engine.ActType, engine.ActSelect, engine.ActHover:
		if a.Ref == "" {
			return actionErr(engine.CodeInvalid, "%s needs a ref", a.Kind)
		}
	default:
		return actionErr(engine.CodeInvalid, "unknown action %q", a.Kind)
	}
	if b.doc == nil {
		return actionErr(engine.CodeNotFound, "no page is loaded")
	}
	n, err := b.resolve(a.Ref)
	if err != nil {
		return err
	}
	switch a.Kind {
	case engine.ActClick:
		return b.click(ctx, n)
	case engine.ActFill, engine.ActType:
		return b.fill(n, a.Value, a.Kind == engine.ActFill)
	case engine.ActSelect:
		return b.selectOption(n, a.Value)
	case engine.ActPress:
		if a.Value == "Enter" && n.DataAtom == atom.Input {
			if form := formOf(n); form != nil {
				return b.submit(ctx, form, nil)
			}
		}
		return nil
	}
	return nil // hover, scroll to a ref: nothing to do without rendering
}

func (b *Browser) click(ctx context.Context, n *html.Node) error {
	if disabled(n) {
		return actionErr(engine.CodeNotVisible, "element is disabled")
	}
	// A click lands on the nearest link or control around the element.
	for t := n; t != nil; t = t.Parent {
		switch t.DataAtom {
		case atom.A:
			href := attr(t, "href")
			if href == "" {
				continue
			}
			if strings.HasPrefix(strings.ToLower(href), "javascript:") {
				return actionErr(engine.CodeInvalid, "the link runs JavaScript, which the static backend does not run")
			}
			u, err := b.url.Parse(href)
			if err != nil {
				return actionErr(engine.CodeNavigation, "bad link %q: %v", href, err)
			}
			if u.Fragment != "" && u.Scheme == b.url.Scheme && u.Host == b.url.Host && u.Path == b.url.Path && u.RawQuery == b.url.RawQuery {
				return nil // an in-page anchor
			}
			return b.load(ctx, request{method: http.MethodGet, url: u.String()}, true)
		case atom.Button:
			switch strings.ToLower(attr(t, "type")) {
			case "", "submit":
				if form := formOf(t); form != nil {
					return b.submit(ctx, form, t)
				}
				if hasAttr(t, "onclick") {
					return actionErr(engine.CodeInvalid, "clicking this button runs JavaScript, which the static backend does not run")
				}
				return nil
			case "reset":
				return nil
			}
			return actionErr(engine.CodeInvalid, "clicking this button runs JavaScript, which the static backend does not run")
		case atom.Input:
			switch inputType(t) {
			case "submit", "image":
				if form := formOf(t); form != nil {
					return b.submit(ctx, form, t)
				}
				return nil
			case "checkbox":
				if hasAttr(t, "checked") {
					delAttr(t, "checked")
				} else {
					setAttr(t, "checked", "")
				}
				return nil
			case "radio":
				if form, name := formOf(t), attr(t, "name"); name != "" {
					scope := form
					if scope == nil {
						scope = b.root(t)
					}
					var group []*html.Node
					findAll(scope, func(x *html.Node) bool {
						return x.DataAtom == atom.Input && inputType(x) == "radio" && attr(x, "name") == name
					}, &group)
					for _, g := range group {
						delAttr(g, "checked")
					}
				}
				setAttr(t, "checked", "")
				return nil
			}
			return nil // focusing a text field
		case atom.Label:
			if id := attr(t, "for"); id != "" {
				if c := find(b.root(t), func(x *html.Node) bool { return x.Type == html.ElementNode && attr(x, "id") == id }); c != nil && c != n {
					return b.click(ctx, c)
				}
			}
			var c *html.Node
			if c = find(t, func(x *html.Node) bool {
				return x != t && (x.DataAtom == atom.Input || x.DataAtom == atom.Select || x.DataAtom == atom.Textarea)
			}); c != nil && c != n {
				return b.click(ctx, c)
			}
		case atom.Select, atom.Textarea:
			return nil
		}
	}
	if hasAttr(n, "onclick") || attr(n, "role") != "" {
		return actionErr(engine.CodeInvalid, "clicking this element runs JavaScript, which the static backend does not run")
	}
	return nil
}

func (b *Browser) fill(n *html.Node, text string, replace bool) error {
	switch {
	case n.DataAtom == atom.Textarea:
	case n.DataAtom == atom.Input:
		switch t := inputType(n); t {
		case "checkbox", "radio", "submit", "button", "image", "reset", "file", "hidden", "range", "color":
			return actionErr(engine.CodeNotEditable, "element is not an input that takes text (it is a %s input)", t)
		}
	case n.DataAtom == atom.Select:
		return actionErr(engine.CodeNotEditable, "element is not an input (it is a <select>: use select)")
	default:
		return actionErr(engine.CodeNotEditable, "element is not an input")
	}
	if disabled(n) {
		return actionErr(engine.CodeNotEditable, "element is disabled")
	}
	if hasAttr(n, "readonly") {
		return actionErr(engine.CodeNotEditable, "element is read-only")
	}
	if !replace {
		text = value(n) + text
	}
	if n.DataAtom == atom.Textarea {
		for n.FirstChild != nil {
			n.RemoveChild(n.FirstChild)
		}
		n.AppendChild(&html.Node{Type: html.TextNode, Data: text})
		return nil
	}
	if ml, err := strconv.Atoi(attr(n, "maxlength")); err == nil && ml >= 0 && len([]rune(text)) > ml {
		text = string([]rune(text)[:ml])
	}
	setAttr(n, "value", text)
	return nil
}

func (b *Browser) selectOption(n *html.Node, v string) error {
	if n.DataAtom != atom.Select {
		return actionErr(engine.CodeNotEditable, "element is not a select (click it, then click the option)")
	}
	if disabled(n) {
		return actionErr(engine.CodeNotEditable, "element is disabled")
	}
	opts := options(n)
	var pick *html.Node
	for _, match := range []func(*html.Node) bool{
		func(o *html.Node) bool { return optionValue(o) == v },
		func(o *html.Node) bool { return optionLabel(o) == v },
		func(o *html.Node) bool { return collapse(textOf(o)) == strings.TrimSpace(v) },
	} {
		for _, o := range opts {
			if pick == nil && match(o) {
				pick = o
			}
		}
	}
	if pick == nil {
		labels := make([]string, len(opts))
		for i, o := range opts {
			labels[i] = strconv.Quote(optionLabel(o))
		}
		return actionErr(engine.CodeNoSuchOption, "no option %q (options: %s)", v, strings.Join(labels, ", "))
	}
	if hasAttr(pick, "disabled") {
		return actionErr(engine.CodeNoSuchOption, "option %q is disabled", v)
	}
	if !hasAttr(n, "multiple") {
		for _, o := range opts {
			delAttr(o, "selected")
		}
	}
	setAttr(pick, "selected", "")
	return nil
}

func formOf(n *html.Node) *html.Node {
	if id := attr(n, "form"); id != "" {
		root := n
		for root.Parent != nil {
			root = root.Parent
		}
		return find(root, func(x *html.Node) bool { return x.DataAtom == atom.Form && attr(x, "id") == id })
	}
	for p := n.Parent; p != nil; p = p.Parent {
		if p.DataAtom == atom.Form {
			return p
		}
	}
	return nil
}

// submit sends a form as a browser would (application/x-www-form-urlencoded).
func (b *Browser) submit(ctx context.Context, form, submitter *html.Node) error {
	var vals formValues
	var controls []*html.Node
	findAll(form, func(x *html.Node) bool {
		return x.DataAtom == atom.Input || x.DataAtom == atom.Select || x.DataAtom == atom.Textarea || x.DataAtom == atom.Button
	}, &controls)
	for _, c := range controls {
		name := attr(c, "name")
		if name == "" || disabled(c) {
			continue
		}
		switch c.DataAtom {
		case atom.Button:
			if c == submitter {
				vals.Add(name, attr(c, "value"))
			}
		case atom.Select:
			opts := options(c)
			any := false
			for _, o := range opts {
				if hasAttr(o, "selected") {
					vals.Add(name, optionValue(o))
					any = true
				}
			}
			if !any && len(opts) > 0 && !hasAttr(c, "multiple") {
				vals.Add(name, optionValue(opts[0]))
			}
		case atom.Textarea:
			vals.Add(name, value(c))
		default:
			switch inputType(c) {
			case "checkbox", "radio":
				if hasAttr(c, "checked") {
					v := attr(c, "value")
					if !hasAttr(c, "value") {
						v = "on"
					}
					vals.Add(name, v)
				}
			case "submit", "image":
				if c == submitter {
					vals.Add(name, attr(c, "value"))
				}
			case "button", "reset", "file":
			default:
				vals.Add(name, attr(c, "value"))
			}
		}
	}
	action := attr(form, "action")
	if submitter != nil && attr(submitter, "formaction") != "" {
		action = attr(submitter, "formaction")
	}
	u, err := b.url.Parse(action)
	if err != nil {
		return actionErr(engine.CodeNavigation, "bad form action %q: %v", action, err)
	}
	method := strings.ToUpper(attr(form, "method"))
	if submitter != nil && attr(submitter, "formmethod") != "" {
		method = strings.ToUpper(attr(submitter, "formmethod"))
	}
	if method == http.MethodPost {
		return b.load(ctx, request{method: http.MethodPost, url: u.String(), body: vals.Encode()}, true)
	}
	u.RawQuery = vals.Encode()
	u.Fragment = ""
	return b.load(ctx, request{method: http.MethodGet, url: u.String()}, true)
}

// formValues keeps the controls' order, as browsers send it.
type formValues []string

func (f *formValues) Add(k, v string) {
	*f = append(*f, url.QueryEscape(k)+"="+url.QueryEscape(v))
}

func (f formValues) Encode() string { return strings.Join(f, "&") }

func (b *Browser) wait(ctx context.Context, a engine.Action) error {
	d := time.Duration(a.Millis) * time.Millisecond
	if a.Value != "" {
		// Nothing changes a static page by itself: the text is there or not.
		if b.doc != nil && strings.Contains(collapse(textOf(b.doc)), a.Value) {
			return nil
		}
		if d <= 0 {
			d = 5 * time.Second
		}
	} else if d <= 0 {
		d = time.Second
	}
	if d > time.Minute {
		return actionErr(engine.CodeInvalid, "wait of %v is longer than a minute", d)
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return ctx.Err()
	}
	if a.Value != "" {
		return actionErr(engine.CodeTimeout, "timed out after %v waiting for the text %q", d, a.Value)
	}
	return nil
}
