// Package trajectory is the trajectory memory: the recorded steps of
// successful runs, matched against a new goal on the same site so the agent
// can follow (or adapt) a known path instead of exploring blind.
//
// Matching is word-overlap (Jaccard) similarity between goal templates,
// above a threshold (more than 0.5 by default). Unlike a plain bag of words, a goal
// is read as a template with parameters: numbers, quoted values, and the
// words a step typed in ("search padel rackets" where the run typed "padel
// rackets" becomes "search {1}"). A new goal binds the parameters ("search
// tennis balls" binds {1} = "tennis balls") and the match returns the steps
// rewritten with the bound values, ready to replay. See Match.
//
// Records expire after a TTL (30 days by default). A new successful run of
// the same template on the same host replaces the older one.
//
// Secrets: a value typed into a password field (by its input type, its
// accessible name or its selector) or a step marked secret is never stored:
// the step keeps SecretPlaceholder, and the value is scrubbed from the goal
// and every other step.
package trajectory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/internal/attribution"
	textcheck "github.com/engine-dev/engine/engine/memory/internal/check"
	"github.com/engine-dev/engine/engine/memory/internal/decoded"
	"github.com/engine-dev/engine/engine/memory/internal/sitecache"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/trust/redact"
	"github.com/engine-dev/engine/kv"
)

// Defaults from the trajectory memory design.
const (
	DefaultThreshold = 0.5
	DefaultTTL       = 30 * 24 * time.Hour
)

// SecretPlaceholder replaces a secret value in a stored trajectory.
const SecretPlaceholder = redact.SecretSlot

// Event names this package emits.
const (
	EventRecorded = "trajectory_recorded" // fields: domain, id, goal, template, steps, replaced, secrets
	EventMatched  = "trajectory_matched"  // fields: domain, goal, id, similarity, score, candidates (or id "" when none)
)

// ErrNotFound is returned for an id no trajectory has.
var ErrNotFound = engine.NotFound("no such trajectory")

// Step is one action of a recorded run.
type Step struct {
	Action    string `json:"action"`               // click, type, select, navigate, press, ...
	Role      string `json:"role,omitempty"`       // target element's ARIA role
	Name      string `json:"name,omitempty"`       // target element's accessible name
	Selector  string `json:"selector,omitempty"`   // selector that found the target
	Value     string `json:"value,omitempty"`      // text typed or option chosen
	URL       string `json:"url,omitempty"`        // page the step ran on
	Verified  bool   `json:"verified"`             // its effect was checked
	Secret    bool   `json:"secret,omitempty"`     // the value is a secret (stored as SecretPlaceholder)
	InputType string `json:"input_type,omitempty"` // the target input's type ("password" makes it secret)
	// What the step was checked against (engine/memory/fingerprint), when the
	// recording run knew it: the page's path, the page's structural
	// fingerprint and the target element's. A replay that diverges at the
	// step compares them with the page it finds, for the stale reason.
	Path        string `json:"path,omitempty"`
	Page        string `json:"page,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
}

// Trajectory is one successful run's recording.
type Trajectory struct {
	ID         string    `json:"id"`
	Domain     string    `json:"domain"` // host the run was on
	Goal       string    `json:"goal"`
	Template   string    `json:"template"` // the goal with parameters as {1}, {2}, ...
	Params     []Param   `json:"params,omitempty"`
	Steps      []Step    `json:"steps"`
	RunID      string    `json:"run_id,omitempty"`
	DurationMs int64     `json:"duration_ms,omitempty"`
	RecordedAt time.Time `json:"recorded_at"`
	ExpiresAt  time.Time `json:"expires_at"`
	// Runs counts the successful runs of this template on this host; the
	// record holds the latest.
	Runs int `json:"runs"`
	// Provenance is who recorded the steps the record holds (a new run of
	// the same template replaces them, and its provenance with them).
	Provenance engine.Provenance `json:"provenance,omitzero"`
	// Quarantine is why a held trajectory is kept out of every match (see
	// Quarantined); "" for one that is matched.
	Quarantine string `json:"quarantine,omitempty"`
	// Shown, Used and Helped count the run steps whose context showed the
	// trajectory, those whose action was one of its steps, and those used
	// ones whose action worked in a successful run (see Attribute). A
	// newer run of the template that replaces the steps keeps them.
	engine.Counts
	// Stale says a run found the site no longer as recorded (a replay
	// handed over, or the reference's step failed): it is kept out of every
	// match until a newer successful run of the template replaces it. Nil
	// for one not known to be stale.
	Stale *Stale `json:"stale,omitempty"`
}

// Stale is why and since when the memory stopped holding (one type for every kind).
type Stale = engine.Stale

// Clone returns a deep copy of t: nothing it reaches is shared with t.
func (t Trajectory) Clone() Trajectory {
	t.Params = slices.Clone(t.Params)
	t.Steps = slices.Clone(t.Steps)
	if t.Stale != nil {
		st := *t.Stale
		t.Stale = &st
	}
	return t
}

// VerifiedShare is the share of steps that were verified.
func (t *Trajectory) VerifiedShare() float64 {
	if len(t.Steps) == 0 {
		return 0
	}
	n := 0
	for _, s := range t.Steps {
		if s.Verified {
			n++
		}
	}
	return float64(n) / float64(len(t.Steps))
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
	// Threshold is the similarity a match must exceed; zero means 0.5.
	Threshold float64
	// TTL is how long a trajectory is kept; zero means 30 days.
	TTL time.Duration
	// MaxAge is the oldest a trajectory may be to match (a run's
	// --trace-ttl-days); zero means TTL. It cannot bring back a record
	// past its TTL: that one is gone.
	MaxAge time.Duration
	// HistoryKeep is how many past versions of each trajectory are kept
	// (see History); zero means the default (20).
	HistoryKeep int
	// Weighted ranks matches by the weighted blend (similarity 60 %,
	// recency 20 %, speed 10 %, verification 10 %) instead of similarity
	// alone.
	Weighted bool
}

// Store keeps trajectories in a kv.Store. It is safe for concurrent use.
//
// Match indexes are cached in memory for the whole process (see
// indexCache), shared by every Store, so a caller that opens the database
// and a new Store for every step (as the agent loop does) still matches
// from memory. A cached index is used only while the site's generation key
// holds the random token it was built at; every write changes the token.
type Store struct {
	db   kv.Store
	opts Options
}

// New returns a Store over db.
func New(db kv.Store, opts Options) *Store {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Threshold <= 0 {
		opts.Threshold = DefaultThreshold
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	return &Store{db: db, opts: opts}
}

// passwordType matches a selector that picks a password input
// (input[type=password], [type="password"]); compiled on first use.
var passwordType = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)type\s*=\s*["']?password`)
})

// isSecret reports whether a step's value must not be stored: the step
// says so (the recorder knew the field was secret, or the value looked
// like a credential), or it enters a value into a field that is secret by
// redact.SecretField: its input type is password, or its accessible name
// or selector names a password, PIN, card number and the like. Only the
// field decides, never the text: a click or a key press enters nothing
// (a link "Reset your password" is no secret), and a search for "reset
// password help" typed into a search box is an ordinary value.
func isSecret(s *Step) bool {
	if s.Secret {
		return true
	}
	switch s.Action {
	case "click", "press", "navigate", "hover", "scroll", "wait", "back", "finish":
		return false
	}
	return redact.SecretField(s.InputType, "", s.Name) || passwordType().MatchString(s.Selector) ||
		redact.SecretField("", "", s.Selector)
}

// prepare validates t, scrubs its secrets and fills in its template, id and
// times. It returns the number of secret values scrubbed.
// Check reports whether Record would accept t, apart from its expiry (an
// engine.ErrInvalid error naming the problem if not), without storing anything: for
// importers that check every record before they write any.
func Check(t Trajectory) error {
	if _, err := domain.Host(t.Domain); err != nil {
		return engine.Invalid("trajectory", fmt.Sprintf("domain: %v", err))
	}
	if strings.TrimSpace(t.Goal) == "" {
		return engine.Invalid("trajectory", "the goal is empty")
	}
	if len(t.Steps) == 0 {
		return engine.Invalid("trajectory", "a trajectory needs at least one step; this one has none")
	}
	if t.DurationMs < 0 {
		return engine.Invalid("trajectory", fmt.Sprintf("duration_ms %d is negative", t.DurationMs))
	}
	for i, st := range t.Steps {
		if strings.TrimSpace(st.Action) == "" {
			return engine.Invalid("trajectory", fmt.Sprintf("step %d has no action", i+1))
		}
		if textcheck.Fingerprint("page", st.Page) != "" || textcheck.Fingerprint("fingerprint", st.Fingerprint) != "" {
			return engine.Invalid("trajectory", fmt.Sprintf("step %d: page %q and fingerprint %q must be up to 16 hex digits", i+1, st.Page, st.Fingerprint))
		}
		if p := textcheck.Text(fmt.Sprintf("step %d path", i+1), st.Path, textcheck.MaxLine, false); p != "" {
			return engine.Invalid("trajectory", p)
		}
	}
	if err := t.Provenance.Check(); err != nil {
		return err
	}
	if p := textcheck.Text("quarantine", t.Quarantine, textcheck.MaxPattern, false); p != "" {
		return engine.Invalid("trajectory", p)
	}
	if st := t.Stale; st != nil {
		if p := textcheck.Stale(*st, true); p != "" {
			return engine.Invalid("trajectory", p)
		}
	}
	return nil
}

func (s *Store) prepare(t Trajectory) (Trajectory, int, error) {
	if err := Check(t); err != nil {
		return t, 0, err
	}
	t.Domain, _ = domain.Host(t.Domain)
	t.Goal = strings.Join(strings.Fields(t.Goal), " ")
	steps := make([]Step, len(t.Steps))
	var secrets []string
	for i, st := range t.Steps {
		st.Action = strings.ToLower(strings.TrimSpace(st.Action))
		st.Role = strings.ToLower(strings.TrimSpace(st.Role))
		st.Name = strings.Join(strings.Fields(st.Name), " ")
		if isSecret(&st) {
			st.Secret = true
			if v := st.Value; v != "" && v != SecretPlaceholder {
				secrets = append(secrets, v)
				st.Value = SecretPlaceholder
			}
		}
		steps[i] = st
	}
	// Scrub secret values wherever else they appear. Very short secrets
	// (under 4 characters) are only removed from their own step: scrubbing
	// "12" everywhere would mangle the record.
	scrub := func(s string) string {
		for _, sec := range secrets {
			if len(sec) >= 4 {
				s = strings.ReplaceAll(s, sec, SecretPlaceholder)
			}
		}
		return s
	}
	t.Goal = scrub(t.Goal)
	var values []string
	for i := range steps {
		steps[i].URL = scrub(steps[i].URL)
		steps[i].Selector = scrub(steps[i].Selector)
		if !steps[i].Secret {
			steps[i].Value = scrub(steps[i].Value)
			if steps[i].Value != "" {
				values = append(values, steps[i].Value)
			}
		}
	}
	t.Steps = steps
	tokens, params := templateOf(t.Goal, values)
	t.Template = templateString(tokens)
	t.Params = params
	if t.RecordedAt.IsZero() {
		t.RecordedAt = s.opts.Now()
	}
	t.RecordedAt = t.RecordedAt.UTC().Truncate(time.Second)
	t.ExpiresAt = t.RecordedAt.Add(s.opts.TTL)
	sum := sha256.Sum256([]byte(t.Domain + "\n" + t.Template))
	t.ID = "traj_" + hex.EncodeToString(sum[:8])
	return t, len(secrets), nil
}

// Record stores a successful run's trajectory and returns it as stored
// (with its id, template, parameters and expiry). A trajectory of the same
// template on the same host is replaced; Runs counts them. A trajectory
// whose expiry has already passed is rejected.
func (s *Store) Record(ctx context.Context, t Trajectory) (Trajectory, error) {
	t, nSecrets, err := s.prepare(t)
	if err != nil {
		return Trajectory{}, err
	}
	now := s.opts.Now()
	ttl := t.ExpiresAt.Sub(now)
	if ttl <= 0 {
		return Trajectory{}, engine.Invalid("trajectory", fmt.Sprintf("recorded_at %s is more than %s ago: it has expired", t.RecordedAt.Format(time.RFC3339), s.opts.TTL))
	}
	site := domain.Site(t.Domain)
	if t.Provenance == (engine.Provenance{}) {
		t.Provenance = s.opts.Provenance.Stamp(now, site)
	}
	reason := screenOf(&t)
	if reason == "" {
		reason = t.Quarantine // an export of a held trajectory
	}
	if reason != "" {
		return s.hold(ctx, t, reason, ttl, nSecrets)
	}
	return s.write(ctx, t, ttl, nSecrets, nil)
}

// write stores prepared trajectory t (replacing the one of its id) with
// its index entry (none for a stale one: it is not matched), in one
// transaction that also deletes key held (an approved trajectory's
// quarantine record) when it is not nil.
func (s *Store) write(ctx context.Context, t Trajectory, ttl time.Duration, nSecrets int, held []byte) (Trajectory, error) {
	t.Quarantine = ""
	site := domain.Site(t.Domain)
	ent := entryOf(&t)
	idx := ent.encode()
	put := &ent
	if t.Stale != nil {
		put = nil
	}
	gen := newGen()
	replaced := false
	var stored Trajectory
	var oldGen string
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		if held != nil {
			if _, err := tx.Get(held); err != nil {
				if errors.Is(err, kv.ErrNotFound) {
					return fmt.Errorf("trajectory %s: %w", t.ID, ErrNotQuarantined)
				}
				return err
			}
			if err := tx.Delete(held); err != nil {
				return err
			}
		}
		stored, replaced = t, false
		stored.Runs = max(t.Runs, 1)
		g, err := tx.Get(keyspace.TrajectoryGen(site))
		if err != nil && !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		oldGen = string(g)
		old, err := tx.Get(keyspace.Trajectory(site, t.ID))
		if err == nil || errors.Is(err, kv.ErrNotFound) {
			op := history.OpRecord
			if held != nil {
				op = history.OpApprove
			}
			if err := s.keep(tx, op, t.ID, old); err != nil {
				return err
			}
		}
		switch {
		case err == nil:
			var o Trajectory
			if err := json.Unmarshal(old, &o); err == nil {
				replaced = true
				stored.Runs = o.Runs + 1
				stored.Shown, stored.Used, stored.Helped = o.Shown+t.Shown, o.Used+t.Used, o.Helped+t.Helped
			}
		case !errors.Is(err, kv.ErrNotFound):
			return err
		}
		rec, err := json.Marshal(stored)
		if err != nil {
			return err
		}
		if err := tx.Set(keyspace.Trajectory(site, t.ID), rec, ttl); err != nil {
			return err
		}
		if err := tx.Set(keyspace.TrajectoryID(t.ID), []byte(site), ttl); err != nil {
			return err
		}
		if put == nil {
			err = tx.Delete(keyspace.TrajectoryIndex(site, t.ID))
		} else {
			err = tx.Set(keyspace.TrajectoryIndex(site, t.ID), idx, ttl)
		}
		if err != nil {
			return err
		}
		return tx.Set(keyspace.TrajectoryGen(site), []byte(gen), 0)
	})
	if err != nil {
		return Trajectory{}, fmt.Errorf("trajectory: record %s %q: %w", t.Domain, t.Goal, err)
	}
	s.applyWrite(site, oldGen, gen, t.ID, put)
	s.opts.Events.Emit(EventRecorded, map[string]any{
		"domain": t.Domain, "id": t.ID, "goal": t.Goal, "template": t.Template,
		"steps": len(t.Steps), "replaced": replaced, "runs": stored.Runs, "secrets": nSecrets,
	})
	return stored, nil
}

func newGen() string { return sitecache.Gen() }

// related reports whether memory kept for host r is about host h, for
// listing: the same host, or one a subdomain of the other.
func related(h, r string) bool { return domain.Within(h, r) || domain.Within(r, h) }

// applies reports whether memory kept for host r applies on host h, for
// matching: r is h or a parent domain of h, "www." aside.
func applies(h, r string) bool {
	return domain.Within(strings.TrimPrefix(h, "www."), strings.TrimPrefix(r, "www."))
}

// Get returns one trajectory by id; host (or URL) names its site, and ""
// finds the site from the id (ids are unique: they hash the host).
func (s *Store) Get(ctx context.Context, host, id string) (Trajectory, error) {
	if host == "" {
		site, err := s.siteOf(ctx, id)
		if err != nil {
			return Trajectory{}, fmt.Errorf("trajectory: get %s: %w", id, err)
		}
		t, err := s.get(ctx, site, id)
		if err != nil {
			return Trajectory{}, fmt.Errorf("trajectory: get %s: %w", id, err)
		}
		return t, nil
	}
	h, err := domain.Host(host)
	if err != nil {
		return Trajectory{}, engine.Invalid("trajectory", fmt.Sprintf("domain: %v", err))
	}
	t, err := s.get(ctx, domain.Site(h), id)
	if err != nil {
		return Trajectory{}, fmt.Errorf("trajectory: get %s %s: %w", h, id, err)
	}
	return t, nil
}

// siteOf returns the site trajectory id is stored under (locate), or
// ErrNotFound.
func (s *Store) siteOf(ctx context.Context, id string) (string, error) {
	var site string
	err := s.db.View(ctx, func(r kv.Reader) error {
		key, err := locate(r, id)
		if err != nil {
			return err
		}
		site, err = keyspace.SiteOf(key)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return "", ErrNotFound
	}
	return site, err
}

func (s *Store) get(ctx context.Context, site, id string) (Trajectory, error) {
	v, err := kv.Get(ctx, s.db, keyspace.Trajectory(site, id))
	if errors.Is(err, kv.ErrNotFound) {
		return Trajectory{}, ErrNotFound
	}
	if err != nil {
		return Trajectory{}, err
	}
	t, err := decodedTrajectories.Unmarshal(keyspace.Trajectory(site, id), v)
	if err != nil {
		return Trajectory{}, fmt.Errorf("decode: %w", err)
	}
	if !s.opts.Now().Before(t.ExpiresAt) {
		return Trajectory{}, ErrNotFound
	}
	return t, nil
}

// decodedTrajectories holds the trajectories last read, decoded: a run's
// reference trajectory is read at every step.
var decodedTrajectories = decoded.New(64, Trajectory.Clone)

// Delete removes one trajectory; host names its site, and "" finds it
// from the id (as Get).
func (s *Store) Delete(ctx context.Context, host, id string) error {
	var site, h string
	var err error
	if host == "" {
		if site, err = s.siteOf(ctx, id); err != nil {
			return fmt.Errorf("trajectory: delete %s: %w", id, err)
		}
		h = site
	} else {
		if h, err = domain.Host(host); err != nil {
			return engine.Invalid("trajectory", fmt.Sprintf("domain: %v", err))
		}
		site = domain.Site(h)
	}
	gen := newGen()
	var oldGen string
	err = s.db.Update(ctx, func(tx kv.Txn) error {
		g, err := tx.Get(keyspace.TrajectoryGen(site))
		if err != nil && !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		oldGen = string(g)
		old, err := tx.Get(keyspace.Trajectory(site, id))
		if err != nil {
			if errors.Is(err, kv.ErrNotFound) {
				return ErrNotFound
			}
			return err
		}
		if err := s.keep(tx, history.OpRemove, id, old); err != nil {
			return err
		}
		if err := tx.Delete(keyspace.Trajectory(site, id)); err != nil {
			return err
		}
		if err := tx.Delete(keyspace.TrajectoryIndex(site, id)); err != nil {
			return err
		}
		if err := tx.Delete(keyspace.TrajectoryID(id)); err != nil {
			return err
		}
		return tx.Set(keyspace.TrajectoryGen(site), []byte(gen), 0)
	})
	if err != nil {
		return fmt.Errorf("trajectory: delete %s %s: %w", h, id, err)
	}
	s.applyWrite(site, oldGen, gen, id, nil)
	return nil
}

// List returns the unexpired trajectories of host and related hosts ("" =
// every site), newest first.
func (s *Store) List(ctx context.Context, host string) ([]Trajectory, error) {
	h := ""
	if host != "" {
		var err error
		if h, err = domain.Host(host); err != nil {
			return nil, engine.Invalid("trajectory", fmt.Sprintf("domain: %v", err))
		}
	}
	now := s.opts.Now()
	var out []Trajectory
	err := s.db.View(ctx, func(r kv.Reader) error {
		decode := func(k, v []byte) error {
			var t Trajectory
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("decode %s: %w", k, err)
			}
			if now.Before(t.ExpiresAt) && (h == "" || related(h, t.Domain)) {
				out = append(out, t)
			}
			return nil
		}
		if h != "" {
			return r.Scan(keyspace.Trajectories(domain.Site(h)), kv.ScanOptions{}, decode)
		}
		var keys [][]byte
		err := r.Scan(keyspace.SitesPrefix(), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			if keyspace.IsTrajectory(k) {
				keys = append(keys, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			v, err := r.Get(k)
			if errors.Is(err, kv.ErrNotFound) {
				continue // expired between the scan and the read
			}
			if err != nil {
				return err
			}
			if err := decode(k, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("trajectory: list %s: %w", host, err)
	}
	listing.SortBy(out, listPos)
	return out, nil
}

// CursorKind names trajectory cursors (see engine/listing).
const CursorKind = "trajectory"

// listPos is a trajectory's position in List's order: newest recorded
// first, then by id (then site, so it is unique).
func listPos(t *Trajectory) string {
	return listing.TimeDesc(t.RecordedAt) + t.ID + "\x00" + t.Domain
}

// Page returns one page of what List(ctx, host) returns, in the same
// order: at most req.Limit after req.Cursor, and the cursor of the next
// page ("" after the last). A trajectory's position (recorded time, id)
// never changes, so writes between pages never repeat or skip one. A
// cursor that is not one of a trajectory page is engine.ErrInvalid.
//
// Cost: not proportional to the page. Trajectories are kept by id, not in
// list order, so a page reads what List reads, the host's site's
// trajectories (bounded by one site's data: successful runs, which
// expire), or every site's without a host, and sorts them.
func (s *Store) Page(ctx context.Context, host string, req listing.Request) (listing.Result[Trajectory], error) {
	return listing.SlicePage(CursorKind, req, 24, listPos, func() ([]Trajectory, error) { return s.List(ctx, host) })
}

// Attribution is what runs' steps did with one trajectory: how many showed
// it, followed one of its steps, and were helped by it.
type Attribution struct {
	Domain string `json:"domain"` // host or URL of its site
	ID     string `json:"id"`
	engine.Counts
}

// Attribute adds each attribution's counts to its trajectory, all in one
// transaction, and returns how many it updated: one no longer kept
// (replaced by another template's, expired, deleted) is skipped. The
// match index is untouched: the counts do not change what matches.
func (s *Store) Attribute(ctx context.Context, as []Attribution) (int, error) {
	ups := make([]attribution.Update, 0, len(as))
	for _, a := range as {
		if err := a.Counts.Check("trajectory attribution"); err != nil {
			return 0, err
		}
		h, err := domain.Host(a.Domain)
		if err != nil {
			return 0, engine.Invalid("trajectory attribution", fmt.Sprintf("domain: %v", err))
		}
		if a.ID == "" {
			return 0, engine.Invalid("trajectory attribution", "id is empty")
		}
		ups = append(ups, attribution.Update{Key: keyspace.Trajectory(domain.Site(h), a.ID), Counts: a.Counts})
	}
	now := s.opts.Now()
	n := 0
	var un unindexed
	var pruned []Trajectory
	err := s.db.Update(ctx, func(tx kv.Txn) (err error) {
		un, pruned = unindexed{}, pruned[:0]
		n, err = attribution.AddAll(tx, ups, attribution.Options[Trajectory]{
			Counts: func(t *Trajectory) *engine.Counts { return &t.Counts },
			Version: func(tx kv.Txn, t *Trajectory, old []byte) error {
				return s.keep(tx, history.OpAttribute, t.ID, old)
			},
			// One expired meanwhile is skipped; the others keep their expiry.
			Keep: func(t *Trajectory) (time.Duration, bool) {
				ttl := t.ExpiresAt.Sub(now)
				return ttl, ttl > 0
			},
			// A recorded trajectory shown PruneUnhelpfulAfter times that
			// never helped goes, with its match-index entry.
			Prune: func(t *Trajectory) bool {
				if !attribution.Learned(t.Provenance, t.Counts) {
					return false
				}
				pruned = append(pruned, *t)
				return true
			},
		})
		if err != nil {
			return err
		}
		for _, t := range pruned {
			if err := un.remove(tx, domain.Site(t.Domain), t.ID); err != nil {
				return err
			}
		}
		return un.commit(tx)
	})
	if err != nil {
		return 0, fmt.Errorf("trajectory: attribute %d trajectories: %w", len(as), err)
	}
	un.apply(s)
	for _, t := range pruned {
		s.opts.Events.Emit(EventPruned, map[string]any{"id": t.ID, "domain": t.Domain, "template": t.Template,
			"shown": t.Shown, "reason": "unhelpful"})
	}
	return n, nil
}
