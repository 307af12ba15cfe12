// Package static is the second browser backend: it fetches pages over HTTP
// and parses their HTML, with no browser and no JavaScript. It suits static
// sites, server-rendered forms and tests; it starts in milliseconds.
//
// It supports navigate, snapshot, click (links, submit buttons, checkboxes,
// radios), fill, type, press (Enter submits), select, hover and scroll (no
// ops), wait, and back. Declarative shadow DOM (<template shadowrootmode>)
// and same-origin iframes are included in snapshots. It cannot take
// screenshots, run scripts, or know that an element is covered.
//
// Refs are "e" + a number that is never reused across documents, so a ref
// from an earlier page gives a stale_ref error.
package static

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/plugins/shared"
)

// Version is the static backend's version.
const Version = "1.0.0"

// maxPageBytes bounds the page (or frame) the static browser reads.
const maxPageBytes = 8 << 20

// request is one history entry: how to load the page again.
type request struct {
	method, url, body string
}

// Browser is a page held as parsed HTML.
type Browser struct {
	mu       sync.Mutex
	client   *http.Client
	bounds   shared.Bounds // of a snapshot
	opened   bool
	history  []request
	doc      *html.Node
	url      *url.URL
	title    string
	nextID   int
	ids      map[*html.Node]int
	nodes    map[int]*html.Node
	firstID  int // the first id of the current document; lower ids are stale
	frameFor map[*html.Node]*html.Node
}

// New returns an unopened static browser.
func New() *Browser {
	return &Browser{bounds: shared.DefaultBounds(), nextID: 1}
}

// Describe implements shared.Browser.
func (b *Browser) Describe() shared.Info {
	return shared.Info{
		Name:    "static",
		Version: Version,
		Kind:    shared.KindBrowser,
		Capabilities: []string{"navigate", "snapshot", "click", "fill", "type", "press", "select", "hover", "scroll",
			"wait", "back", "shadow-dom", "iframes"},
		ProtocolVersion: shared.ProtocolVersion,
		Description:     "HTTP + HTML parsing, no browser and no JavaScript (static sites, forms, tests)",
	}
}

// SetSnapshotBounds implements shared.SnapshotBounds.
func (b *Browser) SetSnapshotBounds(maxTree, maxText int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bounds.Set(maxTree, maxText)
}

// Open implements shared.Browser.
func (b *Browser) Open(_ context.Context, o map[string]string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	jar, _ := cookiejar.New(nil)
	timeout := 30 * time.Second
	if v := o["nav_timeout"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("static: nav_timeout: %w", err)
		}
		timeout = d
	}
	if err := b.bounds.Open(o, "static"); err != nil {
		return err
	}
	// file:// URLs read local files, handy for saved pages and demos.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.RegisterProtocol("file", http.NewFileTransport(http.Dir("/")))
	b.client = &http.Client{Jar: jar, Timeout: timeout, Transport: tr}
	b.opened = true
	return nil
}

// Close implements engine.Browser.
func (b *Browser) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opened = false
	return nil
}

// Screenshot implements engine.Browser: the static backend renders nothing.
func (b *Browser) Screenshot(context.Context) ([]byte, error) {
	return nil, errors.New("static: screenshots need a rendering browser; use --browser chromedp")
}

func (b *Browser) check() error {
	if !b.opened {
		return errors.New("static: browser is not open")
	}
	return nil
}

// Navigate implements engine.Browser.
func (b *Browser) Navigate(ctx context.Context, rawURL string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.check(); err != nil {
		return err
	}
	return b.load(ctx, request{method: http.MethodGet, url: rawURL}, true)
}

// fetch gets a document.
func (b *Browser) fetch(ctx context.Context, r request) (*html.Node, *url.URL, error) {
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, body)
	if err != nil {
		return nil, nil, &engine.ActionError{Code: engine.CodeNavigation, Message: fmt.Sprintf("cannot load %s: %v", r.url, err)}
	}
	if r.body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("User-Agent", "engine-static/"+Version)
	resp, err := b.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) && ue.Timeout() {
			return nil, nil, &engine.ActionError{Code: engine.CodeTimeout, Message: fmt.Sprintf("page %s did not load in time", r.url)}
		}
		return nil, nil, &engine.ActionError{Code: engine.CodeNavigation, Message: fmt.Sprintf("cannot load %s: %v", r.url, errors.Unwrap(err))}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes))
	if err != nil {
		return nil, nil, &engine.ActionError{Code: engine.CodeNavigation, Message: fmt.Sprintf("cannot load %s: %v", r.url, err)}
	}
	doc, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, nil, &engine.ActionError{Code: engine.CodeNavigation, Message: fmt.Sprintf("cannot parse %s: %v", r.url, err)}
	}
	return doc, resp.Request.URL, nil
}

// load makes r the current page: fetch, parse, number the elements.
func (b *Browser) load(ctx context.Context, r request, push bool) error {
	doc, u, err := b.fetch(ctx, r)
	if err != nil {
		return err
	}
	b.doc, b.url = doc, u
	b.ids, b.nodes, b.frameFor = map[*html.Node]int{}, map[int]*html.Node{}, map[*html.Node]*html.Node{}
	b.firstID = b.nextID
	b.number(ctx, doc, u, 0)
	b.title = ""
	if t := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Title }); t != nil {
		b.title = collapse(textOf(t))
	}
	if push {
		r.url = u.String()
		if r.method == http.MethodPost {
			// Reloading a POST result is a GET of where it ended up.
			r = request{method: http.MethodGet, url: u.String()}
		}
		b.history = append(b.history, r)
	}
	return nil
}

// number gives every element of a document (and of its same-origin
// iframes, loaded here) an id.
func (b *Browser) number(ctx context.Context, n *html.Node, base *url.URL, depth int) {
	if n.Type == html.ElementNode {
		b.ids[n] = b.nextID
		b.nodes[b.nextID] = n
		b.nextID++
		if n.DataAtom == atom.Iframe && depth < 2 {
			if src := attr(n, "src"); src != "" {
				if u, err := base.Parse(src); err == nil && u.Host == base.Host && u.Scheme == base.Scheme {
					if doc, fu, err := b.fetch(ctx, request{method: http.MethodGet, url: u.String()}); err == nil {
						b.frameFor[n] = doc
						b.number(ctx, doc, fu, depth+1)
					}
				}
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.number(ctx, c, base, depth)
	}
}

// ---------------------------------------------------------------- helpers

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

func setAttr(n *html.Node, key, val string) {
	for i, a := range n.Attr {
		if a.Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

func delAttr(n *html.Node, key string) {
	out := n.Attr[:0]
	for _, a := range n.Attr {
		if a.Key != key {
			out = append(out, a)
		}
	}
	n.Attr = out
}

func find(n *html.Node, f func(*html.Node) bool) *html.Node {
	if f(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if r := find(c, f); r != nil {
			return r
		}
	}
	return nil
}

func findAll(n *html.Node, f func(*html.Node) bool, out *[]*html.Node) {
	if f(n) {
		*out = append(*out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		findAll(c, f, out)
	}
}

func textOf(n *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
			sb.WriteByte(' ')
		}
		// A textarea's content is its value, not text (a secret one must
		// not reach a form's or a label's name).
		if n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style || n.DataAtom == atom.Textarea) {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return sb.String()
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// hidden reports whether an element is not rendered.
func hidden(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Head, atom.Noscript, atom.Title, atom.Meta, atom.Link:
		return true
	case atom.Template:
		return attr(n, "shadowrootmode") == "" && attr(n, "shadowroot") == ""
	case atom.Input:
		if strings.EqualFold(attr(n, "type"), "hidden") {
			return true
		}
	}
	if hasAttr(n, "hidden") || attr(n, "aria-hidden") == "true" {
		return true
	}
	style := strings.ReplaceAll(strings.ToLower(attr(n, "style")), " ", "")
	return strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden")
}

func inputType(n *html.Node) string {
	t := strings.ToLower(attr(n, "type"))
	if t == "" {
		return "text"
	}
	return t
}

// role is the element's ARIA role ("" for none) and whether a user can act
// on it.
func role(n *html.Node) (string, bool) {
	if r := attr(n, "role"); r != "" {
		r = strings.Fields(r)[0]
		switch r {
		case "button", "link", "textbox", "searchbox", "checkbox", "radio", "combobox", "listbox", "option",
			"menuitem", "menuitemcheckbox", "menuitemradio", "tab", "switch", "slider", "spinbutton", "treeitem":
			return r, true
		}
		return r, false
	}
	switch n.DataAtom {
	case atom.A:
		if hasAttr(n, "href") {
			return "link", true
		}
	case atom.Button:
		return "button", true
	case atom.Input:
		switch inputType(n) {
		case "submit", "button", "reset", "image":
			return "button", true
		case "checkbox":
			return "checkbox", true
		case "radio":
			return "radio", true
		case "search":
			return "searchbox", true
		case "range":
			return "slider", true
		case "number":
			return "spinbutton", true
		case "file", "color", "date", "datetime-local", "month", "time", "week":
			return "textbox", true
		default:
			return "textbox", true
		}
	case atom.Textarea:
		return "textbox", true
	case atom.Select:
		if hasAttr(n, "multiple") {
			return "listbox", true
		}
		return "combobox", true
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return "heading", false
	case atom.Img:
		if attr(n, "alt") != "" {
			return "img", false
		}
	case atom.Nav:
		return "navigation", false
	case atom.Main:
		return "main", false
	case atom.Form:
		return "form", false
	case atom.Ul, atom.Ol:
		return "list", false
	case atom.Li:
		return "listitem", false
	case atom.Table:
		return "table", false
	case atom.Iframe:
		return "Iframe", false
	case atom.Dialog:
		return "dialog", false
	}
	return "", false
}

// name is the element's accessible name.
func (b *Browser) name(n *html.Node) string {
	if v := attr(n, "aria-label"); v != "" {
		return collapse(v)
	}
	if ids := attr(n, "aria-labelledby"); ids != "" {
		var parts []string
		for _, id := range strings.Fields(ids) {
			if l := find(b.root(n), func(x *html.Node) bool { return x.Type == html.ElementNode && attr(x, "id") == id }); l != nil {
				parts = append(parts, collapse(textOf(l)))
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, " ")
		}
	}
	switch n.DataAtom {
	case atom.Input, atom.Textarea, atom.Select:
		t := inputType(n)
		if n.DataAtom == atom.Input && (t == "submit" || t == "button" || t == "reset") {
			if v := attr(n, "value"); v != "" {
				return v
			}
			if t == "submit" {
				return "Submit"
			}
		}
		if id := attr(n, "id"); id != "" {
			if l := find(b.root(n), func(x *html.Node) bool { return x.DataAtom == atom.Label && attr(x, "for") == id }); l != nil {
				return collapse(textOf(l))
			}
		}
		for p := n.Parent; p != nil; p = p.Parent {
			if p.DataAtom == atom.Label {
				return collapse(textOf(p))
			}
		}
		if v := attr(n, "placeholder"); v != "" {
			return v
		}
		return attr(n, "title")
	case atom.Img:
		return attr(n, "alt")
	}
	if t := collapse(textOf(n)); t != "" {
		return t
	}
	if img := find(n, func(x *html.Node) bool { return x.DataAtom == atom.Img && attr(x, "alt") != "" }); img != nil {
		return attr(img, "alt")
	}
	return attr(n, "title")
}

func (b *Browser) root(n *html.Node) *html.Node {
	for n.Parent != nil {
		n = n.Parent
	}
	return n
}

// value is the element's current value, as a form would submit it.
func value(n *html.Node) string {
	switch n.DataAtom {
	case atom.Textarea:
		var sb strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				sb.WriteString(c.Data)
			}
		}
		return strings.TrimPrefix(sb.String(), "\n")
	case atom.Select:
		opts := options(n)
		for _, o := range opts {
			if hasAttr(o, "selected") {
				return optionValue(o)
			}
		}
		if len(opts) > 0 {
			return optionValue(opts[0])
		}
		return ""
	}
	return attr(n, "value")
}

func options(sel *html.Node) []*html.Node {
	var out []*html.Node
	findAll(sel, func(x *html.Node) bool { return x.DataAtom == atom.Option }, &out)
	return out
}

func optionValue(o *html.Node) string {
	if hasAttr(o, "value") {
		return attr(o, "value")
	}
	return collapse(textOf(o))
}

func optionLabel(o *html.Node) string {
	if v := attr(o, "label"); v != "" {
		return v
	}
	return collapse(textOf(o))
}

func disabled(n *html.Node) bool {
	if hasAttr(n, "disabled") || attr(n, "aria-disabled") == "true" {
		return true
	}
	for p := n.Parent; p != nil; p = p.Parent {
		if p.DataAtom == atom.Fieldset && hasAttr(p, "disabled") {
			return true
		}
	}
	return false
}
