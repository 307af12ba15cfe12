package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/agent/navpolicy"
	"github.com/engine-dev/engine/engine/memory/runfiles"
)

// web is a fake browser over a few pages that loads ANY URL it is given
// (file:// included, as the static plugin does), so that only the engine's
// navigation policy stands between the model and a page.
type web struct {
	mu      sync.Mutex
	pages   map[string]webPage
	history []string
	loaded  []string // every URL the browser loaded, in order
	backs   int
}

type webPage struct {
	links    map[string]string // link name → target URL
	redirect string            // a server redirect: the page is replaced by the target
	script   string            // a client-side redirect: the page stays in history, the target is pushed
}

func (w *web) load(u string, push bool) {
	w.loaded = append(w.loaded, u)
	p := w.pages[u]
	switch {
	case p.redirect != "":
		w.load(p.redirect, push)
	case p.script != "":
		if push {
			w.history = append(w.history, u)
		}
		w.load(p.script, true)
	default:
		if push {
			w.history = append(w.history, u)
		}
	}
}

func (w *web) Navigate(_ context.Context, u string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.load(u, true)
	return nil
}

func (w *web) at() string { return w.history[len(w.history)-1] }

func (w *web) Snapshot(context.Context) (*engine.Snapshot, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.history) == 0 {
		return &engine.Snapshot{URL: "about:blank"}, nil
	}
	u := w.at()
	s := &engine.Snapshot{URL: u, Title: "Page " + u, Tree: u}
	names := slices.Sorted(maps.Keys(w.pages[u].links))
	for i, name := range names {
		s.Elements = append(s.Elements, engine.Element{Ref: "e" + string(rune('1'+i)), Role: "link", Name: name})
	}
	return s, nil
}

func (w *web) Act(_ context.Context, a engine.Action) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch a.Kind {
	case engine.ActNavigate:
		w.load(a.Value, true)
	case engine.ActBack:
		w.backs++
		if len(w.history) < 2 {
			return &engine.ActionError{Code: engine.CodeNavigation, Message: "no previous page"}
		}
		w.history = w.history[:len(w.history)-1]
		// Going back to a page re-runs it (a client-side redirect fires again).
		u := w.at()
		w.history = w.history[:len(w.history)-1]
		w.load(u, true)
	case engine.ActClick:
		u := w.at()
		names := slices.Sorted(maps.Keys(w.pages[u].links))
		for i, name := range names {
			if a.Ref == "e"+string(rune('1'+i)) {
				w.load(w.pages[u].links[name], true)
				return nil
			}
		}
		return &engine.ActionError{Code: engine.CodeNotFound, Message: "no element has ref " + a.Ref}
	}
	return nil
}

func (w *web) Screenshot(context.Context) ([]byte, error) { return []byte("png"), nil }
func (w *web) Close() error                               { return nil }

func (w *web) sawLoaded(prefix string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, u := range w.loaded {
		if strings.HasPrefix(u, prefix) {
			return true
		}
	}
	return false
}

// script answers with one tool call per step, in order, then gives up.
func script(calls ...[2]any) policy {
	i := 0
	return func(system, msg string) (string, map[string]any) {
		if i >= len(calls) {
			return "finish", map[string]any{"answer": "out of script", "success": false}
		}
		c := calls[i]
		i++
		return c[0].(string), c[1].(map[string]any)
	}
}

func navTo(u string) [2]any   { return [2]any{"navigate", map[string]any{"url": u}} }
func clickOn(n string) [2]any { return [2]any{"click", map[string]any{"element": n}} }
func done() [2]any {
	return [2]any{"finish", map[string]any{"answer": "done", "success": true}}
}

func navConfig(t *testing.T, w *web, m *fakeModel, allow ...string) Config {
	cfg := Config{Goal: "look around", StartURL: "http://shop.test/", Browser: w, Model: m, Memory: memOf(t, openDisk(t)),
		Approve: ApproveAuto, RunsDir: t.TempDir()}
	if len(allow) > 0 {
		cfg.Navigation = &navpolicy.Policy{Allow: allow}
	}
	return cfg
}

// readActions reads a run's actions.jsonl.
func readActions(t *testing.T, dir string) []runfiles.Record {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, ActionsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []runfiles.Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r runfiles.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func failedWith(t *testing.T, m *fakeModel, call int, want string) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if call >= len(m.reqs) {
		t.Fatalf("only %d model calls, want a message %d", len(m.reqs), call)
	}
	msg := m.reqs[call].Messages[0].Content
	if !strings.Contains(msg, "IMPORTANT - Last action failed:\n"+want) {
		t.Errorf("message %d does not carry %q:\n%s", call, want, msg)
	}
}

func TestTypedNavigateBlocked(t *testing.T) {
	w := &web{pages: map[string]webPage{"http://shop.test/": {links: map[string]string{"Deals": "http://shop.test/deals"}}}}
	m := &fakeModel{p: script(
		navTo("file:///etc/passwd"),
		navTo("http://169.254.169.254/latest/meta-data/"),
		navTo("https://notshop.test/"),
		navTo("javascript:alert(1)"),
		clickOn("Deals"),
		navTo("https://www.shop.test/ok"),
		done(),
	)}
	res := mustRun(t, navConfig(t, w, m, "shop.test"))
	if !res.Success || res.Errors != 4 || res.Steps != 7 {
		t.Fatalf("want a finished run with 4 errors in 7 steps: %+v", res)
	}
	failedWith(t, m, 1, "navigation to file:///etc/passwd blocked: file:// URLs are never allowed")
	failedWith(t, m, 2, "navigation to http://169.254.169.254/latest/meta-data/ blocked: 169.254.169.254 is not within the allowed domains (shop.test)")
	failedWith(t, m, 3, "navigation to https://notshop.test/ blocked: notshop.test is not within the allowed domains (shop.test)")
	failedWith(t, m, 4, "navigation to javascript:alert(1) blocked: javascript: URLs are never allowed")
	for _, bad := range []string{"file:", "http://169.254", "https://notshop", "javascript:"} {
		if w.sawLoaded(bad) {
			t.Errorf("the browser loaded %s", bad)
		}
	}
	if !w.sawLoaded("https://www.shop.test/ok") {
		t.Error("an allowed subdomain was not loaded")
	}
	// Logged as tool errors (no lesson is learned from the run's policy),
	// and kept out of the trajectory.
	recs := readActions(t, res.Dir)
	if len(recs) != 6 || recs[0].OK || recs[0].Error != "" || !strings.Contains(recs[0].ToolError, "file:// URLs are never allowed") || recs[0].Action != "navigate" {
		t.Fatalf("action log: %+v", recs)
	}
	if res.LessonsLearned != 0 {
		t.Errorf("learned %d lessons from blocked navigations", res.LessonsLearned)
	}
}

func TestDefaultPolicyWithoutFlags(t *testing.T) {
	// No allow list: any public site, but never file:// or a private address
	// (the start URL is public).
	w := &web{}
	m := &fakeModel{p: script(navTo("file:///etc/passwd"), navTo("http://[::ffff:127.0.0.1]:8080/"), navTo("https://other.example/"), done())}
	res := mustRun(t, navConfig(t, w, m))
	if !res.Success || res.Errors != 2 {
		t.Fatalf("%+v", res)
	}
	failedWith(t, m, 2, "navigation to http://[::ffff:127.0.0.1]:8080/ blocked: ::ffff:127.0.0.1 (127.0.0.1) is a loopback address")
	if !w.sawLoaded("https://other.example/") || w.sawLoaded("file:") || w.sawLoaded("http://[") {
		t.Errorf("loaded: %q", w.loaded)
	}
}

func TestLinkClickLandsOffPolicy(t *testing.T) {
	w := &web{pages: map[string]webPage{
		"http://shop.test/": {links: map[string]string{"Partner offer": "https://evil.test/x"}},
	}}
	m := &fakeModel{p: script(clickOn("Partner offer"), done())}
	res := mustRun(t, navConfig(t, w, m, "shop.test"))
	if !res.Success || res.Errors != 1 {
		t.Fatalf("%+v", res)
	}
	failedWith(t, m, 1, "navigation to https://evil.test/x blocked: evil.test is not within the allowed domains (shop.test) (the page went there; went back to http://shop.test/)")
	m.mu.Lock()
	msg := m.reqs[1].Messages[0].Content
	m.mu.Unlock()
	if !strings.Contains(msg, "URL: http://shop.test/\n") || !strings.Contains(msg, `Last action: click "Partner offer" → failed`) {
		t.Errorf("the model was not shown the page it was brought back to:\n%s", msg)
	}
	if w.backs != 1 || w.at() != "http://shop.test/" {
		t.Errorf("backs %d, at %s", w.backs, w.at())
	}
	recs := readActions(t, res.Dir)
	if len(recs) != 1 || recs[0].Action != "click" || recs[0].OK || !strings.Contains(recs[0].ToolError, "evil.test is not within") {
		t.Errorf("action log: %+v", recs)
	}
	if res.TrajectoryID != "" {
		t.Error("a trajectory was recorded through a blocked page")
	}
}

func TestRedirectLandsOffPolicy(t *testing.T) {
	w := &web{pages: map[string]webPage{
		"http://shop.test/":       {links: map[string]string{"Track order": "http://shop.test/track"}},
		"http://shop.test/out":    {redirect: "file:///etc/passwd"},
		"http://shop.test/track":  {script: "http://127.0.0.1:9000/admin"}, // client-side: back fires it again
		"http://shop.test/resume": {},
	}}
	m := &fakeModel{p: script(navTo("http://shop.test/out"), clickOn("Track order"), navTo("http://shop.test/resume"), done())}
	res := mustRun(t, navConfig(t, w, m))
	if !res.Success || res.Errors != 2 {
		t.Fatalf("%+v", res)
	}
	// A server redirect: back leaves it.
	failedWith(t, m, 1, "navigation to file:///etc/passwd blocked: file:// URLs are never allowed (only http and https) (the page went there; went back to http://shop.test/)")
	// A client-side redirect fires again on back: the engine loads the page
	// the action was taken on instead.
	failedWith(t, m, 2, "navigation to http://127.0.0.1:9000/admin blocked: 127.0.0.1 is a loopback address")
	if !strings.Contains(m.last(), "(the page went there; went back to http://shop.test/)") {
		t.Errorf("not told where the page went back to:\n%s", m.last())
	}
	if w.at() != "http://shop.test/resume" {
		t.Errorf("at %s", w.at())
	}
}

func TestPageMovingByItselfIsLeft(t *testing.T) {
	w := &web{pages: map[string]webPage{"http://shop.test/": {}, "http://shop.test/2": {}}}
	calls := 0
	m := &fakeModel{p: func(system, msg string) (string, map[string]any) {
		calls++
		switch calls {
		case 1:
			return "navigate", map[string]any{"url": "http://shop.test/2"}
		case 2:
			// While the model thinks, the page redirects on a timer; the
			// model's answer is no tool call, so no action looks at the page.
			w.mu.Lock()
			w.load("http://localhost/internal", true)
			w.mu.Unlock()
			return "nope", map[string]any{}
		}
		return "finish", map[string]any{"answer": "ok", "success": true}
	}}
	res := mustRun(t, navConfig(t, w, m))
	if !res.Success || res.Errors != 2 {
		t.Fatalf("%+v", res)
	}
	m.mu.Lock()
	msg := m.reqs[2].Messages[0].Content
	m.mu.Unlock()
	if !strings.Contains(msg, "IMPORTANT - The page went to http://localhost/internal by itself (a redirect) and was left: navigation to http://localhost/internal blocked: localhost is the local machine") ||
		!strings.Contains(msg, "URL: http://shop.test/2\n") {
		t.Errorf("message 3:\n%s", msg)
	}
	recs := readActions(t, res.Dir)
	var logged bool
	for _, r := range recs {
		logged = logged || (r.Action == "navigation_blocked" && r.URL == "http://localhost/internal" && r.Error == "")
	}
	if !logged {
		t.Errorf("action log: %+v", recs)
	}
}

func TestStartURLPolicy(t *testing.T) {
	// The start URL redirects off the allowed domains: nowhere to go back to.
	w := &web{pages: map[string]webPage{"http://shop.test/moved": {redirect: "https://elsewhere.test/"}}}
	m := &fakeModel{p: script(done())}
	cfg := navConfig(t, w, m, "shop.test")
	cfg.StartURL = "http://shop.test/moved"
	res := mustRun(t, cfg)
	if res.Success || !strings.HasPrefix(res.Reason, ReasonNavigationBlocked+": navigation to https://elsewhere.test/ blocked: elsewhere.test is not within the allowed domains (shop.test)") || res.LLMCalls != 0 {
		t.Fatalf("%+v", res)
	}

	// A start URL the policy refuses is bad input.
	for start, want := range map[string]string{
		"file:///etc/passwd":      "file:// URLs are never allowed",
		"chrome://settings":       "chrome:// URLs are never allowed",
		"https://elsewhere.test/": "elsewhere.test is not within the allowed domains (shop.test)",
	} {
		cfg := navConfig(t, &web{}, &fakeModel{p: script()}, "shop.test")
		cfg.StartURL = start
		_, err := Run(context.Background(), cfg)
		if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("start %s: %v, want %q", start, err, want)
		}
	}

	// A private start URL allows private pages; a public one does not.
	w = &web{}
	m = &fakeModel{p: script(navTo("http://10.0.0.7/"), navTo("http://localhost:8080/"), done())}
	cfg = navConfig(t, w, m)
	cfg.StartURL = "http://127.0.0.1:3000/"
	if res := mustRun(t, cfg); !res.Success || res.Errors != 0 {
		t.Fatalf("private start: %+v", res)
	}
}
