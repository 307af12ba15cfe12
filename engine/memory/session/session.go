// Package session is the rolling session history: the last few runs on each
// site (what the agent was asked, what it accomplished, where it ended up),
// so the next run on the site continues where the previous ones left off.
//
// Sessions are kept per site (the registrable domain, eTLD+1): a run that
// starts on example.com and ends on app.example.com is one site's history.
// Each record keeps the host it ended on. Recording a session trims the
// site's history to the newest Keep (default 5) in the same transaction.
package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory/internal/check"
	"github.com/engine-dev/engine/engine/memory/internal/decoded"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// DefaultKeep is how many sessions a site keeps.
const DefaultKeep = 5

// EventRecorded is the memory event emitted when a session is recorded.
const EventRecorded = "session_recorded"

// Session is one finished run as the next runs on the site see it. The
// fields are the trajectory-memory design's Session, in snake_case.
type Session struct {
	// ID groups related runs: orchestrator-provided (--session-id) or, when
	// empty, derived from the record.
	ID string `json:"id"`
	// RunID is the run registry's id of the run, when it has one.
	RunID string `json:"run_id,omitempty"`
	// Domain is the host the run ended on.
	Domain     string    `json:"domain"`
	Goal       string    `json:"goal"`
	Outcome    string    `json:"outcome"` // the agent's own words
	Success    bool      `json:"success"`
	FinalURL   string    `json:"final_url"`
	Timestamp  time.Time `json:"timestamp"` // when the run ended
	TurnsUsed  int       `json:"turns_used"`
	DurationMS int64     `json:"duration_ms"`
	// Provenance is who recorded the session (a run, a person, an import).
	// It is not part of the record's identity: the same session imported
	// twice is stored once.
	Provenance engine.Provenance `json:"provenance,omitzero"`
}

// Options configure a Store.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Events receives memory events; nil drops them.
	Events event.Func
	// Provenance is who writes through this store: stamped on the
	// records it writes.
	Provenance engine.Provenance
	// Keep is how many sessions a site keeps (default 5).
	Keep int
}

// Store is the session history over a kv.Store. It is safe for concurrent
// use.
type Store struct {
	db   kv.Store
	opts Options
}

// New returns the session history kept in db.
func New(db kv.Store, opts Options) *Store {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Keep <= 0 {
		opts.Keep = DefaultKeep
	}
	return &Store{db: db, opts: opts}
}

// normalize fills defaults and checks s before it is stored.
func (st *Store) normalize(s *Session) error {
	s.ID = strings.TrimSpace(s.ID)
	s.RunID = strings.TrimSpace(s.RunID)
	s.Goal = strings.TrimSpace(s.Goal)
	s.Outcome = strings.TrimSpace(s.Outcome)
	s.FinalURL = strings.TrimSpace(s.FinalURL)
	if s.Goal == "" {
		return engine.Invalid("session", "the goal is empty")
	}
	if s.FinalURL != "" {
		if _, err := domain.Host(s.FinalURL); err != nil {
			return engine.Invalid("session", fmt.Sprintf("final_url: %v", err))
		}
	}
	d := s.Domain
	if d == "" {
		d = s.FinalURL
	}
	h, p := check.Domain(d, "final URL")
	if p != "" {
		return engine.Invalid("session", p)
	}
	s.Domain = h
	if s.TurnsUsed < 0 {
		return engine.Invalid("session", fmt.Sprintf("turns_used %d is negative", s.TurnsUsed))
	}
	if s.DurationMS < 0 {
		return engine.Invalid("session", fmt.Sprintf("duration_ms %d is negative", s.DurationMS))
	}
	if s.Timestamp.IsZero() {
		s.Timestamp = st.opts.Now()
	}
	s.Timestamp = s.Timestamp.UTC()
	if err := s.Provenance.Check(); err != nil {
		return err
	}
	if s.ID == "" {
		s.ID = "s" + hash(s)[:12]
	}
	if s.Provenance == (engine.Provenance{}) {
		s.Provenance = st.opts.Provenance.Stamp(st.opts.Now(), domain.Site(h))
	}
	return nil
}

// hash is the hex SHA-256 of the record without its provenance (so a
// record stored before provenance keeps its key): the tail of its key.
func hash(s *Session) string {
	c := *s
	c.Provenance = engine.Provenance{}
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// tail is where s sits in its site's history: "<when>/<shash>", the end
// of its key.
func tail(s *Session) string {
	return keyspace.Stamp(s.Timestamp) + "/" + hash(s)[:16]
}

// Record stores a finished run's session and trims the site's history to
// the newest Keep. It returns the stored session (with defaults filled in).
func (st *Store) Record(ctx context.Context, s Session) (Session, error) {
	if err := st.normalize(&s); err != nil {
		return Session{}, err
	}
	site := domain.Site(s.Domain)
	b, err := json.Marshal(s)
	if err != nil {
		return Session{}, fmt.Errorf("session: record %s: encode: %w", s.ID, err)
	}
	err = st.db.Update(ctx, func(tx kv.Txn) error {
		return st.put(tx, site, []Session{s}, [][]byte{b})
	})
	if err != nil {
		return Session{}, fmt.Errorf("session: record %s on %s: %w", s.ID, site, err)
	}
	st.opts.Events.Emit(EventRecorded, map[string]any{
		"id": s.ID, "domain": s.Domain, "goal": s.Goal, "success": s.Success,
	})
	return s, nil
}

// put writes ss (sessions of site, encoded as enc) beside the site's kept
// sessions and trims the history to the newest Keep, in tx. It reads and
// rewrites the site's session-gen (counter and kept list), so two
// concurrent writers conflict instead of each missing the other's new
// record (a phantom) and leaving more than Keep. It reads no range: the
// kept list says which sessions exist, so the tombstones of the trimmed
// ones are never walked. A store written before the list is scanned once
// here, and listed from then on.
func (st *Store) put(tx kv.Txn, site string, ss []Session, enc [][]byte) error {
	h, err := readHistory(tx, site)
	if err != nil {
		return err
	}
	if !h.listed {
		if h.tails, err = scanTails(tx, site); err != nil {
			return err
		}
	}
	stored := make(map[string]bool, len(h.tails))
	for _, t := range h.tails {
		stored[t] = true
	}
	tails := slices.Clone(h.tails)
	added := make([]string, len(ss))
	seen := maps.Clone(stored)
	for i := range ss {
		added[i] = tail(&ss[i])
		if !seen[added[i]] {
			seen[added[i]] = true
			tails = append(tails, added[i])
		}
	}
	slices.SortFunc(tails, func(a, b string) int { return strings.Compare(b, a) }) // newest first
	keep := tails[:min(len(tails), st.opts.Keep)]
	for i, t := range added {
		if slices.Contains(keep, t) {
			if err := tx.Set(keyspace.SessionAt(site, t), enc[i], 0); err != nil {
				return err
			}
		}
	}
	for _, t := range tails[len(keep):] {
		if stored[t] { // a new session older than the kept ones was never written
			if err := tx.Delete(keyspace.SessionAt(site, t)); err != nil {
				return err
			}
		}
	}
	h.gen++
	h.tails = keep
	return tx.Set(keyspace.SessionGen(site), h.encode(), 0)
}

// history is what a site's session-gen holds: the write counter and the
// tails of the kept sessions, newest first.
type history struct {
	gen   int
	tails []string
	// listed is false for a counter written before the list (or a
	// damaged one): which sessions exist is then known only by scanning
	// the site's range.
	listed bool
}

// readHistory reads site's session-gen. A site without one has no
// sessions: every session write of every layout has written it.
func readHistory(r kv.Reader, site string) (history, error) {
	v, err := r.Get(keyspace.SessionGen(site))
	if errors.Is(err, kv.ErrNotFound) {
		return history{listed: true}, nil
	}
	if err != nil {
		return history{}, err
	}
	return parseHistory(v), nil
}

// parseHistory decodes "<gen>;<tail>,<tail>,...". A bare "<gen>" (the
// layout before the list), a tail that is not "<16 hex>/<16 hex>" or tails
// out of order yield a history that is not listed.
func parseHistory(v []byte) history {
	g, list, listed := strings.Cut(string(v), ";")
	gen, _ := strconv.Atoi(g)
	h := history{gen: gen}
	if !listed {
		return h
	}
	if list != "" {
		for t := range strings.SplitSeq(list, ",") {
			if !validTail(t) || (len(h.tails) > 0 && t >= h.tails[len(h.tails)-1]) {
				return history{gen: gen}
			}
			h.tails = append(h.tails, t)
		}
	}
	h.listed = true
	return h
}

func (h history) encode() []byte {
	return []byte(strconv.Itoa(h.gen) + ";" + strings.Join(h.tails, ","))
}

// validTail reports whether t is "<16 hex digits>/<16 hex digits>".
func validTail(t string) bool {
	when, hash, ok := strings.Cut(t, "/")
	return ok && len(when) == 16 && len(hash) == 16 && listing.HexPrefix(when, 16) && listing.HexPrefix(hash, 16)
}

// scanTails lists the tails of the sessions in site's range, newest
// first: how a history written before the list is read.
func scanTails(r kv.Reader, site string) ([]string, error) {
	var out []string
	prefix := keyspace.Sessions(site)
	err := r.Scan(prefix, kv.ScanOptions{Reverse: true, KeysOnly: true}, func(k, _ []byte) error {
		out = append(out, string(k[len(prefix):]))
		return nil
	})
	return out, err
}

// Recent returns up to n of the newest sessions on host's site, newest
// first; n <= 0 means all that are kept.
func (st *Store) Recent(ctx context.Context, host string, n int) ([]Session, error) {
	h, err := domain.Host(host)
	if err != nil {
		return nil, engine.Invalid("session", fmt.Sprintf("domain: %v", err))
	}
	site := domain.Site(h)
	var out []Session
	err = st.db.View(ctx, func(r kv.Reader) error {
		out = out[:0]
		return eachKept(r, site, nil, func(_ []byte, s Session) error {
			out = append(out, s)
			if len(out) == n {
				return kv.ErrStop
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("session: recent %s: %w", site, err)
	}
	return out, nil
}

// eachKept calls fn with site's kept sessions, newest first, from the one
// just older than the key before (nil: from the newest). Returning
// kv.ErrStop ends it without error. It reads the kept list and each
// session by Get; a history written before the list is scanned. A listed
// session whose record is gone is skipped.
func eachKept(r kv.Reader, site string, before []byte, fn func(k []byte, s Session) error) error {
	h, err := readHistory(r, site)
	if err != nil {
		return err
	}
	if !h.listed {
		return scanSite(r, site, kv.ScanOptions{Reverse: true, Start: before}, func(k []byte, s Session) error {
			if before != nil && string(k) == string(before) {
				return nil
			}
			return fn(k, s)
		})
	}
	for _, t := range h.tails {
		k := keyspace.SessionAt(site, t)
		if before != nil && string(k) >= string(before) {
			continue
		}
		v, err := r.Get(k)
		if errors.Is(err, kv.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		s, err := decodedSessions.Unmarshal(k, v)
		if err != nil {
			return fmt.Errorf("decode %s: %w", k, err)
		}
		if err := fn(k, s); err != nil {
			if errors.Is(err, kv.ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// decodedSessions holds the sessions last read by key, decoded: a site's kept
// sessions are read at every step of a run. A Session holds no pointer,
// slice or map: a copy shares nothing.
var decodedSessions = decoded.New[Session](256, nil)

// scanSite decodes site's sessions in the order opts scans them.
func scanSite(r kv.Reader, site string, opts kv.ScanOptions, fn func(k []byte, s Session) error) error {
	return r.Scan(keyspace.Sessions(site), opts, func(k, v []byte) error {
		var s Session
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("decode %s: %w", k, err)
		}
		return fn(k, s)
	})
}

// Filter selects sessions for List. Zero values select everything.
type Filter struct {
	Domain    string // sessions on this host's site
	SessionID string // sessions with this id
	Success   *bool  // only sessions that succeeded (true) or failed (false)
	Limit     int    // at most this many
}

// CursorKind names session cursors (see engine/listing).
const CursorKind = "session"

// ParseOutcome reads a status filter: "completed" (or "succeeded") and
// "failed" select by outcome, "" selects all; ok is false for anything
// else, and the caller names the problem in its own terms.
func ParseOutcome(status string) (success *bool, ok bool) {
	switch status {
	case "":
		return nil, true
	case "completed", "succeeded":
		yes := true
		return &yes, true
	case "failed":
		no := false
		return &no, true
	}
	return nil, false
}

// List returns the sessions that pass f, newest first (ties: by site, then
// newest key first). Without a domain it visits each site's (short)
// history in turn.
func (st *Store) List(ctx context.Context, f Filter) ([]Session, error) {
	site, err := f.site()
	if err != nil {
		return nil, err
	}
	var out []Session
	err = st.db.View(ctx, func(r kv.Reader) error {
		ps, err := gather(r, f, site)
		if err != nil {
			return err
		}
		out = make([]Session, 0, len(ps))
		for _, p := range ps {
			out = append(out, p.s)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("session: list: %w", err)
	}
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

func (f Filter) site() (string, error) {
	if f.Domain == "" {
		return "", nil
	}
	h, err := domain.Host(f.Domain)
	if err != nil {
		return "", engine.Invalid("session", fmt.Sprintf("domain: %v", err))
	}
	return domain.Site(h), nil
}

// Page returns one page of the sessions List(ctx, f) returns, in the same
// order: at most req.Limit after req.Cursor, and the cursor of the next
// page ("" after the last). f.Limit is ignored. A session's position (end
// time, site, record hash) never changes, so writes between pages never
// repeat or skip one (the trim to the newest Keep per site may delete
// some). A cursor that is not one of a session page of this filter's site
// is engine.ErrInvalid.
//
// Cost: with a domain, the site's kept list and the kept sessions after
// the cursor, by Get, up to limit+1 that pass the id and success filters
// (a site keeps at most Keep). Without a domain, every site's history is
// read and sorted (at most Keep per site): bounded by the number of sites,
// not the page.
func (st *Store) Page(ctx context.Context, f Filter, req listing.Request) (listing.Result[Session], error) {
	var res listing.Result[Session]
	site, err := f.site()
	if err != nil {
		return res, err
	}
	// A position must name a session key, of this site's list when there
	// is a site.
	n, after, err := req.Open(CursorKind, func(pos string) bool {
		k := posKey(pos)
		return k != nil && (site == "" || strings.HasPrefix(string(k), string(keyspace.Sessions(site))))
	})
	if err != nil {
		return res, err
	}
	start := posKey(after) // nil for the first page
	err = st.db.View(ctx, func(r kv.Reader) error {
		if site == "" {
			ps, err := gather(r, f, "")
			if err != nil {
				return err
			}
			pr, err := listing.Slice(CursorKind, ps, listing.Request{Limit: n, Cursor: req.Cursor}, func(p *positioned) string { return p.pos })
			if err != nil {
				return err
			}
			res.Next = pr.Next
			for _, p := range pr.Items {
				res.Items = append(res.Items, p.s)
			}
			return nil
		}
		more, last := false, ""
		err := eachKept(r, site, start, func(k []byte, s Session) error {
			if !f.keep(&s) {
				return nil
			}
			if len(res.Items) == n {
				more = true
				return kv.ErrStop
			}
			res.Items = append(res.Items, s)
			last = keyPos(k)
			return nil
		})
		if more {
			res.Next = listing.Encode(CursorKind, last)
		}
		return err
	})
	if err != nil {
		if engine.IsInvalid(err) {
			return listing.Result[Session]{}, err
		}
		return listing.Result[Session]{}, fmt.Errorf("session: page: %w", err)
	}
	if res.Items == nil {
		res.Items = []Session{}
	}
	return res, nil
}

func (f Filter) keep(s *Session) bool {
	return (f.SessionID == "" || s.ID == f.SessionID) && (f.Success == nil || s.Success == *f.Success)
}

// positioned is a session with its position in the list:
// "<when, reversed>/<site>/<hash, reversed>" (hex digits reversed so that
// newer sorts first; site as in its key).
type positioned struct {
	pos string
	s   Session
}

// keyPos returns the position of the session stored at key
// site/<site>/session/<when>/<hash>, "" for another key.
func keyPos(k []byte) string {
	parts := strings.Split(string(k), "/")
	if len(parts) != 5 || parts[0] != "site" || parts[2] != "session" {
		return ""
	}
	return listing.HexDesc(parts[3]) + "/" + parts[1] + "/" + listing.HexDesc(parts[4])
}

// posKey is keyPos reversed: the key of a position, nil for a position of
// another shape.
func posKey(pos string) []byte {
	parts := strings.Split(pos, "/")
	if len(parts) != 3 || !listing.HexPrefix(parts[0], 16) || len(parts[0]) != 16 ||
		!listing.HexPrefix(parts[2], 16) || len(parts[2]) != 16 || parts[1] == "" {
		return nil
	}
	if _, err := url.PathUnescape(parts[1]); err != nil {
		return nil
	}
	return []byte("site/" + parts[1] + "/session/" + listing.HexDesc(parts[0]) + "/" + listing.HexDesc(parts[2]))
}

// gather reads the sessions that pass f, of site or (site "") every site,
// in list order.
func gather(r kv.Reader, f Filter, site string) ([]positioned, error) {
	var out []positioned
	visit := func(site string) error {
		return eachKept(r, site, nil, func(k []byte, s Session) error {
			if f.keep(&s) {
				out = append(out, positioned{keyPos(k), s})
			}
			return nil
		})
	}
	var err error
	if site != "" {
		err = visit(site)
	} else {
		err = EachSite(r, visit)
	}
	if err != nil {
		return nil, err
	}
	listing.SortBy(out, func(p *positioned) string { return p.pos })
	return out, nil
}

// EachSite calls fn for every site that has memory, in key order, with one
// small seek per site (it never reads a site's whole range).
func EachSite(r kv.Reader, fn func(site string) error) error {
	start := keyspace.SitesPrefix()
	for {
		var next []byte
		err := r.Scan(keyspace.SitesPrefix(), kv.ScanOptions{Start: start, KeysOnly: true, Limit: 1}, func(k, _ []byte) error {
			next = slices.Clone(k)
			return nil
		})
		if err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		site, err := keyspace.SiteOf(next)
		if err != nil {
			return err
		}
		if err := fn(site); err != nil {
			return err
		}
		start = kv.PrefixEnd(keyspace.SitePrefix(site))
		if start == nil {
			return nil
		}
	}
}

// Prepare validates sessions for Import; an invalid one is reported by its
// position.
func (st *Store) Prepare(sessions []Session) ([]Session, error) {
	out := make([]Session, 0, len(sessions))
	for i, s := range sessions {
		if err := st.normalize(&s); err != nil {
			return nil, fmt.Errorf("sessions[%d]: %w", i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// Import writes sessions prepared by Prepare beside the stored ones (the
// same session imported twice is stored once) and trims each site's
// history to the newest Keep.
func (st *Store) Import(ctx context.Context, sessions []Session) error {
	bySite := map[string][]Session{}
	var sites []string
	for _, s := range sessions {
		site := domain.Site(s.Domain)
		if _, ok := bySite[site]; !ok {
			sites = append(sites, site)
		}
		bySite[site] = append(bySite[site], s)
	}
	for _, site := range sites {
		ss := bySite[site]
		enc := make([][]byte, len(ss))
		for i := range ss {
			b, err := json.Marshal(ss[i])
			if err != nil {
				return fmt.Errorf("session: import %s: encode %s: %w", site, ss[i].ID, err)
			}
			enc[i] = b
		}
		err := st.db.Update(ctx, func(tx kv.Txn) error { return st.put(tx, site, ss, enc) })
		if err != nil {
			return fmt.Errorf("session: import %s: %w", site, err)
		}
	}
	return nil
}
