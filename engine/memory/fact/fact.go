// Package fact is the app-knowledge memory: short facts a browser agent
// learned about a site (how long a page takes to load, which selector is the
// search box, how the login flow goes, what is odd about the app), each with
// a confidence that grows when the fact is seen again and shrinks when it is
// contradicted.
//
// A fact is identified by (host, type, key, value). Several values of the
// same (host, type, key) may coexist as rival candidates; observing one
// confirms it and contradicts the others.
//
// The confidence curve (see Observe), browser-agent-driver's numbers:
//
//	first observation   c = Initial (0.6)
//	confirmation        c ← c + Gain·(1 − c)        Gain = 0.2
//	contradiction       c ← c · Decay              Decay = 0.5 (the rival starts at 0.6)
//	pruned              when c < Floor             Floor = 0.1
//	reaches the prompt  when c ≥ MinConfidence     MinConfidence = 0.5
//
// So a fact seen once (0.6) reaches the prompt; confirmations raise it
// (0.68, 0.744, 0.795, 0.836, ...: it approaches 1 but never reaches it).
// A fact seen once leaves the prompt at its first contradiction (0.3) and is
// pruned at its third (0.15, then 0.075); so is a fact confirmed three times
// (0.795: 0.398, 0.199, 0.099). A fact at 0.2 contradicted is at exactly 0.1
// and kept.
package fact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
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
	"github.com/engine-dev/engine/kv"
)

// Type says what a fact is about.
type Type string

// The four fact types.
const (
	Timing   Type = "timing"   // "page load takes 5s after submit"
	Selector Type = "selector" // "search box is [data-testid='search']"
	Pattern  Type = "pattern"  // "auth flow: click login → fill email → submit"
	Quirk    Type = "quirk"    // "uses shadow DOM for modals"
)

// Types lists the valid types.
var Types = []Type{Timing, Selector, Pattern, Quirk}

// The curve's constants; see the package comment.
const (
	Initial              = 0.6
	Gain                 = 0.2
	Decay                = 0.5
	Floor                = 0.1
	DefaultMinConfidence = 0.5
)

// Event names this package emits.
const (
	EventObserved = "fact_observed" // fields: domain, type, key, value, result, confidence, sources
	EventPruned   = "facts_pruned"  // fields: domain, type, key, values, reason
	EventRecall   = "fact_recall"   // fields: domain, count
	// EventQuarantined: a fact whose key or value failed the screen was
	// held out of every prompt. Fields: id, domain, type, key, value, reason.
	EventQuarantined = "fact_quarantined"
)

// ResultQuarantined is Outcome.Result for an observation held in
// quarantine: it neither confirmed nor contradicted any shown fact.
const ResultQuarantined = "quarantined"

// Fact is one remembered fact.
type Fact struct {
	Domain     string    `json:"domain"` // host it was observed on
	Type       Type      `json:"type"`
	Key        string    `json:"key"`
	Value      string    `json:"value"`
	Confidence float64   `json:"confidence"`
	Sources    int       `json:"sources"` // observations that confirmed it
	FirstSeen  time.Time `json:"first_seen"`
	LastSeen   time.Time `json:"last_seen"`
	// Provenance is who first wrote the fact; a confirmation keeps it.
	Provenance engine.Provenance `json:"provenance,omitzero"`
	// LastRun is the last run that observed the fact (its first sighting
	// or a confirmation), "" until a run does.
	LastRun string `json:"last_run,omitempty"`
	// Checked is the page a fact seen on a page (a quirk) was last seen
	// on: its path and structural fingerprint (engine/memory/fingerprint), and
	// when; nil for a fact of no one page (a flow, a fact set by hand).
	Checked *engine.Checked `json:"checked,omitempty"`
	// ID names a quarantined fact (for approve and reject); "" otherwise.
	ID string `json:"id,omitempty"`
	// Quarantine is why a held fact is kept out of every prompt (see
	// Quarantined); "" for a fact that is shown.
	Quarantine string `json:"quarantine,omitempty"`
	// Shown, Used and Helped count the run steps whose context showed the
	// fact, those whose action named what it names (see the agent's
	// attribution), and those used ones whose action worked in a
	// successful run (see Attribute).
	engine.Counts
}

// UnhelpfulAfter is how many times a fact is shown without ever helping
// before Confident ranks it below the ones that have not earned that.
// Unhelpful (engine.Counts) reports whether it reached that and never helped.
const UnhelpfulAfter = engine.UnhelpfulAfter

// ParseType returns the type named s, or an engine.ErrInvalid error listing the valid
// ones.
func ParseType(s string) (Type, error) {
	t := Type(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Types, t) {
		return t, nil
	}
	return "", engine.Invalid("fact", fmt.Sprintf("unknown type %q (want one of timing, selector, pattern, quirk)", s))
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
	// MinConfidence is the confidence a fact needs to reach the prompt
	// (Confident); zero means DefaultMinConfidence.
	MinConfidence float64
	// HistoryKeep is how many past versions of each fact are kept (see
	// History); zero means the default (20).
	HistoryKeep int
}

// Store keeps facts in a kv.Store.
type Store struct {
	db    kv.Store
	now   func() time.Time
	ev    event.Func
	prov  engine.Provenance
	minC  float64
	histN int
}

// New returns a Store over db.
func New(db kv.Store, opts Options) *Store {
	s := &Store{db: db, now: opts.Now, ev: opts.Events, prov: opts.Provenance, minC: opts.MinConfidence, histN: opts.HistoryKeep}
	if s.now == nil {
		s.now = time.Now
	}
	if s.minC == 0 {
		s.minC = DefaultMinConfidence
	}
	return s
}

// MinConfidence is the confidence a fact needs to reach the prompt.
func (s *Store) MinConfidence() float64 { return s.minC }

// Observation is one sighting of a fact.
type Observation struct {
	Domain string // host or URL
	Type   Type
	Key    string
	Value  string
	// Path and Page are the page the fact was seen on, for a fact from a
	// page: its path and structural fingerprint ("" for none).
	Path, Page string
}

// Outcome says what an observation did.
type Outcome struct {
	Fact         Fact   `json:"fact"`
	Result       string `json:"result"`       // "new", "confirmed" or "quarantined"
	Contradicted []Fact `json:"contradicted"` // rivals whose confidence fell
	Pruned       []Fact `json:"pruned"`       // rivals that fell below Floor and were deleted
}

// normalise cleans up the parts of a fact and checks them.
func normalise(host, typ, key, value string) (h string, t Type, k, v string, err error) {
	h, err = domain.Host(host)
	if err != nil {
		return "", "", "", "", engine.Invalid("fact", fmt.Sprintf("domain: %v", err))
	}
	t, err = ParseType(typ)
	if err != nil {
		return "", "", "", "", err
	}
	k = strings.ToLower(strings.Join(strings.Fields(key), " "))
	if k == "" {
		return "", "", "", "", engine.Invalid("fact", "the key is empty")
	}
	v = strings.Join(strings.Fields(value), " ")
	if v == "" {
		return "", "", "", "", engine.Invalid("fact", "the value is empty")
	}
	return h, t, k, v, nil
}

// valueHash names a value in keys.
func valueHash(v string) string {
	h := fnv.New64a()
	h.Write([]byte(v))
	return fmt.Sprintf("%016x", h.Sum64())
}

// Observe records a sighting: it confirms the same (type, key, value) on
// the host, or adds it as a new fact, and contradicts every other value of
// the same (type, key), pruning those that fall below Floor.
func (s *Store) Observe(ctx context.Context, o Observation) (Outcome, error) {
	host, typ, key, value, err := normalise(o.Domain, string(o.Type), o.Key, o.Value)
	if err != nil {
		return Outcome{}, err
	}
	site := domain.Site(host)
	now := s.now().UTC()
	var seenOn *engine.Checked
	if o.Path != "" || o.Page != "" {
		seenOn = &engine.Checked{Path: domain.PathScope(o.Path), Page: o.Page, At: now}
		if p := textcheck.Checked(*seenOn, textcheck.MaxLine); p != "" {
			return Outcome{}, engine.Invalid("fact", p)
		}
	}
	if reason := screenOf(host, key, value); reason != "" {
		f := Fact{Domain: host, Type: typ, Key: key, Value: value, Confidence: Initial, Sources: 1, FirstSeen: now, LastSeen: now}
		held, err := s.hold(ctx, f, reason, true)
		return Outcome{Fact: held, Result: ResultQuarantined}, err
	}
	vh := valueHash(value)
	var out Outcome
	err = s.db.Update(ctx, func(tx kv.Txn) error {
		out = Outcome{}
		var rivals []Fact
		var rivalRaw [][]byte
		var found *Fact
		var foundRaw []byte
		// Read the observed value's own key first: a read of a missing key
		// still makes two concurrent first observations conflict, which a
		// scan of an empty range would not.
		if _, err := tx.Get(keyspace.Fact(site, host, string(typ), key, vh)); err != nil && !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		err := tx.Scan(keyspace.FactValues(site, host, string(typ), key), kv.ScanOptions{}, func(k, v []byte) error {
			var f Fact
			if err := json.Unmarshal(v, &f); err != nil {
				return fmt.Errorf("decode %s: %w", k, err)
			}
			if f.Value == value {
				found, foundRaw = &f, bytes.Clone(v)
			} else {
				rivals = append(rivals, f)
				rivalRaw = append(rivalRaw, bytes.Clone(v))
			}
			return nil
		})
		if err != nil {
			return err
		}
		var f Fact
		if found != nil {
			f = *found
			f.Confidence = confirm(f.Confidence)
			f.Sources++
			f.LastSeen = now
			if seenOn != nil {
				f.Checked = seenOn
			}
			if s.prov.Run != "" {
				f.LastRun = s.prov.Run
			}
			out.Result = "confirmed"
		} else {
			f = Fact{Domain: host, Type: typ, Key: key, Value: value, Confidence: Initial, Sources: 1, FirstSeen: now, LastSeen: now,
				Provenance: s.prov.Stamp(now, site), LastRun: s.prov.Run, Checked: seenOn}
			out.Result = "new"
		}
		if err := s.keep(tx, history.OpObserve, &f, foundRaw); err != nil {
			return err
		}
		if err := put(tx, site, f, vh); err != nil {
			return err
		}
		if err := tx.Set(keyspace.FactGen(site), []byte(sitecache.Gen()), 0); err != nil {
			return err
		}
		out.Fact = f
		for i, r := range rivals {
			r.Confidence = contradict(r.Confidence)
			rk := keyspace.Fact(site, host, string(typ), key, valueHash(r.Value))
			op := history.OpContradict
			if r.Confidence < Floor {
				op = history.OpPrune
			}
			if err := s.keep(tx, op, &r, rivalRaw[i]); err != nil {
				return err
			}
			if r.Confidence < Floor {
				if err := tx.Delete(rk); err != nil {
					return err
				}
				out.Pruned = append(out.Pruned, r)
				continue
			}
			if err := put(tx, site, r, valueHash(r.Value)); err != nil {
				return err
			}
			out.Contradicted = append(out.Contradicted, r)
		}
		return nil
	})
	if err != nil {
		return Outcome{}, fmt.Errorf("fact: observe %s/%s/%s: %w", host, typ, key, err)
	}
	s.ev.Emit(EventObserved, map[string]any{
		"domain": host, "type": string(typ), "key": key, "value": value,
		"result": out.Result, "confidence": round(out.Fact.Confidence), "sources": out.Fact.Sources,
		"contradicted": len(out.Contradicted),
	})
	if len(out.Pruned) > 0 {
		vals := make([]string, len(out.Pruned))
		for i, p := range out.Pruned {
			vals[i] = p.Value
		}
		s.ev.Emit(EventPruned, map[string]any{"domain": host, "type": string(typ), "key": key, "values": vals, "reason": "contradicted"})
	}
	return out, nil
}

// Put stores f exactly as given (for imports and for people fixing memory
// by hand), replacing the same (host, type, key, value). Its confidence
// must lie in [0, 1]; a fact below Floor is not stored (it would be pruned
// at once) and Put reports stored=false. Zero Sources counts as 1; zero
// times are the clock's now; a fact without provenance gets the store's.
// A fact whose key or value fails the screen, or that comes with a
// quarantine reason (an export of a held fact), is held in quarantine
// instead (returned with Quarantine set, kept false).
func (s *Store) Put(ctx context.Context, f Fact) (stored Fact, kept bool, err error) {
	f, err = check(f)
	if err != nil {
		return Fact{}, false, err
	}
	host, typ, key, value := f.Domain, f.Type, f.Key, f.Value
	if f.Sources == 0 {
		f.Sources = 1
	}
	now := s.now().UTC()
	if f.LastSeen.IsZero() {
		f.LastSeen = now
	}
	if f.FirstSeen.IsZero() {
		f.FirstSeen = f.LastSeen
	}
	site := domain.Site(host)
	if f.Provenance == (engine.Provenance{}) {
		f.Provenance = s.prov.Stamp(now, site)
	}
	f.ID = ""
	if reason := screenOf(host, key, value); reason != "" || f.Quarantine != "" {
		if reason == "" {
			reason = f.Quarantine
		}
		held, err := s.hold(ctx, f, reason, false)
		return held, false, err
	}
	k := keyspace.Fact(site, host, string(typ), key, valueHash(value))
	kept = f.Confidence >= Floor
	err = s.db.Update(ctx, func(tx kv.Txn) error {
		old, err := tx.Get(k)
		if errors.Is(err, kv.ErrNotFound) {
			old = nil
		} else if err != nil {
			return err
		}
		if nb, _ := json.Marshal(f); (kept || old != nil) && !bytes.Equal(nb, old) {
			if err := s.keep(tx, history.OpSet, &f, old); err != nil {
				return err
			}
		}
		if err := tx.Set(keyspace.FactGen(site), []byte(sitecache.Gen()), 0); err != nil {
			return err
		}
		if !kept {
			return tx.Delete(k)
		}
		return put(tx, site, f, valueHash(value))
	})
	if err != nil {
		return Fact{}, false, fmt.Errorf("fact: put %s/%s/%s: %w", host, typ, key, err)
	}
	if !kept {
		s.ev.Emit(EventPruned, map[string]any{"domain": host, "type": string(typ), "key": key, "values": []string{value}, "reason": "below floor"})
		return f, false, nil
	}
	s.ev.Emit(EventObserved, map[string]any{
		"domain": host, "type": string(typ), "key": key, "value": value,
		"result": "set", "confidence": round(f.Confidence), "sources": f.Sources,
	})
	return f, true, nil
}

// Check reports whether Put would accept f (an engine.ErrInvalid error naming the
// problem if not), without storing anything: for importers that check
// every record before they write any.
func Check(f Fact) error {
	_, err := check(f)
	return err
}

func check(f Fact) (Fact, error) {
	host, typ, key, value, err := normalise(f.Domain, string(f.Type), f.Key, f.Value)
	if err != nil {
		return Fact{}, err
	}
	if f.Confidence < 0 || f.Confidence > 1 || f.Confidence != f.Confidence {
		return Fact{}, engine.Invalid("fact", fmt.Sprintf("confidence %v is outside [0, 1]", f.Confidence))
	}
	if f.Sources < 0 {
		return Fact{}, engine.Invalid("fact", fmt.Sprintf("sources %d is negative", f.Sources))
	}
	if err := f.Provenance.Check(); err != nil {
		return Fact{}, err
	}
	if p := textcheck.Text("last_run", f.LastRun, engine.MaxProvenanceField, false); p != "" {
		return Fact{}, engine.Invalid("fact", p)
	}
	if p := textcheck.Text("quarantine", f.Quarantine, textcheck.MaxPattern, false); p != "" {
		return Fact{}, engine.Invalid("fact", p)
	}
	if c := f.Checked; c != nil {
		if p := textcheck.Checked(*c, textcheck.MaxLine); p != "" {
			return Fact{}, engine.Invalid("fact", p)
		}
	}
	f.Domain, f.Type, f.Key, f.Value = host, typ, key, value
	return f, nil
}

func put(tx kv.Txn, site string, f Fact, vh string) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return tx.Set(keyspace.Fact(site, f.Domain, string(f.Type), f.Key, vh), b, 0)
}

// confirm and contradict keep 12 decimals, so 0.6 confirmed is stored,
// exported and diffed as 0.68, not 0.6799999999999999.
func confirm(c float64) float64    { return exact(c + Gain*(1-c)) }
func contradict(c float64) float64 { return exact(c * Decay) }

func exact(c float64) float64 { return math.Round(c*1e12) / 1e12 }

func round(c float64) float64 { return float64(int64(c*1000+0.5)) / 1000 }

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

// List returns every fact kept for host and the hosts related to it (host
// or URL; "" lists every site), most confident first.
func (s *Store) List(ctx context.Context, host string) ([]Fact, error) {
	fs, err := s.list(ctx, host, related)
	if errors.Is(err, engine.ErrInvalid) {
		return nil, err // names the domain already
	}
	if err != nil {
		return nil, fmt.Errorf("fact: list %q: %w", host, err)
	}
	return fs, nil
}

// Confident returns the facts that reach the prompt on host (or URL): those
// kept for host or a parent domain of it ("www." aside) with confidence at
// least MinConfidence, most confident first.
func (s *Store) Confident(ctx context.Context, host string) ([]Fact, error) {
	fs, err := s.list(ctx, host, applies)
	if err != nil {
		return nil, fmt.Errorf("fact: recall %s: %w", host, err)
	}
	var out []Fact
	for _, f := range fs {
		if f.Confidence >= s.minC {
			out = append(out, f)
		}
	}
	// Shown often and never of help: after the rest, in their order.
	sort.SliceStable(out, func(i, j int) bool { return !out[i].Unhelpful() && out[j].Unhelpful() })
	s.ev.Emit(EventRecall, map[string]any{"domain": host, "count": len(out), "min_confidence": s.minC})
	return out, nil
}

// facts is where facts are kept and how they are listed; its cache holds
// each site's decoded facts (see sitecache), so a context build per step
// does not decode them again.
var facts = &sitecache.Kind[Fact]{
	Cache:  sitecache.New[[]Fact](64),
	Gen:    keyspace.FactGen,
	Prefix: keyspace.Facts,
	Is:     keyspace.IsFact,
	Domain: func(f *Fact) string { return f.Domain },
	Pos:    listPos,
}

func (s *Store) list(ctx context.Context, host string, match func(h, r string) bool) ([]Fact, error) {
	var h string
	if host != "" {
		var err error
		if h, err = domain.Host(host); err != nil {
			return nil, engine.Invalid("fact", fmt.Sprintf("domain: %v", err))
		}
	}
	return facts.List(ctx, s.db, h, match)
}

// CursorKind names fact cursors (see engine/listing).
const CursorKind = "fact"

// listPos is a fact's position in List's order: most confident first, then
// most recently seen, then by host, type, key and value.
func listPos(f *Fact) string {
	return listing.FloatDesc(f.Confidence) + listing.TimeDesc(f.LastSeen) +
		f.Domain + "\x00" + string(f.Type) + "\x00" + f.Key + "\x00" + f.Value
}

// Page returns one page of what List(ctx, host) returns, in the same
// order: at most req.Limit after req.Cursor, and the cursor of the next
// page ("" after the last). A fact whose confidence and last sighting did
// not change between pages is neither repeated nor skipped. A cursor that
// is not one of a fact page is engine.ErrInvalid.
//
// Cost: not proportional to the page. Facts are kept by (host, type, key)
// and their order (confidence) changes with every observation, so a page
// reads what List reads, the host's site's facts (bounded by one site's
// data, and usually from the in-process cache), or every site's without a
// host, and sorts them.
func (s *Store) Page(ctx context.Context, host string, req listing.Request) (listing.Result[Fact], error) {
	return listing.SlicePage(CursorKind, req, 40, listPos, func() ([]Fact, error) { return s.List(ctx, host) })
}

// Attribution is what runs' steps did with one fact (named by domain,
// type, key and value): how many showed it, used it, and were helped.
type Attribution struct {
	Domain string `json:"domain"` // host or URL
	Type   Type   `json:"type"`
	Key    string `json:"key"`
	Value  string `json:"value"`
	engine.Counts
}

// Attribute adds each attribution's counts to its fact, all in one
// transaction, and returns how many facts it updated: one no longer kept
// (pruned, deleted, or a value since replaced) is skipped. A fact written
// by a program that reaches engine.PruneUnhelpfulAfter shown without ever
// helping is removed there (attribution.Learned; facts_pruned, reason
// "unhelpful"): counts change nowhere else.
func (s *Store) Attribute(ctx context.Context, as []Attribution) (int, error) {
	ups := make([]attribution.Update, 0, len(as))
	for _, a := range as {
		if err := a.Counts.Check("fact attribution"); err != nil {
			return 0, err
		}
		host, typ, key, value, err := normalise(a.Domain, string(a.Type), a.Key, a.Value)
		if err != nil {
			return 0, err
		}
		site := domain.Site(host)
		ups = append(ups, attribution.Update{Key: keyspace.Fact(site, host, string(typ), key, valueHash(value)), Site: site, Counts: a.Counts})
	}
	n := 0
	var pruned []Fact
	err := s.db.Update(ctx, func(tx kv.Txn) (err error) {
		pruned = pruned[:0]
		n, err = attribution.AddAll(tx, ups, attribution.Options[Fact]{
			Counts: func(f *Fact) *engine.Counts { return &f.Counts },
			Gen:    keyspace.FactGen,
			Version: func(tx kv.Txn, f *Fact, old []byte) error {
				return s.keep(tx, history.OpAttribute, f, old)
			},
			Prune: func(f *Fact) bool {
				if !attribution.Learned(f.Provenance, f.Counts) {
					return false
				}
				pruned = append(pruned, *f)
				return true
			},
		})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("fact: attribute %d facts: %w", len(as), err)
	}
	for _, f := range pruned {
		s.ev.Emit(EventPruned, map[string]any{"domain": f.Domain, "type": string(f.Type), "key": f.Key, "values": []string{f.Value}, "reason": "unhelpful"})
	}
	return n, nil
}
