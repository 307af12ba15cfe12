// Package run is the run registry: one manifest per agent run (its goal,
// site, URLs, status, times, summary, artifacts and result) for the
// orchestration layer to list, inspect, resume and fork runs.
//
// Manifests are global, looked up by run id; index entries by start time,
// status, session id and site make every List filter a prefix scan, newest
// first, so listing never reads every manifest when a filter can use an
// index. The site entry lies in the site's key range.
package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory/internal/check"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/memory/session"
	"github.com/engine-dev/engine/kv"
)

// Status is where a run is in its life.
type Status string

// The run statuses.
const (
	Running   Status = "running"
	Completed Status = "completed"
	Failed    Status = "failed"
	// Crashed is never stored: Get and List show it for a run stored as
	// running whose process (Manifest.Owner) is gone.
	Crashed Status = "crashed"
)

// Statuses lists the valid statuses (for filters and display).
var Statuses = []Status{Running, Completed, Failed, Crashed}

// stored lists the statuses a manifest is stored with.
var stored = []Status{Running, Completed, Failed}

// ParseStatus returns the status named s, or an engine.ErrInvalid error listing the
// valid ones.
func ParseStatus(s string) (Status, error) {
	st := Status(strings.TrimSpace(s))
	if slices.Contains(Statuses, st) {
		return st, nil
	}
	return "", engine.Invalid("run", fmt.Sprintf("unknown status %q (want running, completed, failed or crashed)", s))
}

// IDPattern is what a run id looks like: it names the run's artifact
// folder <data-dir>/runs/<id>, so it is one safe path element.
const IDPattern = `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`

// idRe is compiled on first use: its bounded repetition makes a large
// program, which every process linking this package would otherwise build
// at start-up (about 0.5 ms of a memory command's few).
var idRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^` + IDPattern + `$`) })

// maxIDLen is the longest run id IDPattern allows.
const maxIDLen = 64

// CheckID returns an *InvalidError when id is not a valid run id:
// IDPattern (a letter or digit, then at most 63 letters, digits, '.', '_'
// or '-') and no "..".
func CheckID(id string) error {
	switch {
	case id == "":
		return engine.Invalid("run", "the run id is empty")
	case len(id) > maxIDLen:
		return engine.Invalid("run", fmt.Sprintf("run id %q… is %d characters long (at most 64)", id[:16], len(id)))
	case !idRe().MatchString(id) || strings.Contains(id, ".."):
		return engine.Invalid("run", fmt.Sprintf("run id %q: use letters, digits, '.', '_' and '-', starting with a letter or digit, no \"..\" (%s)", id, IDPattern))
	}
	return nil
}

// Memory event names.
const (
	EventStarted   = "run_started"
	EventCompleted = "run_completed"
)

// Manifest is one run as the registry keeps it. The fields are the
// trajectory-memory design's RunManifest, in snake_case.
type Manifest struct {
	RunID       string    `json:"run_id"`
	SessionID   string    `json:"session_id,omitempty"`
	ParentRunID string    `json:"parent_run_id,omitempty"`
	Status      Status    `json:"status"`
	Goal        string    `json:"goal"`
	Domain      string    `json:"domain"` // host the run started on
	StartURL    string    `json:"start_url,omitempty"`
	FinalURL    string    `json:"final_url,omitempty"`
	CurrentURL  string    `json:"current_url,omitempty"` // updated while the run goes
	StartedAt   time.Time `json:"started_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	CompletedAt time.Time `json:"completed_at,omitzero"`
	// Success is set once the run finished.
	Success       *bool    `json:"success,omitempty"`
	Summary       string   `json:"summary,omitempty"`
	ArtifactPaths []string `json:"artifact_paths"`
	TurnCount     int      `json:"turn_count"`
	Result        string   `json:"result,omitempty"`
	Reason        string   `json:"reason,omitempty"`
	// Owner is the process running the run (set by the agent loop; none
	// for a run registered with engine runs create), HeartbeatAt the last
	// time it reported (Start, every Update).
	Owner       *Owner    `json:"owner,omitempty"`
	HeartbeatAt time.Time `json:"heartbeat_at,omitzero"`
	// Replay is how a replayed run followed its trajectory (nil when it
	// replayed none).
	Replay *Replay `json:"replay,omitempty"`
}

// Replay is a run's replay of a trajectory: how many of its steps ran
// and, when it fell back to the model (or failed without one), at which
// step and why.
type Replay struct {
	Trajectory string `json:"trajectory"`
	Replayed   int    `json:"replayed"`               // steps replayed, a replayed finish included (the agent's Result.Replayed)
	FellBackAt int    `json:"fell_back_at,omitempty"` // the trajectory's step, 1-based; 0 when it did not
	Reason     string `json:"reason,omitempty"`
}

// WebURL reports whether u is an http or https URL with a host: a page a
// run can start at and a site's history can name. about:blank, data:,
// file: and chrome-error: pages are valid run states but not that.
func WebURL(u string) bool {
	p, err := url.Parse(strings.TrimSpace(u))
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Hostname() != ""
}

func firstWeb(us ...string) string {
	for _, u := range us {
		if WebURL(u) {
			return strings.TrimSpace(u)
		}
	}
	return ""
}

// Clone returns a deep copy of m: nothing it reaches is shared with m,
// so the copy can be changed (redacted, say) and m stays as it was.
func (m *Manifest) Clone() *Manifest {
	c := *m
	c.ArtifactPaths = slices.Clone(m.ArtifactPaths)
	if m.Success != nil {
		v := *m.Success
		c.Success = &v
	}
	if m.Owner != nil {
		o := *m.Owner
		c.Owner = &o
	}
	if m.Replay != nil {
		r := *m.Replay
		c.Replay = &r
	}
	return &c
}

// Session returns the session-history entry of a finished run, for
// session.Store.Record; outcome is the summary, or the result, or the
// reason it failed.
func (m *Manifest) Session() session.Session {
	s := session.Session{
		ID: m.SessionID, RunID: m.RunID, Domain: m.Domain, Goal: m.Goal,
		Success: m.Success != nil && *m.Success, FinalURL: m.FinalURL,
		Timestamp: m.CompletedAt, TurnsUsed: m.TurnCount,
		Outcome: cmpOr(m.Summary, m.Result, m.Reason),
	}
	if s.ID == "" {
		s.ID = m.RunID
	}
	// The history names the last web page: a run may end on about:blank.
	s.FinalURL = firstWeb(m.FinalURL, m.CurrentURL, m.StartURL)
	if !m.CompletedAt.IsZero() {
		s.DurationMS = m.CompletedAt.Sub(m.StartedAt).Milliseconds()
	}
	if s.Timestamp.IsZero() {
		s.Timestamp = m.UpdatedAt
	}
	return s
}

func cmpOr(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// ErrNotFound is returned for a run id the registry does not hold.
var ErrNotFound = engine.NotFound("no such run")

// ErrExists is returned when starting a run whose id is taken.
var ErrExists = errors.New("run id already exists")

// ErrFinished is returned when updating or completing a run that has
// already completed or failed.
var ErrFinished = errors.New("run already finished")

// Options configure a Store.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Events receives memory events; nil drops them.
	Events event.Func
	// Rand is the source of the random part of generated ids; nil means a
	// random source.
	Rand *rand.Rand
	// Alive tells whether a running run's process is still there; nil
	// means ProcessAlive.
	Alive func(Owner) bool
}

// Store is the run registry over a kv.Store. It is safe for concurrent use.
type Store struct {
	db   kv.Store
	opts Options
}

// New returns the run registry kept in db.
func New(db kv.Store, opts Options) *Store {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Alive == nil {
		opts.Alive = ProcessAlive
	}
	return &Store{db: db, opts: opts}
}

// derive shows a run stored as running whose process is gone as crashed,
// with the reason. Nothing is written: the stored state stays the owner's.
func (s *Store) derive(m *Manifest) {
	if m.Status != Running || m.Owner == nil || s.opts.Alive(*m.Owner) {
		return
	}
	beat := m.HeartbeatAt
	if beat.IsZero() {
		beat = m.UpdatedAt
	}
	m.Status = Crashed
	m.Reason = fmt.Sprintf("crashed: process %d on %s is gone (last heartbeat %s)", m.Owner.PID, m.Owner.Host, beat.Format(time.RFC3339))
}

// NewID returns a fresh run id: run_<unix ms>_<6 base-36 chars>.
func (s *Store) NewID() string { return s.newID("run") }

func (s *Store) newID(prefix string) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 6)
	for i := range b {
		if s.opts.Rand != nil {
			b[i] = digits[s.opts.Rand.IntN(len(digits))]
		} else {
			b[i] = digits[rand.IntN(len(digits))]
		}
	}
	return fmt.Sprintf("%s_%d_%s", prefix, s.opts.Now().UnixMilli(), b)
}

// indexKeys are the index entries a stored manifest needs.
func indexKeys(m *Manifest) [][]byte {
	at := keyspace.Stamp(m.StartedAt)
	keys := [][]byte{
		keyspace.RunByTime(at, m.RunID),
		keyspace.RunByStatus(string(m.Status), at, m.RunID),
		keyspace.SiteRun(domain.Site(m.Domain), at, m.RunID),
	}
	if m.SessionID != "" {
		keys = append(keys, keyspace.RunBySession(m.SessionID, at, m.RunID))
	}
	return keys
}

// put writes m (whose previous state was old, or nil) and keeps its index
// entries in step, in tx.
func put(tx kv.Txn, old, m *Manifest) error {
	if old != nil {
		if err := removeIndexes(tx, old); err != nil {
			return err
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := tx.Set(keyspace.Run(m.RunID), b, 0); err != nil {
		return err
	}
	for _, k := range indexKeys(m) {
		if err := tx.Set(k, nil, 0); err != nil {
			return err
		}
	}
	return nil
}

func removeIndexes(tx kv.Txn, m *Manifest) error {
	for _, k := range indexKeys(m) {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

func load(r kv.Reader, id string) (*Manifest, error) {
	b, err := r.Get(keyspace.Run(id))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("run %s: decode: %w", id, err)
	}
	return &m, nil
}

// Get returns the manifest of run id; a running run whose process is gone
// is shown as crashed.
func (s *Store) Get(ctx context.Context, id string) (*Manifest, error) {
	var m *Manifest
	err := s.db.View(ctx, func(r kv.Reader) error {
		var err error
		m, err = load(r, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.derive(m)
	return m, nil
}

// Start describes a run that begins.
type Start struct {
	RunID       string // "" to generate one
	SessionID   string
	ParentRunID string
	Goal        string
	Domain      string // "" to take the start URL's host
	StartURL    string
	// Owner is the process that runs the run (Self()), so that readers can
	// tell when it is gone; nil for a run some other program drives.
	Owner *Owner
}

// Start registers a run as running and returns its manifest.
func (s *Store) Start(ctx context.Context, in Start) (*Manifest, error) {
	now := s.opts.Now().UTC()
	m := &Manifest{
		RunID: strings.TrimSpace(in.RunID), SessionID: strings.TrimSpace(in.SessionID),
		ParentRunID: strings.TrimSpace(in.ParentRunID), Status: Running,
		Goal: in.Goal, Domain: in.Domain, StartURL: strings.TrimSpace(in.StartURL),
		StartedAt: now, UpdatedAt: now, ArtifactPaths: []string{},
		Owner: in.Owner, HeartbeatAt: now,
	}
	if m.RunID == "" {
		m.RunID = s.NewID()
	}
	if err := normalize(m); err != nil {
		return nil, err
	}
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		_, err := tx.Get(keyspace.Run(m.RunID))
		if err == nil {
			return ErrExists
		}
		if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		return put(tx, nil, m)
	})
	if err != nil {
		return nil, fmt.Errorf("run: start %s: %w", m.RunID, err)
	}
	s.opts.Events.Emit(EventStarted, map[string]any{"run_id": m.RunID, "domain": m.Domain, "goal": m.Goal, "session_id": m.SessionID})
	return m, nil
}

// normalize cleans and checks a manifest before it is stored.
func normalize(m *Manifest) error {
	m.Goal = strings.TrimSpace(m.Goal)
	// Control characters and bad UTF-8 first: that message names the
	// character, which the pattern's would not.
	for _, f := range []struct {
		name, v string
		max     int
	}{{"run id", m.RunID, maxIDLen}, {"session id", m.SessionID, check.MaxWord}, {"parent run id", m.ParentRunID, check.MaxWord}} {
		if p := check.Text(f.name, f.v, f.max, false); p != "" {
			return engine.Invalid("run", p)
		}
	}
	if err := CheckID(m.RunID); err != nil {
		return err
	}
	if m.Goal == "" {
		return engine.Invalid("run", "the goal is empty")
	}
	if _, err := ParseStatus(string(m.Status)); err != nil {
		return err
	}
	if !slices.Contains(stored, m.Status) {
		return engine.Invalid("run", fmt.Sprintf("status %q is shown, never stored (want running, completed or failed)", m.Status))
	}
	// Any URL is a state a run can be in (about:blank after back on the
	// first page, data:, file:, chrome-error://): recorded as it is.
	for _, u := range []struct{ name, v string }{{"start_url", m.StartURL}, {"final_url", m.FinalURL}, {"current_url", m.CurrentURL}} {
		if u.v != "" {
			if p, err := url.Parse(u.v); err != nil || p.Scheme == "" {
				return engine.Invalid("run", fmt.Sprintf("%s %q is not a URL", u.name, u.v))
			}
		}
	}
	d := strings.TrimSpace(m.Domain)
	if d == "" && WebURL(m.StartURL) {
		d = m.StartURL
	}
	if d == "" && m.StartURL != "" {
		// A URL was given, but it names no site.
		return engine.Invalid("run", fmt.Sprintf("no domain: start_url %q names no web site: give the domain too", m.StartURL))
	}
	h, p := check.Domain(d, "start URL")
	if p != "" {
		return engine.Invalid("run", p)
	}
	m.Domain = h
	if m.TurnCount < 0 {
		return engine.Invalid("run", fmt.Sprintf("turn_count %d is negative", m.TurnCount))
	}
	if m.StartedAt.IsZero() {
		return engine.Invalid("run", "started_at is missing")
	}
	m.StartedAt = m.StartedAt.UTC()
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.StartedAt
	}
	m.UpdatedAt = m.UpdatedAt.UTC()
	m.HeartbeatAt = m.HeartbeatAt.UTC()
	if m.ArtifactPaths == nil {
		m.ArtifactPaths = []string{}
	}
	switch m.Status {
	case Running:
		if m.Success != nil || !m.CompletedAt.IsZero() {
			return engine.Invalid("run", "a running run has no success or completed_at")
		}
	default:
		ok := m.Status == Completed
		if m.Success == nil {
			m.Success = &ok
		}
		if *m.Success != ok {
			return engine.Invalid("run", fmt.Sprintf("status %s contradicts success %v", m.Status, *m.Success))
		}
		if m.CompletedAt.IsZero() {
			m.CompletedAt = m.UpdatedAt
		}
		m.CompletedAt = m.CompletedAt.UTC()
	}
	return nil
}

// modify applies fn to running run id in one transaction.
func (s *Store) modify(ctx context.Context, op, id string, fn func(m *Manifest) error) (*Manifest, error) {
	var out *Manifest
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		old, err := load(tx, id)
		if err != nil {
			return err
		}
		if old.Status != Running {
			return fmt.Errorf("%w (%s)", ErrFinished, old.Status)
		}
		m := *old
		m.ArtifactPaths = slices.Clone(old.ArtifactPaths)
		if err := fn(&m); err != nil {
			return err
		}
		m.UpdatedAt = s.opts.Now().UTC()
		if err := normalize(&m); err != nil {
			return err
		}
		out = &m
		return put(tx, old, &m)
	})
	if err != nil {
		return nil, fmt.Errorf("run: %s %s: %w", op, id, err)
	}
	return out, nil
}

// Progress is what a running run reports as it goes. Zero fields leave the
// manifest as it is.
type Progress struct {
	CurrentURL    string
	TurnCount     int      // turns so far
	ArtifactPaths []string // appended
	Summary       string
}

// Update records a running run's progress (the design updates the current
// URL every few turns) and its heartbeat.
func (s *Store) Update(ctx context.Context, id string, p Progress) (*Manifest, error) {
	if p.TurnCount < 0 {
		return nil, engine.Invalid("run", fmt.Sprintf("turn count %d is negative", p.TurnCount))
	}
	return s.modify(ctx, "update", id, func(m *Manifest) error {
		if p.CurrentURL != "" {
			m.CurrentURL = strings.TrimSpace(p.CurrentURL)
		}
		if p.TurnCount > 0 {
			m.TurnCount = p.TurnCount
		}
		if p.Summary != "" {
			m.Summary = p.Summary
		}
		m.ArtifactPaths = appendNew(m.ArtifactPaths, p.ArtifactPaths)
		m.HeartbeatAt = s.opts.Now().UTC()
		return nil
	})
}

func appendNew(to, add []string) []string {
	for _, a := range add {
		if a = strings.TrimSpace(a); a != "" && !slices.Contains(to, a) {
			to = append(to, a)
		}
	}
	return to
}

// Completion is how a run ended.
type Completion struct {
	Success       bool
	FinalURL      string
	Summary       string
	Result        string
	Reason        string
	TurnCount     int
	ArtifactPaths []string // appended
	Replay        *Replay
}

// maxReplayReason bounds a replay's reason.
const maxReplayReason = 1000

// Complete finishes a running run: completed on success, else failed.
func (s *Store) Complete(ctx context.Context, id string, c Completion) (*Manifest, error) {
	if c.TurnCount < 0 {
		return nil, engine.Invalid("run", fmt.Sprintf("turn count %d is negative", c.TurnCount))
	}
	if rp := c.Replay; rp != nil && (rp.Trajectory == "" || rp.Replayed < 0 || rp.FellBackAt < 0 || len(rp.Reason) > maxReplayReason) {
		return nil, engine.Invalid("run", fmt.Sprintf("replay: want a trajectory id, counts not negative and a reason of at most %d bytes", maxReplayReason))
	}
	m, err := s.modify(ctx, "complete", id, func(m *Manifest) error {
		m.Status = Failed
		if c.Success {
			m.Status = Completed
		}
		ok := c.Success
		m.Success = &ok
		m.FinalURL = cmpOr(strings.TrimSpace(c.FinalURL), m.CurrentURL)
		m.Summary = cmpOr(c.Summary, m.Summary)
		m.Result, m.Reason = c.Result, c.Reason
		if c.TurnCount > 0 {
			m.TurnCount = c.TurnCount
		}
		m.ArtifactPaths = appendNew(m.ArtifactPaths, c.ArtifactPaths)
		m.CompletedAt = s.opts.Now().UTC()
		m.Replay = c.Replay
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.opts.Events.Emit(EventCompleted, map[string]any{"run_id": m.RunID, "domain": m.Domain, "status": m.Status, "turn_count": m.TurnCount})
	return m, nil
}

// Filter selects runs for List. Zero values select everything.
type Filter struct {
	Domain    string // runs on this host or its subdomains
	Status    Status
	SessionID string
	Limit     int // at most this many
}

// CursorKind names run cursors (see engine/listing).
const CursorKind = "run"

// List returns the runs that pass f, newest started first. It scans the
// most selective index the filter allows (session, then site, then
// status) and reads only the manifests it scans, stopping at Limit.
func (s *Store) List(ctx context.Context, f Filter) ([]Manifest, error) {
	var out []Manifest
	err := s.db.View(ctx, func(r kv.Reader) error {
		var err error
		out, _, _, err = s.listFrom(r, f, "", f.Limit, false)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("run: list: %w", err)
	}
	return out, nil
}

// Page returns one page of the runs List(ctx, f) returns, in the same
// order (newest started first): at most req.Limit after req.Cursor, and
// the cursor of the next page ("" after the last). f.Limit is ignored. A
// run's position (start time, id) never changes, so writes between pages
// never repeat or skip a run. A cursor that is not one of a run page is
// engine.ErrInvalid.
//
// Cost: a page is one reverse range scan of the index List would use,
// from the cursor, reading limit+1 entries and their manifests; only the
// runs of that index the filter rejects are skipped (a status filter
// combined with a session or domain, the domain's parent-domain runs, and
// crashed runs, which are stored as running).
func (s *Store) Page(ctx context.Context, f Filter, req listing.Request) (listing.Result[Manifest], error) {
	var res listing.Result[Manifest]
	n, after, err := req.Open(CursorKind, keyspace.CheckRunPos)
	if err != nil {
		return res, err
	}
	var (
		more bool
		last string
	)
	err = s.db.View(ctx, func(r kv.Reader) error {
		var err error
		res.Items, more, last, err = s.listFrom(r, f, after, n, true)
		return err
	})
	if err != nil {
		if engine.IsInvalid(err) {
			return listing.Result[Manifest]{}, err
		}
		return listing.Result[Manifest]{}, fmt.Errorf("run: page: %w", err)
	}
	if res.Items == nil {
		res.Items = []Manifest{}
	}
	if more && len(res.Items) > 0 {
		res.Next = listing.Encode(CursorKind, last)
	}
	return res, nil
}

// listFrom reads, in r, up to n runs (n <= 0: all) that pass f, started
// before position after ("" = the newest), newest first, and reports
// whether more follow (with probe; without, it stops at the n-th run and
// reports false) and the position of the last run returned.
func (s *Store) listFrom(r kv.Reader, f Filter, after string, n int, probe bool) (out []Manifest, more bool, last string, err error) {
	host := ""
	if f.Domain != "" {
		h, err := domain.Host(f.Domain)
		if err != nil {
			return nil, false, "", engine.Invalid("run", fmt.Sprintf("domain: %v", err))
		}
		host = h
	}
	if f.Status != "" {
		if _, err := ParseStatus(string(f.Status)); err != nil {
			return nil, false, "", err
		}
	}
	var prefix []byte
	switch {
	case f.SessionID != "":
		prefix = keyspace.RunsBySession(f.SessionID)
	case host != "":
		prefix = keyspace.SiteRuns(domain.Site(host))
	case f.Status == Crashed:
		prefix = keyspace.RunsByStatus(string(Running)) // crashed runs are stored as running
	case f.Status != "":
		prefix = keyspace.RunsByStatus(string(f.Status))
	default:
		prefix = keyspace.RunsByTime()
	}
	opts := kv.ScanOptions{Reverse: true, KeysOnly: true}
	var start []byte
	if after != "" {
		start = append(slices.Clip(prefix), after...)
		opts.Start = start
	}
	err = r.Scan(prefix, opts, func(k, _ []byte) error {
		if start != nil && bytes.Equal(k, start) {
			return nil
		}
		m, err := load(r, keyspace.LastPart(k))
		if err != nil {
			return err
		}
		s.derive(m)
		if (f.SessionID == "" || m.SessionID == f.SessionID) &&
			(f.Status == "" || m.Status == f.Status) &&
			(host == "" || domain.Within(m.Domain, host)) {
			if n > 0 && len(out) == n {
				more = true
				return kv.ErrStop
			}
			out = append(out, *m)
			last = keyspace.RunPos(k)
			if n > 0 && len(out) == n && !probe {
				return kv.ErrStop
			}
		}
		return nil
	})
	return out, more, last, err
}

// Scenario is how to start a run that continues (resume) or branches off
// (fork) from an earlier one.
type Scenario struct {
	Goal        string `json:"goal"`
	StartURL    string `json:"start_url"`
	SessionID   string `json:"session_id,omitempty"`
	ParentRunID string `json:"parent_run_id"`
}

// Resume builds the scenario that continues run id where it left off: at
// its final URL (else its last current URL, else its start URL; the first
// that is a web page), in the same session. An empty goal repeats the
// run's goal. A crashed run resumes like any other.
func (s *Store) Resume(ctx context.Context, id, goal string) (*Scenario, error) {
	m, err := s.Get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("run: resume: %w", err)
	}
	return scenario(m, goal, m.SessionID)
}

// Fork builds the scenario that branches off run id: the same place, a new
// session (fork_<unix ms>_<random>). An empty goal repeats the run's goal.
func (s *Store) Fork(ctx context.Context, id, goal string) (*Scenario, error) {
	m, err := s.Get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("run: fork: %w", err)
	}
	return scenario(m, goal, s.newID("fork"))
}

func scenario(m *Manifest, goal, session string) (*Scenario, error) {
	u := firstWeb(m.FinalURL, m.CurrentURL, m.StartURL)
	if u == "" {
		u = "https://" + m.Domain + "/"
	}
	return &Scenario{Goal: cmpOr(strings.TrimSpace(goal), m.Goal), StartURL: u, SessionID: session, ParentRunID: m.RunID}, nil
}
