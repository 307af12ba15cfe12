package agent

import (
	"fmt"
	"hash/fnv"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/fingerprint"
)

// Page is the interpretation of one snapshot, as the step message shows it.
type Page struct {
	URL, Title string
	Type       string // search, search_results, form, login, article, listing, page
	Summary    string
	Elements   []engine.Element
	Text       string
	// Fingerprint changes when the page does (URL, tree); the repeated-
	// action guardrail compares it.
	Fingerprint uint64
	// structure is the page's structural fingerprint (engine/memory/fingerprint),
	// computed on first use by checked.
	structure string
}

// checked is what an action on the element with ref ("" or a ref the page
// does not list: no element) is checked against on this page: its path
// (normalised as selector scopes are), the element's and the page's
// structural fingerprints.
func (p *Page) checked(ref string) engine.Checked {
	if p.structure == "" {
		p.structure = fingerprint.Page(p.Elements)
	}
	c := engine.Checked{Page: p.structure}
	if u, err := url.Parse(p.URL); err == nil && u.Host != "" {
		c.Path = domain.PathScope(u.EscapedPath())
	}
	if ref != "" {
		for i, e := range p.Elements {
			if e.Ref == ref {
				c.Fingerprint = fingerprint.Element(p.Elements, i)
				break
			}
		}
	}
	return c
}

// loginFieldRe matches the name of a login's secret field.
var loginFieldRe = regexp.MustCompile(`(?i)\b(password|passwd|passcode|passphrase|pin)\b`)

// maxTextChars bounds the visible text shown in a step message.
const maxTextChars = 1500

// maxElements bounds the clickable elements listed in a step message.
const maxElements = 60

// Interpret reads a snapshot as the step message needs it: URL, title, a
// page type, a short summary, the clickable elements and the visible text.
func Interpret(s *engine.Snapshot) Page {
	p := Page{URL: s.URL, Title: s.Title, Elements: s.Elements, Text: s.Text}
	h := fnv.New64a()
	h.Write([]byte(s.URL))
	h.Write([]byte{0})
	h.Write([]byte(s.Tree))
	p.Fingerprint = h.Sum64()

	count := map[string]int{}
	for _, e := range s.Elements {
		count[e.Role]++
	}
	search := count["searchbox"] > 0 || count["combobox"] > 0
	for _, e := range s.Elements {
		if strings.Contains(strings.ToLower(e.Name), "search") && (e.Role == "textbox" || e.Role == "button") {
			search = true
		}
	}
	// A login page has a password field, not the word: a help page about
	// resetting passwords is no login.
	password := false
	for _, e := range s.Elements {
		if (e.Role == "textbox" || slices.Contains(e.States, engine.StateSecret)) && loginFieldRe.MatchString(e.Name) {
			password = true
		}
	}
	u, _ := url.Parse(s.URL)
	query := u != nil && u.RawQuery != ""
	searched := false
	if u != nil {
		q := u.Query()
		searched = q.Get("q") != "" || q.Get("query") != "" || q.Get("search") != "" || q.Get("k") != "" ||
			(query && strings.Contains(strings.ToLower(u.Path), "search"))
	}
	switch {
	case password:
		p.Type = "login"
	case (searched || search && query) && count["link"] >= 1:
		p.Type = "search_results"
	case search:
		p.Type = "search"
	case count["textbox"]+count["checkbox"]+count["radio"] >= 3:
		p.Type = "form"
	case count["link"] >= 10:
		p.Type = "listing"
	case len(s.Text) > 800:
		p.Type = "article"
	default:
		p.Type = "page"
	}
	var parts []string
	for _, r := range []string{"link", "button", "textbox", "searchbox", "combobox", "checkbox"} {
		if n := count[r]; n > 0 {
			parts = append(parts, plural(n, r))
		}
	}
	title := s.Title
	if title == "" {
		title = "(untitled)"
	}
	kind := strings.ReplaceAll(p.Type, "_", " ") + " page"
	if p.Type == "page" {
		kind = "page"
	}
	p.Summary = fmt.Sprintf("%q, a %s", title, kind)
	if len(parts) > 0 {
		p.Summary += " with " + strings.Join(parts, ", ")
	}
	p.Summary += "."
	return p
}

func plural(n int, s string) string {
	if n == 1 {
		return "1 " + s
	}
	if strings.HasSuffix(s, "x") {
		return fmt.Sprintf("%d %ses", n, s)
	}
	return fmt.Sprintf("%d %ss", n, s)
}

// Find resolves a ref or an element name against the page, for an action
// of kind. A name matches an element's accessible name case-insensitively;
// "ROLE NAME" also pins the role. Exact matches win over prefix matches;
// among equals, an element the action suits wins (a button or link for a
// click, a text field for fill or type), then document order.
func (p *Page) Find(kind engine.ActionKind, ref, name string) (engine.Element, bool) {
	if ref != "" {
		for _, e := range p.Elements {
			if e.Ref == ref {
				return e, true
			}
		}
		// A ref from an older snapshot: let the browser say what is wrong.
		return engine.Element{Ref: ref}, true
	}
	return p.find(kind, "", name)
}

// FindByName finds the element with role (any when "") and name.
func (p *Page) FindByName(role, name string) (engine.Element, bool) {
	return p.find("", role, name)
}

var suits = map[engine.ActionKind]map[string]bool{
	engine.ActClick:  {"button": true, "link": true, "checkbox": true, "radio": true, "tab": true, "menuitem": true, "option": true},
	engine.ActFill:   {"textbox": true, "searchbox": true, "combobox": true},
	engine.ActType:   {"textbox": true, "searchbox": true, "combobox": true},
	engine.ActSelect: {"combobox": true, "listbox": true},
}

func (p *Page) find(kind engine.ActionKind, role, name string) (engine.Element, bool) {
	n := strings.ToLower(oneLine(name))
	if n == "" {
		return engine.Element{}, false
	}
	match := func(e engine.Element, exact bool) bool {
		if role != "" && !strings.EqualFold(e.Role, role) {
			return false
		}
		en := oneLine(e.Name) // lowercased, it is compared with n
		if exact {
			return lowerEqual(en, n) || lowerPairEqual(e.Role, en, n) // NAME or "ROLE NAME"
		}
		return en != "" && lowerHasPrefix(en, n)
	}
	for _, exact := range []bool{true, false} {
		found, best := false, engine.Element{}
		for _, e := range p.Elements {
			if !match(e, exact) {
				continue
			}
			if suits[kind][e.Role] {
				return e, true
			}
			if !found {
				found, best = true, e
			}
		}
		if found {
			return best, true
		}
	}
	return engine.Element{}, false
}

// SelectorOf is the selector the engine records for an element: its role
// and accessible name, which survive re-renders where refs do not.
func SelectorOf(role, name string) string {
	return fmt.Sprintf("role=%s[name=%q]", role, name)
}

// parseSelector reads a selector written by SelectorOf.
func parseSelector(sel string) (role, name string, ok bool) {
	rest, ok := strings.CutPrefix(sel, "role=")
	if !ok {
		return "", "", false
	}
	i := strings.Index(rest, "[name=")
	if i < 0 || !strings.HasSuffix(rest, "]") {
		return "", "", false
	}
	role = rest[:i]
	var q string
	if _, err := fmt.Sscanf(rest[i+len("[name="):len(rest)-1], "%q", &q); err != nil {
		return "", "", false
	}
	return role, q, true
}

// write renders the page as every step message shows it: URL, title,
// type, summary, the clickable elements (at most maxElements) and the
// visible text (at most maxTextChars).
func (p *Page) write(b *strings.Builder) {
	fmt.Fprintf(b, "Current page:\nURL: %s\nTitle: %s\nType: %s\n\nPage summary:\n%s\n\nClickable elements:\n", p.URL, p.Title, p.Type, p.Summary)
	p.renderElements(b)
	if t := strings.TrimSpace(p.Text); t != "" {
		b.WriteString("\nVisible text:\n" + clip(t, maxTextChars) + "\n")
	}
}

// Render is the page as write renders it, for a model outside the loop
// (an MCP host) shown the same bounded text.
func (p *Page) Render() string {
	var b strings.Builder
	p.write(&b)
	return b.String()
}

// renderElements lists the clickable elements, one per line.
func (p *Page) renderElements(b *strings.Builder) {
	n := 0
	for _, e := range p.Elements {
		if n == maxElements {
			fmt.Fprintf(b, "(%d more not shown)\n", len(p.Elements)-n)
			break
		}
		b.WriteString(e.Ref)
		b.WriteString(": ")
		b.WriteString(e.Role)
		b.WriteString(" - ")
		b.WriteString(oneLine(e.Name))
		if e.Value != "" {
			b.WriteString(" (value ")
			b.WriteString(strconv.Quote(clip(oneLine(e.Value), 60)))
			b.WriteString(")")
		}
		if len(e.States) > 0 {
			b.WriteString(" [")
			for i, st := range e.States {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(st)
			}
			b.WriteString("]")
		}
		b.WriteString("\n")
		n++
	}
	if n == 0 {
		b.WriteString("(none)\n")
	}
}

// oneLine is s with its runs of white space made one space, trimmed.
func oneLine(s string) string {
	if isOneLine(s) {
		return s // the common case, without allocating
	}
	return strings.Join(strings.Fields(s), " ")
}

// isOneLine reports whether s is ASCII already in oneLine's form: no
// white space but single spaces between words.
func isOneLine(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf, c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			return false
		case c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' '):
			return false
		}
	}
	return true
}

// lowerEqual reports whether strings.ToLower(s) == t, without allocating
// for an ASCII s.
func lowerEqual(s, t string) bool {
	if !isASCII(s) {
		return strings.ToLower(s) == t
	}
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lowerASCII(s[i]) != t[i] {
			return false
		}
	}
	return true
}

// lowerHasPrefix reports whether strings.ToLower(s) starts with p, without
// allocating for an ASCII s.
func lowerHasPrefix(s, p string) bool {
	if !isASCII(s) {
		return strings.HasPrefix(strings.ToLower(s), p)
	}
	return len(s) >= len(p) && lowerEqual(s[:len(p)], p)
}

// lowerPairEqual reports whether strings.ToLower(a)+" "+strings.ToLower(b)
// == t, without allocating for an ASCII a and b.
func lowerPairEqual(a, b, t string) bool {
	if !isASCII(a) {
		return strings.ToLower(a)+" "+strings.ToLower(b) == t
	}
	return len(t) > len(a) && t[len(a)] == ' ' && lowerEqual(a, t[:len(a)]) && lowerEqual(b, t[len(a)+1:])
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func clip(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
