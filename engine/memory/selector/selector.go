// Package selector is the selector cache: for an element identity (ARIA
// role + accessible name, on a host, optionally scoped to one page path) it
// remembers the selectors that found the element, ranked by how often they
// worked and demoted when they failed, so an agent skips trial and error on
// pages it knows.
//
// Ranking: score = successes − 2·failures (a failure outweighs a success:
// a selector that broke is likely to break again). Only selectors with a
// positive score are offered to the prompt (Known); Lookup and List show
// them all. Ties go to the more recent success.
//
// Path scope: a selector recorded without a path holds on every page of its
// host; one recorded with a path holds only on pages whose normalised path
// is the same. Paths are normalised so that one template of page shares its
// selectors: query and fragment dropped, trailing slash dropped, and any
// segment that looks like an id (all digits, or a long hex or uuid-like run)
// replaced by "*": /product/12345/reviews → /product/*/reviews.
package selector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/internal/attribution"
	textcheck "github.com/engine-dev/engine/engine/memory/internal/check"
	"github.com/engine-dev/engine/engine/memory/internal/sitecache"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/trust/injection"
	"github.com/engine-dev/engine/kv"
)

// FailureWeight is how many successes one failure cancels.
const FailureWeight = 2

// Event names this package emits.
const (
	EventRecorded = "selector_recorded" // fields: domain, path, role, name, selector, ok, score, stale
	EventRecall   = "selector_recall"   // fields: domain, path, count
	// EventRefused: a selector whose accessible name or selector text
	// failed the screen was not stored. Fields: domain, role, name, reason.
	EventRefused = "selector_refused"
	// EventPruned: a selector written by a program was shown
	// engine.PruneUnhelpfulAfter times and never helped, and was removed
	// by the attribution that counted it so. Fields: domain, path, role,
	// name, selector, shown, reason.
	EventPruned = "selector_pruned"
)

// screenOf returns why a selector must not be stored, or "": its
// accessible name and selector are page text a prompt shows (KNOWN
// SELECTORS). Unlike a fact, a refused selector is not held for a person
// to approve: it names an element whose text speaks to the model, which no
// later run should be steered to, and a selector that matters is learned
// again from its next use.
func screenOf(host, name, sel string) string {
	if r := injection.Text(name, injection.Options{Domain: host}); r != "" {
		return "name: " + r
	}
	if r := injection.Text(sel, injection.Options{Domain: host}); r != "" {
		return "selector: " + r
	}
	return ""
}

// refuse reports sl as not stored, for reason.
func (s *Store) refuse(sl Selector, reason string) Selector {
	sl.Refused = reason
	s.ev.Emit(EventRefused, map[string]any{"domain": sl.Domain, "role": sl.Role, "name": sl.Name, "reason": reason})
	return sl
}

// Selector is one known selector for one element.
type Selector struct {
	Domain      string    `json:"domain"`         // host
	Path        string    `json:"path,omitempty"` // normalised page path; "" = every page
	Role        string    `json:"role"`
	Name        string    `json:"name"`
	Selector    string    `json:"selector"`
	Successes   int       `json:"successes"`
	Failures    int       `json:"failures"`
	FirstSeen   time.Time `json:"first_seen"`
	LastSuccess time.Time `json:"last_success,omitzero"`
	LastFailure time.Time `json:"last_failure,omitzero"`
	// Provenance is who first recorded the selector; later uses keep it.
	Provenance engine.Provenance `json:"provenance,omitzero"`
	// LastRun is the last run that used the selector (a success or a
	// failure), "" until a run does.
	LastRun string `json:"last_run,omitempty"`
	// Refused says why a selector was not stored: its accessible name or
	// selector failed the screen (see Record); "" for a stored one.
	Refused string `json:"refused,omitempty"`
	// Shown, Used and Helped count the run steps whose context offered the
	// selector, those whose action then used its element, and those used
	// ones whose action worked in a successful run (see Attribute).
	engine.Counts
	// Stale says the selector failed on a page where it once worked (the
	// site probably changed): it is kept out of Known and Lookup until a
	// success clears it. Nil for a selector not known to be stale.
	Stale *Stale `json:"stale,omitempty"`
	// Checked is what the selector's last success was checked against:
	// the page's path and the structural fingerprints of the element and
	// the page (engine/memory/fingerprint). Nil for a selector recorded without
	// them (before fingerprints, or by hand).
	Checked *Checked `json:"checked,omitempty"`
}

// Checked is what the memory was last checked against (one type for every kind).
type Checked = engine.Checked

// Stale is why and since when the memory stopped holding (one type for every kind).
type Stale = engine.Stale

// UnhelpfulAfter is how many times a selector is shown without ever
// helping before Known ranks it below the ones that have not earned that.
// Unhelpful (engine.Counts) reports whether it reached that and never helped.
const UnhelpfulAfter = engine.UnhelpfulAfter

// Score ranks selectors: successes − FailureWeight·failures.
func (s *Selector) Score() int { return s.Successes - FailureWeight*s.Failures }

// Options configure a Store.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Events receives memory events; nil drops them.
	Events event.Func
	// Provenance is who writes through this store: stamped on the
	// records it writes.
	Provenance engine.Provenance
	// HistoryKeep is how many past versions of each selector are kept (see
	// History); zero means the default (20).
	HistoryKeep int
}

// Store keeps selectors in a kv.Store.
type Store struct {
	db    kv.Store
	now   func() time.Time
	ev    event.Func
	prov  engine.Provenance
	histN int
}

// New returns a Store over db.
func New(db kv.Store, opts Options) *Store {
	s := &Store{db: db, now: opts.Now, ev: opts.Events, prov: opts.Provenance, histN: opts.HistoryKeep}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Observation is one use of a selector for an element.
type Observation struct {
	Domain   string // host or URL
	Path     string // page path (or URL) to scope the selector to; "" = every page
	Role     string // ARIA role: button, link, textbox, ...
	Name     string // accessible name
	Selector string
	Failed   bool // the selector did not find the element, or found the wrong one
	// Reason says why it failed ("the page has no button \"Search\""): a
	// failure with a reason, of a selector that had worked, marks it stale.
	// Without one a failure only demotes it (score).
	Reason string
	// Fingerprint and Page are the element's and the page's structural
	// fingerprints (engine/memory/fingerprint) where the selector was used: a
	// success records them, with the page's path, as Checked.
	Fingerprint, Page string
}

func normIdentity(role, name string) (r, n, key string) {
	r = strings.ToLower(strings.TrimSpace(role))
	n = strings.Join(strings.Fields(name), " ")
	return r, n, strings.ToLower(n)
}

func selHash(sel string) string {
	h := fnv.New64a()
	h.Write([]byte(sel))
	return fmt.Sprintf("%016x", h.Sum64())
}

func pathPart(p string) string {
	if p == "" {
		return keyspace.AnyPath
	}
	return p
}

// normalise cleans up and checks the identity parts of a selector.
func normalise(host, role, name, sel string) (h, r, n, nameKey, s string, err error) {
	h, err = domain.Host(host)
	if err != nil {
		return "", "", "", "", "", engine.Invalid("selector", fmt.Sprintf("domain: %v", err))
	}
	r, n, nameKey = normIdentity(role, name)
	s = strings.TrimSpace(sel)
	switch {
	case r == "":
		return "", "", "", "", "", engine.Invalid("selector", "the element's role is empty (button, link, textbox, ...)")
	case n == "":
		return "", "", "", "", "", engine.Invalid("selector", "the element's accessible name is empty")
	case s == "":
		return "", "", "", "", "", engine.Invalid("selector", "the selector is empty")
	}
	return h, r, n, nameKey, s, nil
}

// Check reports whether Put would accept sl (an engine.ErrInvalid error naming the
// problem if not), without storing anything.
func Check(sl Selector) error {
	_, _, err := check(sl)
	return err
}

func check(sl Selector) (Selector, string, error) {
	h, r, n, nk, s, err := normalise(sl.Domain, sl.Role, sl.Name, sl.Selector)
	if err != nil {
		return Selector{}, "", err
	}
	if sl.Successes < 0 || sl.Failures < 0 {
		return Selector{}, "", engine.Invalid("selector", fmt.Sprintf("successes %d and failures %d must not be negative", sl.Successes, sl.Failures))
	}
	if sl.Successes == 0 && sl.Failures == 0 {
		return Selector{}, "", engine.Invalid("selector", "a selector needs at least one success or failure")
	}
	p, err := checkedPath(sl.Path)
	if err != nil {
		return Selector{}, "", err
	}
	if err := sl.Provenance.Check(); err != nil {
		return Selector{}, "", err
	}
	if p := textcheck.Text("last_run", sl.LastRun, engine.MaxProvenanceField, false); p != "" {
		return Selector{}, "", engine.Invalid("selector", p)
	}
	if sl.Stale != nil {
		if p := textcheck.Stale(*sl.Stale, false); p != "" {
			return Selector{}, "", engine.Invalid("selector", p)
		}
	}
	if c := sl.Checked; c != nil {
		if p := textcheck.Checked(*c, MaxPath); p != "" {
			return Selector{}, "", engine.Invalid("selector", p)
		}
		c2 := *c
		c2.Path = domain.PathScope(c.Path)
		sl.Checked = &c2
	}
	sl.Domain, sl.Role, sl.Name, sl.Selector, sl.Path = h, r, n, s, p
	return sl, nk, nil
}

// MaxPath bounds a normalised path scope: it goes into the selector's key
// (imports check the same bound).
const MaxPath = textcheck.MaxLine

// checkedPath normalises a path scope and refuses one over MaxPath.
func checkedPath(p string) (string, error) {
	p = domain.PathScope(p)
	if err := textcheck.Text("path", p, MaxPath, false); err != "" {
		return "", engine.Invalid("selector", err)
	}
	return p, nil
}

// Put stores sl exactly as given (counts and times), replacing the same
// selector of the same element on the same path scope: for imports and for
// people fixing memory by hand. A zero FirstSeen is the clock's now; a
// selector without provenance gets the store's. One whose accessible name
// or text fails the screen is not stored (returned with Refused set).
func (s *Store) Put(ctx context.Context, sl Selector) (Selector, error) {
	sl, nk, err := check(sl)
	if err != nil {
		return Selector{}, err
	}
	if sl.FirstSeen.IsZero() {
		sl.FirstSeen = s.now().UTC()
	}
	if sl.Provenance == (engine.Provenance{}) {
		sl.Provenance = s.prov.Stamp(s.now(), domain.Site(sl.Domain))
	}
	if reason := screenOf(sl.Domain, sl.Name, sl.Selector); reason != "" {
		return s.refuse(sl, reason), nil
	}
	sl.Refused = ""
	key := keyspace.Selector(domain.Site(sl.Domain), sl.Domain, pathPart(sl.Path), sl.Role, nk, selHash(sl.Selector))
	b, err := json.Marshal(sl)
	if err != nil {
		return Selector{}, err
	}
	site := domain.Site(sl.Domain)
	err = s.db.Update(ctx, func(tx kv.Txn) error {
		old, err := tx.Get(key)
		if errors.Is(err, kv.ErrNotFound) {
			old = nil
		} else if err != nil {
			return err
		}
		if !bytes.Equal(old, b) {
			if err := s.keep(tx, history.OpSet, &sl, old); err != nil {
				return err
			}
		}
		if err := tx.Set(keyspace.SelectorGen(site), []byte(sitecache.Gen()), 0); err != nil {
			return err
		}
		return tx.Set(key, b, 0)
	})
	if err != nil {
		return Selector{}, fmt.Errorf("selector: put %s %s %q: %w", sl.Domain, sl.Role, sl.Name, err)
	}
	return sl, nil
}

// Record notes one use of a selector: a success, or with Failed a failure.
// A selector first seen failing is remembered too (with a negative score),
// so it is not offered again. A selector whose accessible name or text
// fails the screen is not stored: it comes back with Refused set.
func (s *Store) Record(ctx context.Context, o Observation) (Selector, error) {
	host, role, name, nameKey, sel, err := normalise(o.Domain, o.Role, o.Name, o.Selector)
	if err != nil {
		return Selector{}, err
	}
	path, err := checkedPath(o.Path)
	if err != nil {
		return Selector{}, err
	}
	if textcheck.Fingerprint("fingerprint", o.Fingerprint) != "" || textcheck.Fingerprint("page", o.Page) != "" {
		return Selector{}, engine.Invalid("selector", fmt.Sprintf("fingerprints %q and %q must be up to 16 hex digits", o.Fingerprint, o.Page))
	}
	reason := strings.Join(strings.Fields(o.Reason), " ")
	if reason != "" {
		if p := textcheck.Stale(engine.Stale{Run: s.prov.Run, Reason: reason}, false); p != "" {
			return Selector{}, engine.Invalid("selector", p)
		}
	}
	site := domain.Site(host)
	key := keyspace.Selector(site, host, pathPart(path), role, nameKey, selHash(sel))
	now := s.now().UTC()
	if reason := screenOf(host, name, sel); reason != "" {
		return s.refuse(Selector{Domain: host, Path: path, Role: role, Name: name, Selector: sel, FirstSeen: now,
			Provenance: s.prov.Stamp(now, site)}, reason), nil
	}
	var out Selector
	err = s.db.Update(ctx, func(tx kv.Txn) error {
		out = Selector{Domain: host, Path: path, Role: role, Name: name, Selector: sel, FirstSeen: now,
			Provenance: s.prov.Stamp(now, site)}
		v, err := tx.Get(key)
		switch {
		case err == nil:
			out = Selector{} // a record from before provenance keeps none
			if err := json.Unmarshal(v, &out); err != nil {
				return fmt.Errorf("decode %s: %w", key, err)
			}
			if err := s.keep(tx, history.OpUse, &out, v); err != nil {
				return err
			}
		case !errors.Is(err, kv.ErrNotFound):
			return err
		}
		if s.prov.Run != "" {
			out.LastRun = s.prov.Run
		}
		if o.Failed {
			if reason != "" && out.Successes > 0 && out.Stale == nil {
				// It worked here once and no longer does, for a reason the
				// caller saw (the element is gone): the page changed. A
				// failure without one only demotes it.
				out.Stale = &Stale{At: now, Run: s.prov.Run, Reason: reason}
			}
			out.Failures++
			out.LastFailure = now
		} else {
			out.Successes++
			out.LastSuccess = now
			out.Stale = nil // re-validated
			if o.Fingerprint != "" || o.Page != "" {
				out.Checked = &Checked{Path: checkedAt(path, o.Domain), Fingerprint: o.Fingerprint, Page: o.Page, At: now}
			}
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		if err := tx.Set(keyspace.SelectorGen(site), []byte(sitecache.Gen()), 0); err != nil {
			return err
		}
		return tx.Set(key, b, 0)
	})
	if err != nil {
		return Selector{}, fmt.Errorf("selector: record %s %s %q: %w", host, role, name, err)
	}
	s.ev.Emit(EventRecorded, map[string]any{
		"domain": host, "path": path, "role": role, "name": name, "selector": sel,
		"ok": !o.Failed, "score": out.Score(), "stale": out.Stale != nil,
	})
	return out, nil
}

// checkedAt is the path of the page a selector was used on: its path
// scope, or the path of the observation's URL when it has no scope.
func checkedAt(scope, pageURL string) string {
	if scope != "" || !strings.Contains(pageURL, "://") {
		return scope
	}
	return domain.PathScope(pageURL)
}

// related reports whether memory kept for host r is about host h, for
// listing: the same host, or one a subdomain of the other.
func related(h, r string) bool { return domain.Within(h, r) || domain.Within(r, h) }

// applies reports whether memory kept for host r applies on host h, for the
// prompt: r is h or a parent domain of h, "www." aside. So memory of
// example.com applies on mail.example.com, and www.example.com and
// example.com share memory, but mail.example.com's is not used on
// docs.example.com or on example.com.
func applies(h, r string) bool {
	return domain.Within(strings.TrimPrefix(h, "www."), strings.TrimPrefix(r, "www."))
}

// Known returns the selectors worth offering on the page at pageURL: those
// kept for its host or a parent domain ("www." aside), scoped to every page or to this page's path, with a
// positive score and not stale, best first. At most limit (0 = all), one line per
// selector; an element may have several.
func (s *Store) Known(ctx context.Context, pageURL string, limit int) ([]Selector, error) {
	host, err := domain.Host(pageURL)
	if err != nil {
		return nil, engine.Invalid("selector", fmt.Sprintf("url: %v", err))
	}
	path := ""
	if u, err := url.Parse(pageURL); err == nil && strings.Contains(pageURL, "://") {
		path = domain.PathScope(u.EscapedPath())
	}
	all, err := s.scan(ctx, host, applies)
	if err != nil {
		return nil, fmt.Errorf("selector: known %s: %w", pageURL, err)
	}
	var out []Selector
	for _, sl := range all {
		if sl.Score() > 0 && sl.Stale == nil && (sl.Path == "" || sl.Path == path) {
			out = append(out, sl)
		}
	}
	// Shown often and never of help: after the rest, in their order.
	sort.SliceStable(out, func(i, j int) bool { return !out[i].Unhelpful() && out[j].Unhelpful() })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	s.ev.Emit(EventRecall, map[string]any{"domain": host, "path": path, "count": len(out)})
	return out, nil
}

// Lookup returns every known selector for one element on a page (pageURL
// may be a host), best first, failing ones included (last), stale ones
// left out: replay does not try what stopped holding.
func (s *Store) Lookup(ctx context.Context, pageURL, role, name string) ([]Selector, error) {
	host, err := domain.Host(pageURL)
	if err != nil {
		return nil, engine.Invalid("selector", fmt.Sprintf("url: %v", err))
	}
	path := ""
	if u, err := url.Parse(pageURL); err == nil && strings.Contains(pageURL, "://") {
		path = domain.PathScope(u.EscapedPath())
	}
	r, _, nk := normIdentity(role, name)
	all, err := s.scan(ctx, host, applies)
	if err != nil {
		return nil, fmt.Errorf("selector: lookup %s %s %q: %w", pageURL, role, name, err)
	}
	var out []Selector
	for _, sl := range all {
		if sl.Role == r && strings.ToLower(sl.Name) == nk && sl.Stale == nil && (sl.Path == "" || sl.Path == path) {
			out = append(out, sl)
		}
	}
	return out, nil
}

// List returns every selector kept for host and related hosts ("" = every
// site), best first.
func (s *Store) List(ctx context.Context, host string) ([]Selector, error) {
	h := ""
	if host != "" {
		var err error
		if h, err = domain.Host(host); err != nil {
			return nil, engine.Invalid("selector", fmt.Sprintf("domain: %v", err))
		}
	}
	out, err := s.scan(ctx, h, related)
	if err != nil {
		return nil, fmt.Errorf("selector: list %s: %w", host, err)
	}
	return out, nil
}

// selectors is where selectors are kept and how they are listed; its
// cache holds each site's decoded selectors (see sitecache), so a context
// build per step does not decode them again.
var selectors = &sitecache.Kind[Selector]{
	Cache:  sitecache.New[[]Selector](64),
	Gen:    keyspace.SelectorGen,
	Prefix: keyspace.Selectors,
	Is:     keyspace.IsSelector,
	Domain: func(sl *Selector) string { return sl.Domain },
	Pos:    listPos,
}

// scan returns the selectors kept for a host r with match(host, r) (every
// site's for host ""), in List's order.
func (s *Store) scan(ctx context.Context, host string, match func(h, r string) bool) ([]Selector, error) {
	return selectors.List(ctx, s.db, host, match)
}

// CursorKind names selector cursors (see engine/listing).
const CursorKind = "selector"

// listPos is a selector's position in List's order: best score first, then
// most recent success, then by host, path, role, name and selector run
// together (then apart, so the position is unique).
func listPos(s *Selector) string {
	return listing.IntDesc(s.Score()) + listing.TimeDesc(s.LastSuccess) +
		s.Domain + s.Path + s.Role + s.Name + s.Selector +
		"\x00" + s.Domain + "\x00" + s.Path + "\x00" + s.Role + "\x00" + s.Name + "\x00" + s.Selector
}

// Page returns one page of what List(ctx, host) returns, in the same
// order: at most req.Limit after req.Cursor, and the cursor of the next
// page ("" after the last). A selector whose score and last success did
// not change between pages is neither repeated nor skipped. A cursor that
// is not one of a selector page is engine.ErrInvalid.
//
// Cost: not proportional to the page. Selectors are kept by element and
// their order (score) changes with every success or failure, so a page
// reads what List reads, the host's site's selectors (bounded by one
// site's data, and usually from the in-process cache), or every site's
// without a host, and sorts them.
func (s *Store) Page(ctx context.Context, host string, req listing.Request) (listing.Result[Selector], error) {
	return listing.SlicePage(CursorKind, req, 40, listPos, func() ([]Selector, error) { return s.List(ctx, host) })
}

// Attribution is what runs' steps did with one selector: how many showed
// it, used its element, and were helped by it.
type Attribution struct {
	Domain   string `json:"domain"`         // host or URL
	Path     string `json:"path,omitempty"` // the selector's path scope
	Role     string `json:"role"`
	Name     string `json:"name"`
	Selector string `json:"selector"`
	engine.Counts
}

// Attribute adds each attribution's counts to its selector, all in one
// transaction, and returns how many selectors it updated: a selector no
// longer kept (deleted, or never stored) is skipped, not an error. A
// selector written by a program that reaches engine.PruneUnhelpfulAfter
// shown without ever helping is removed there (attribution.Learned;
// selector_pruned): counts change nowhere else.
func (s *Store) Attribute(ctx context.Context, as []Attribution) (int, error) {
	ups := make([]attribution.Update, 0, len(as))
	for _, a := range as {
		if err := a.Counts.Check("selector attribution"); err != nil {
			return 0, err
		}
		host, role, _, nameKey, sel, err := normalise(a.Domain, a.Role, a.Name, a.Selector)
		if err != nil {
			return 0, err
		}
		path, err := checkedPath(a.Path)
		if err != nil {
			return 0, err
		}
		site := domain.Site(host)
		ups = append(ups, attribution.Update{Key: keyspace.Selector(site, host, pathPart(path), role, nameKey, selHash(sel)), Site: site, Counts: a.Counts})
	}
	n := 0
	var pruned []Selector
	err := s.db.Update(ctx, func(tx kv.Txn) (err error) {
		pruned = pruned[:0]
		n, err = attribution.AddAll(tx, ups, attribution.Options[Selector]{
			Counts: func(sl *Selector) *engine.Counts { return &sl.Counts },
			Gen:    keyspace.SelectorGen,
			Version: func(tx kv.Txn, sl *Selector, old []byte) error {
				return s.keep(tx, history.OpAttribute, sl, old)
			},
			Prune: func(sl *Selector) bool {
				if !attribution.Learned(sl.Provenance, sl.Counts) {
					return false
				}
				pruned = append(pruned, *sl)
				return true
			},
		})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("selector: attribute %d selectors: %w", len(as), err)
	}
	for _, sl := range pruned {
		s.ev.Emit(EventPruned, map[string]any{"domain": sl.Domain, "path": sl.Path, "role": sl.Role, "name": sl.Name,
			"selector": sl.Selector, "shown": sl.Shown, "reason": "unhelpful"})
	}
	return n, nil
}
