// Package gym is the bundled set of trap sites `engine eval --suite gym`
// measures memory on: small sites served on 127.0.0.1, each built around
// mistakes browser agents really make (a consent wall that blocks clicks,
// an overlay that intercepts them, a search box that is not an input, a
// date picker, a hidden required field, …), each with tasks, the scripted
// model's rules for every task, and a changed variant (the same tasks with
// elements moved or renamed) so that stale memory and its recovery are
// measured, not assumed.
//
// Sites register themselves from their own file (site_NAME.go, with their
// pages under sites/NAME/); Sites and Tasks list them in name order.
package gym

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Site is one trap site.
type Site struct {
	// Name is short and unique ("shop"): lower-case letters, digits and
	// dashes. It prefixes its tasks' names.
	Name string
	// About says in a sentence what the site is and which traps it sets.
	About string
	// Handler serves the site; changed serves its changed variant.
	Handler func(changed bool) http.Handler
	// Tasks are the site's tasks.
	Tasks []Task
}

// Task is one goal on a site.
type Task struct {
	// Name is unique in the gym: "SITE.what" ("shop.padel-racket"), a
	// name fit for a directory (eval keeps each case's memory under it).
	Name string `json:"name"`
	// Site is the site's name.
	Site string `json:"site"`
	// Goal is the task as the agent is given it.
	Goal string `json:"goal"`
	// Path is where the task starts on the site ("/" or "/login").
	Path string `json:"path"`
	// Traps are the mistakes the task exercises (Trap* names).
	Traps []string `json:"traps"`
	// MaxSteps bounds a run of the task (0: the run's default).
	MaxSteps int `json:"max_steps,omitempty"`
	// Rules are the scripted model's rules for the task (plugins/scripted's
	// format). They react only to what the prompt shows, as a model would:
	// a cold run walks into the traps and recovers from the errors it sees;
	// a run shown memory (tips, a reference trajectory) uses what it shows.
	// They must also finish the task on the changed variant.
	Rules json.RawMessage `json:"-"`
}

// The traps tasks name. A site may set several.
const (
	TrapConsentWall    = "consent-wall"    // a cookie or consent banner blocks clicks until accepted
	TrapOverlay        = "overlay"         // a modal, newsletter or chat widget intercepts clicks
	TrapAutocomplete   = "autocomplete"    // a suggestion list covers the submit button
	TrapNotAnInput     = "not-an-input"    // a search box that is a widget: fill fails until it is clicked
	TrapShadowDOM      = "shadow-dom"      // a form inside a shadow root
	TrapIframe         = "iframe"          // a form inside an iframe
	TrapDatePicker     = "date-picker"     // a read-only date field set through its picker
	TrapPagination     = "pagination"      // the item is on a later page
	TrapInfiniteScroll = "infinite-scroll" // the item appears only after scrolling
	TrapLogin          = "login"           // a login with a password field (the password must never be stored)
	TrapHiddenRequired = "hidden-required" // a step of a form needs a field that is hidden until revealed
	TrapDynamicIDs     = "dynamic-ids"     // element ids change on every load
	TrapSlowPage       = "slow-page"       // content appears only after a delay
	TrapNewTab         = "new-tab"         // a link opens in a new tab
	TrapMultiStep      = "multi-step"      // a task across several forms or pages
)

// nameRE is what a site's name and a task's name after its site may be.
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

var (
	mu    sync.Mutex
	sites = map[string]Site{}
)

// register adds a site; it panics on a name used twice or a task that
// does not belong to it (a programming error caught by any test).
func register(s Site) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := sites[s.Name]; dup || !nameRE.MatchString(s.Name) {
		panic(fmt.Sprintf("gym: bad or duplicate site name %q", s.Name))
	}
	for i, t := range s.Tasks {
		if t.Site == "" {
			s.Tasks[i].Site = s.Name
			t.Site = s.Name
		}
		if t.Site != s.Name || !strings.HasPrefix(t.Name, s.Name+".") || !nameRE.MatchString(strings.TrimPrefix(t.Name, s.Name+".")) {
			panic(fmt.Sprintf("gym: task %q is not named for its site %q", t.Name, s.Name))
		}
		if s.Tasks[i].Path == "" {
			s.Tasks[i].Path = "/"
		}
	}
	sites[s.Name] = s
}

// Sites are the gym's sites in name order.
func Sites() []Site {
	mu.Lock()
	defer mu.Unlock()
	out := make([]Site, 0, len(sites))
	for _, s := range sites {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Tasks are every site's tasks in name order.
func Tasks() []Task {
	var out []Task
	for _, s := range Sites() {
		out = append(out, s.Tasks...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Server serves every site on 127.0.0.1, each variant on a port of its
// own: the host (the memory's domain) is the same for both, so memory made
// on a site applies to its changed variant, as it would on a real site
// that changed.
type Server struct {
	urls map[string]string // "site" or "site changed" → http://127.0.0.1:PORT
	srvs []*http.Server
}

// Start serves every site and its changed variant.
func Start() (*Server, error) {
	s := &Server{urls: map[string]string{}}
	for _, site := range Sites() {
		for _, changed := range []bool{false, true} {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return nil, errors.Join(fmt.Errorf("gym: %w", err), s.Close())
			}
			srv := &http.Server{Handler: site.Handler(changed), ReadHeaderTimeout: 10 * time.Second}
			go func() { _ = srv.Serve(ln) }() // ends with ErrServerClosed at Close
			s.srvs = append(s.srvs, srv)
			s.urls[key(site.Name, changed)] = "http://" + ln.Addr().String()
		}
	}
	return s, nil
}

func key(site string, changed bool) string {
	if changed {
		return site + " changed"
	}
	return site
}

// URL is where a task starts on its site, or its changed variant.
func (s *Server) URL(t Task, changed bool) string {
	return s.urls[key(t.Site, changed)] + t.Path
}

// Close stops every site.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var errs []error
	for _, srv := range s.srvs {
		errs = append(errs, srv.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// Case is a task as a --cases file holds it, with the URL of its changed
// variant.
type Case struct {
	Name       string `json:"name"`
	Goal       string `json:"goal"`
	URL        string `json:"url"`
	ChangedURL string `json:"changed_url,omitempty"`
	Rules      string `json:"rules"`
	MaxSteps   int    `json:"max_steps,omitempty"`
}

// WriteCases writes each task's rules under dir/rules/ and returns the
// tasks as cases on the server s (rules paths absolute).
func WriteCases(dir string, s *Server, tasks []Task) ([]Case, error) {
	rdir := filepath.Join(dir, "rules")
	if err := os.MkdirAll(rdir, 0o755); err != nil {
		return nil, err
	}
	var out []Case
	for _, t := range tasks {
		abs, err := filepath.Abs(filepath.Join(rdir, t.Name+".json"))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(abs, t.Rules, 0o644); err != nil {
			return nil, err
		}
		out = append(out, Case{Name: t.Name, Goal: t.Goal, URL: s.URL(t, false), ChangedURL: s.URL(t, true),
			Rules: abs, MaxSteps: t.MaxSteps})
	}
	return out, nil
}
