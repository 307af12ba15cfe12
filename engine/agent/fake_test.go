package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/engine-dev/engine/engine"
)

// shop is an in-process fake of the demo site's traps: a cookie banner that
// blocks clicks, a search widget that rejects fill until clicked, an
// autocomplete dropdown over the submit button, a newsletter overlay
// dismissed with Escape.
type shop struct {
	mu         sync.Mutex
	base       string
	page       string // home, results, item
	cookie     bool
	active     bool
	typed      string
	suggest    bool
	newsletter bool
	dead       bool // the browser process died
	// renamed renames the first result (the site changed).
	renamed bool
	// firstName, when set, is the first result's name.
	firstName string
	// coverCookies puts an overlay over the cookie banner's button (the
	// site changed): clicking it fails on the page's side.
	coverCookies bool
	acts         []engine.Action
	// panicOn makes Act panic on this action kind.
	panicOn engine.ActionKind
}

func newShop() *shop { return &shop{base: "http://shop.test", page: "blank", cookie: true} }

func (s *shop) Navigate(ctx context.Context, u string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return errors.New("plugin died")
	}
	if strings.HasPrefix(u, "file:") || strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "chrome-error:") {
		s.page = "url:" + u // a page without a host, shown as it is
		return nil
	}
	if !strings.HasPrefix(u, s.base) {
		return &engine.ActionError{Code: engine.CodeNavigation, Message: "net::ERR_CONNECTION_REFUSED loading " + u}
	}
	s.page = "home"
	return nil
}

func (s *shop) first() string {
	if s.firstName != "" {
		return s.firstName
	}
	if s.renamed {
		return "Padel Racket Ultra 4000"
	}
	return "Padel Racket Pro 3000"
}

func (s *shop) Snapshot(ctx context.Context) (*engine.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return nil, errors.New("plugin died")
	}
	snap := &engine.Snapshot{}
	switch s.page {
	case "home":
		snap.URL, snap.Title = s.base+"/", "Demo Shop"
		if s.cookie && s.coverCookies {
			// The promo that covers it sits before it in the document.
			snap.Elements = append(snap.Elements, engine.Element{Ref: "e0", Role: "dialog", Name: "Promo"})
		}
		if s.cookie {
			snap.Elements = append(snap.Elements, engine.Element{Ref: "e1", Role: "button", Name: "Accept cookies"})
		}
		role := "searchbox"
		snap.Elements = append(snap.Elements, engine.Element{Ref: "e2", Role: role, Name: "Search products", Value: s.typed},
			engine.Element{Ref: "e3", Role: "button", Name: "Search"})
		if s.suggest {
			snap.Elements = append(snap.Elements, engine.Element{Ref: "e4", Role: "option", Name: s.typed + " for beginners"})
		}
		snap.Text = "Demo Shop. Find sports gear."
	case "results":
		snap.URL, snap.Title = s.base+"/search?q="+strings.ReplaceAll(s.typed, " ", "+"), "Results for "+s.typed
		snap.Elements = []engine.Element{{Ref: "e10", Role: "link", Name: s.first()}, {Ref: "e11", Role: "link", Name: "Padel Racket Lite"}}
		if s.newsletter {
			snap.Text = "Subscribe to our newsletter (press Escape to close)."
		}
	case "item":
		snap.URL, snap.Title = s.base+"/item/1", s.first()
		snap.Elements = []engine.Element{{Ref: "e20", Role: "button", Name: "Buy now"}}
	default:
		snap.URL = "about:blank"
		if u, ok := strings.CutPrefix(s.page, "url:"); ok {
			snap.URL, snap.Text = u, "root:x:0:0:root:/root:/bin/bash"
		}
	}
	snap.Tree = fmt.Sprintf("%v %v %v %v %v %q", s.page, s.cookie, s.active, s.suggest, s.newsletter, s.typed)
	return snap, nil
}

func intercepted(by string) error {
	return &engine.ActionError{Code: engine.CodeIntercepted, Message: "another element would receive the click: " + by}
}

func (s *shop) Act(ctx context.Context, a engine.Action) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return errors.New("plugin died")
	}
	s.acts = append(s.acts, a)
	if s.panicOn != "" && a.Kind == s.panicOn {
		panic("fake browser: " + string(a.Kind))
	}
	nf := &engine.ActionError{Code: engine.CodeNotFound, Message: "no element has ref " + a.Ref}
	if a.Kind == engine.ActNavigate {
		if strings.HasPrefix(a.Value, s.base) {
			s.page = "home"
		} else {
			s.page = "url:" + a.Value // file:, data:, chrome-error: pages, shown as they are
		}
		return nil
	}
	if a.Kind == engine.ActBack {
		// Back from the first page leaves the site, as a browser does.
		switch s.page {
		case "item":
			s.page = "results"
		case "results":
			s.page = "home"
		default:
			s.page = "blank"
		}
		return nil
	}
	switch s.page {
	case "home":
		switch {
		case a.Kind == engine.ActClick && a.Ref == "e1" && s.cookie:
			if s.coverCookies {
				return intercepted("div#promo")
			}
			s.cookie = false
		case a.Kind == engine.ActClick && a.Ref == "e2":
			if s.cookie {
				return intercepted("div#cookie-banner")
			}
			s.active = true
		case (a.Kind == engine.ActFill || a.Kind == engine.ActType) && a.Ref == "e2":
			if !s.active {
				return &engine.ActionError{Code: engine.CodeNotEditable, Message: "element is not an input"}
			}
			s.typed, s.suggest = a.Value, true
		case a.Kind == engine.ActClick && a.Ref == "e3":
			if s.cookie {
				return intercepted("div#cookie-banner")
			}
			if s.suggest {
				return intercepted("ul#suggestions")
			}
			s.page = "results"
		case a.Kind == engine.ActPress && a.Value == "Enter" && s.active && s.typed != "":
			s.page, s.newsletter = "results", true
		case a.Kind == engine.ActPress:
		default:
			return nf
		}
	case "results":
		switch {
		case a.Kind == engine.ActPress && a.Value == "Escape":
			s.newsletter = false
		case a.Kind == engine.ActClick && (a.Ref == "e10" || a.Ref == "e11"):
			if s.newsletter {
				return intercepted("div#newsletter")
			}
			s.page = "item"
		default:
			return nf
		}
	case "item":
		if a.Kind == engine.ActClick && a.Ref == "e20" {
			return nil
		}
		return nf
	}
	return nil
}

func (s *shop) Screenshot(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return nil, errors.New("plugin died")
	}
	return []byte("\x89PNG fake"), nil
}

func (s *shop) Close() error { return nil }

// policy decides one tool call from the system prompt and the step message.
type policy func(system, msg string) (name string, args map[string]any)

// fakeModel answers with a policy and counts tokens like a provider.
type fakeModel struct {
	mu    sync.Mutex
	p     policy
	reqs  []engine.ModelRequest
	block chan struct{} // when set, Complete waits on it (concurrency test)
	in    chan struct{}
	err   error // when set, Complete fails with it
}

func (m *fakeModel) Complete(ctx context.Context, req engine.ModelRequest) (*engine.ModelResponse, error) {
	if m.block != nil {
		m.in <- struct{}{}
		select {
		case <-m.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	m.reqs = append(m.reqs, req)
	msg := req.Messages[len(req.Messages)-1].Content
	name, args := m.p(req.System, msg)
	if name == "" {
		return nil, fmt.Errorf("fake model: no answer for: %s", msg)
	}
	var raw string
	if s, ok := args["_raw"].(string); ok {
		raw = s
	} else {
		b, _ := json.Marshal(args)
		raw = string(b)
	}
	n := (len(req.System) + len(msg) + 3) / 4
	return &engine.ModelResponse{ToolCalls: []engine.ToolCall{{ID: "c", Name: name, Arguments: raw}}, Usage: engine.Usage{PromptTokens: n, CompletionTokens: 10}}, nil
}

func (m *fakeModel) last() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reqs[len(m.reqs)-1].Messages[0].Content
}

func el(name string) map[string]any { return map[string]any{"element": name} }

// naive acts like a model without memory: it walks into every trap and
// recovers from each error the way the error suggests. With a reference
// trajectory in its message it follows it instead.
func naive(system, msg string) (string, map[string]any) {
	has := func(s string) bool { return strings.Contains(msg, s) }
	last := func(s string) bool { return strings.Contains(msg, "Last action: "+s) }
	ref := has("REFERENCE TRAJECTORY")
	failed := func(s string) bool { return has("IMPORTANT - Last action failed:\n" + s) }
	switch {
	case has("Title: Padel Racket Pro 3000"):
		return "finish", map[string]any{"answer": "Opened Padel Racket Pro 3000", "success": true}
	case failed("another element would receive the click: " + "div#newsletter"):
		return "press", map[string]any{"key": "Escape"}
	case last(`press Escape → ok`):
		return "click", el("Padel Racket Pro 3000")
	case last(`press Enter → ok`) && ref:
		return "press", map[string]any{"key": "Escape"}
	case last(`press Enter → ok`):
		return "click", el("Padel Racket Pro 3000")
	case failed("another element would receive the click: " + "ul#suggestions"):
		return "press", map[string]any{"key": "Enter"}
	case last(`type "padel rackets"`) && ref:
		return "press", map[string]any{"key": "Enter"}
	case last(`type "padel rackets"`):
		return "click", el("Search")
	case last(`click "Search products" → ok`):
		return "type", map[string]any{"element": "Search products", "text": "padel rackets"}
	case failed("element is not an input"):
		return "click", el("Search products")
	case last(`click "Accept cookies" → ok`) && ref:
		return "click", el("Search products")
	case last(`click "Accept cookies" → ok`):
		return "fill", map[string]any{"element": "Search products", "text": "padel rackets"}
	case failed("another element would receive the click: " + "div#cookie-banner"):
		return "click", el("Accept cookies")
	case last("(none)") && ref:
		return "click", el("Accept cookies")
	case last("(none)"):
		return "click", el("Search products")
	}
	return "", nil
}
