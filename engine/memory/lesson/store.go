package lesson

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/internal/check"
	"github.com/engine-dev/engine/engine/memory/internal/sitecache"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// Defaults from the two-tier memory design.
const (
	DefaultTier1Cap     = 10
	DefaultMaxRecall    = 3
	DefaultPruneAgeDays = 90
	PromoteUseCount     = 5 // use_count >= 5 ...
	PromoteDomains      = 3 // ... across >= 3 triggered domains
	PruneKeepUseCount   = 5 // lessons used this often are never pruned
)

// ErrNotFound is returned for an id no lesson has.
var ErrNotFound = engine.NotFound("no such lesson")

// Options configure a Store.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Events receives memory events; nil drops them.
	Events event.Func
	// Provenance is who writes through this store: stamped on the
	// records it writes.
	Provenance engine.Provenance
	// HistoryKeep is how many past versions of each lesson are kept
	// (default 20, see History).
	HistoryKeep int
	// Tier1Cap caps the Tier 1 lessons (default 10).
	Tier1Cap int
	// MaxRecall caps each Tier 2 recall (default 3).
	MaxRecall int
	// Unindexed says the store predates the list indexes (schema 1, or a
	// migration to 2 that has not finished) and is opened read-only, so
	// they cannot be built: List and Page then read every lesson (or a
	// site's) and sort, as before the indexes. Writes still keep every
	// index, so set it only on a store that is not written.
	Unindexed bool
}

// Store is the lesson memory over a kv.Store. It is safe for concurrent use;
// every change is one read-modify-write transaction.
type Store struct {
	db   kv.Store
	opts Options
}

// New returns the lesson memory kept in db.
func New(db kv.Store, opts Options) *Store {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Tier1Cap <= 0 {
		opts.Tier1Cap = DefaultTier1Cap
	}
	if opts.MaxRecall <= 0 {
		opts.MaxRecall = DefaultMaxRecall
	}
	return &Store{db: db, opts: opts}
}

func (s *Store) today() string { return s.opts.Now().UTC().Format(time.DateOnly) }

// identity is what makes two lessons the same lesson: the (failed_command,
// error_pattern) pair, case-insensitively. A site_specific lesson is also
// told apart by its site, and a lesson with neither command nor pattern by
// its text (the design would merge every such lesson into one).
func identity(l *Lesson) string {
	cmd := strings.ToLower(strings.TrimSpace(l.FailedCommand))
	pat := strings.ToLower(strings.TrimSpace(l.ErrorPattern))
	var b strings.Builder
	if l.Category == SiteSpecific {
		b.WriteString("site\x00" + siteOf(l.Domain) + "\x00")
	}
	if cmd == "" && pat == "" {
		b.WriteString("text\x00" + strings.ToLower(strings.Join(strings.Fields(l.Lesson), " ")))
	} else {
		b.WriteString("pair\x00" + cmd + "\x00" + pat)
	}
	return b.String()
}

// idFor derives a lesson's id from its identity, so the same lesson gets the
// same id in every data dir (and export → import keeps ids).
func idFor(l *Lesson) string {
	sum := sha256.Sum256([]byte(identity(l)))
	return "l" + hex.EncodeToString(sum[:5])
}

// siteOf is the key site a lesson bound to d is stored under.
func siteOf(d string) string {
	if d == "" {
		return keyspace.Global
	}
	return domain.Site(d)
}

// entry is one secondary index entry of a lesson.
type entry struct{ key, value []byte }

// indexEntries are the secondary index entries a stored lesson needs. The
// error-recall entry carries what ranking needs (see matchEntry), so a
// recall reads and decodes only the lessons it returns.
func indexEntries(l *Lesson, record []byte) []entry {
	site := siteOf(l.Domain)
	es := []entry{
		{keyspace.LessonID(l.ID), []byte(site)},
		{keyspace.LessonByCommand(site, l.FailedCommand, l.UseCount, l.ID), encodeMatch(l)},
	}
	if l.Domain != "" {
		es = append(es, entry{keyspace.LessonByHost(site, l.Domain, l.UseCount, l.ID), nil})
	}
	if l.posTier() == 1 {
		es = append(es, entry{keyspace.Tier1(l.UseCount, l.Source == SourceSeed, l.ID), record})
	}
	es = append(es, listEntries(l)...)
	if prunable(l) {
		es = append(es, entry{keyspace.LessonDue(dueDay(l), l.ID), nil})
	}
	return es
}

// listPos is l's position in list order (see keyspace.LessonPos).
func listPos(l *Lesson) string {
	return keyspace.LessonPos(l.posTier(), l.UseCount, l.Source == SourceSeed, l.ID)
}

// prunable reports whether l is in the due index: every lesson but a seed
// (before the wider sources, every lesson but a seed was "learned"), while
// used fewer than PruneKeepUseCount times; and one pruned for its counters
// (prunableUnhelpful, filed under unhelpfulDay).
func prunable(l *Lesson) bool {
	return l.Source != SourceSeed && l.UseCount < PruneKeepUseCount || prunableUnhelpful(l)
}

// listEntries are the entries that keep l in the lists' order: among all
// lessons, in its category, and (bound to a host) in its host's list.
func listEntries(l *Lesson) []entry {
	site, pos := siteOf(l.Domain), listPos(l)
	es := []entry{
		{keyspace.LessonList(pos), []byte(site)},
		{keyspace.LessonListByCategory(string(l.Category), pos), []byte(site)},
	}
	if l.Domain != "" {
		es = append(es, entry{keyspace.LessonListByHost(site, l.Domain, pos), []byte(l.Category)})
	}
	return es
}

// put writes l (whose previous state was old, or nil for a new lesson) and
// keeps every index in step, in tx.
func put(tx kv.Txn, old, l *Lesson) error {
	_, err := putRecord(tx, old, l)
	return err
}

// putRecord is put, returning the record it stored.
func putRecord(tx kv.Txn, old, l *Lesson) ([]byte, error) {
	l.legacy = false // written now with its trust
	b, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("lesson %s: encode: %w", l.ID, err)
	}
	newEntries := indexEntries(l, b)
	if old != nil {
		if siteOf(old.Domain) != siteOf(l.Domain) {
			if err := tx.Delete(keyspace.Lesson(siteOf(old.Domain), old.ID)); err != nil {
				return nil, err
			}
		}
		for _, e := range indexEntries(old, nil) {
			if !slices.ContainsFunc(newEntries, func(n entry) bool { return string(n.key) == string(e.key) }) {
				if err := tx.Delete(e.key); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := tx.Set(keyspace.Lesson(siteOf(l.Domain), l.ID), b, 0); err != nil {
		return nil, err
	}
	for _, e := range newEntries {
		if err := tx.Set(e.key, e.value, 0); err != nil {
			return nil, err
		}
	}
	if old != nil && siteOf(old.Domain) != siteOf(l.Domain) {
		if err := touch(tx, siteOf(old.Domain)); err != nil {
			return nil, err
		}
	}
	return b, touch(tx, siteOf(l.Domain))
}

// putOwn is put, noting in *w what the write changed so the caller can
// apply it to the cached recall indexes once committed (ownWrite.advance).
func putOwn(tx kv.Txn, old, l *Lesson, w **ownWrite) error {
	var err error
	if *w, err = begin(tx, old, l); err != nil {
		return err
	}
	b, err := putRecord(tx, old, l)
	if err != nil {
		return err
	}
	(*w).written = sync.OnceValue(func() *Lesson { return written(b, l.ID) })
	if err := (*w).end(tx); err != nil {
		return err
	}
	(*w).prepare()
	return nil
}

// touch writes a fresh lesson generation token for site (keyspace.LessonGen)
// in tx: every write of a lesson record or index entry in the site's range
// calls it, so a recall index compiled before the write is not trusted
// after it (see index.go).
func touch(tx kv.Txn, site string) error {
	return tx.Set(keyspace.LessonGen(site), []byte(sitecache.Gen()), 0)
}

// remove deletes l and its index entries in tx.
func remove(tx kv.Txn, l *Lesson) error {
	if err := tx.Delete(keyspace.Lesson(siteOf(l.Domain), l.ID)); err != nil {
		return err
	}
	for _, e := range indexEntries(l, nil) {
		if err := tx.Delete(e.key); err != nil {
			return err
		}
	}
	return touch(tx, siteOf(l.Domain))
}

// load reads the lesson with id, or returns ErrNotFound.
func load(r kv.Reader, id string) (*Lesson, error) {
	site, err := r.Get(keyspace.LessonID(id))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, fmt.Errorf("lesson %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return loadAt(r, string(site), id)
}

func loadAt(r kv.Reader, site, id string) (*Lesson, error) {
	b, err := r.Get(keyspace.Lesson(site, id))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, fmt.Errorf("lesson %s: index points at site %s, which has no such record: %w", id, site, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decode(b, id)
}

func decode(b []byte, id string) (*Lesson, error) {
	var l Lesson
	if err := decodeInto(b, id, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// decodeInto decodes a lesson record into *l (zero), marking a record
// stored before trust levels and giving it its trust (legacyTrust).
func decodeInto(b []byte, id string, l *Lesson) error {
	if err := json.Unmarshal(b, l); err != nil {
		return fmt.Errorf("lesson %s: %w record: %w", id, errDamaged, err)
	}
	if l.Trust == "" {
		l.legacy, l.Trust = true, legacyTrust(l)
	}
	return nil
}

// Get returns the lesson with id.
func (s *Store) Get(ctx context.Context, id string) (*Lesson, error) {
	var l *Lesson
	err := s.db.View(ctx, func(r kv.Reader) error {
		var err error
		l, err = load(r, id)
		return err
	})
	return l, err
}

// normalize fills defaults, cleans fields and checks l before it is stored.
func (s *Store) normalize(l *Lesson) error {
	if err := checkText(l); err != nil {
		return err
	}
	l.Lesson = strings.TrimSpace(l.Lesson)
	if l.Lesson == "" {
		// Said first: an empty lesson is wrong whatever else is.
		return engine.Invalid("lesson", "the lesson text is empty")
	}
	// Recall compares failed_command with a failing command's verb, so
	// that is what is stored ("playwright-cli fill" → "fill"): a lesson
	// filed under a whole command line could never be recalled.
	l.FailedCommand = Verb(l.FailedCommand)
	if isWrapper(l.FailedCommand) {
		// Recall skips wrappers in a command line, so such a lesson
		// could never be recalled.
		return engine.Invalid("lesson", fmt.Sprintf("failed_command %q runs commands; give the command that failed (fill, click, ...)", l.FailedCommand))
	}
	l.ErrorPattern = strings.TrimSpace(l.ErrorPattern)
	if l.Domain != "" {
		h, err := domain.Host(l.Domain)
		if err != nil {
			return engine.Invalid("lesson", fmt.Sprintf("domain: %v", err))
		}
		l.Domain = h
	}
	if l.Category == SiteSpecific && l.Domain == "" {
		return engine.Invalid("lesson", "a site_specific lesson needs a domain")
	}
	if l.Source == "" {
		l.Source = SourceLearned
	}
	if l.CreatedAt == "" {
		l.CreatedAt = s.today()
	}
	if l.LastUsed == "" {
		l.LastUsed = l.CreatedAt
	}
	td := make([]string, 0, len(l.TriggeredDomains))
	for _, d := range l.TriggeredDomains {
		h, err := domain.Host(d)
		if err != nil {
			return engine.Invalid("lesson", fmt.Sprintf("triggered_domains: %v", err))
		}
		if !slices.Contains(td, h) {
			td = append(td, h)
		}
	}
	l.TriggeredDomains = td
	if err := l.validate(); err != nil {
		return err
	}
	if err := checkReason(l); err != nil {
		return err
	}
	if l.ID == "" {
		l.ID = idFor(l)
	}
	return nil
}

// checkText refuses text that cannot be stored safely: invalid UTF-8,
// control characters in the fields that go into keys and index entries
// (failed_command, error_pattern: a NUL byte in a pattern used to break the
// NUL-separated match entry), and over-long fields.
func checkText(l *Lesson) error {
	for _, f := range []struct {
		name, v   string
		max       int
		multiline bool
	}{
		{"the lesson text", l.Lesson, check.MaxText, true},
		{"failed_command", l.FailedCommand, check.MaxWord, false},
		{"error_pattern", l.ErrorPattern, check.MaxPattern, false},
		{"domain", l.Domain, check.MaxLine, false},
	} {
		if p := check.Text(f.name, f.v, f.max, f.multiline); p != "" {
			return engine.Invalid("lesson", p)
		}
	}
	if l.ID != "" {
		if p := check.ID("id", l.ID); p != "" {
			return engine.Invalid("lesson", p)
		}
	}
	return nil
}

// Record stores a lesson, or, when a lesson with the same identity exists,
// counts one more use of that one instead (deduplication). host is where
// the pattern was seen ("" when unknown). It returns the stored lesson and
// whether it was new.
//
// Who writes decides the new lesson's source, trust and provenance, not the
// lesson given: the store's Options.Provenance (an API request's
// Engine-Source: api unless a person's manual). A person's and the
// engine's lessons are trusted; any other starts as a candidate (see
// Trust). A person may still declare a seed (source seed, manual
// provenance).
//
// A lesson whose text fails the screen (engine/trust/injection) is not stored with
// the others: it is held in quarantine, returned with Quarantine set to the
// reason, and shown to no model until approved (Approve).
func (s *Store) Record(ctx context.Context, l Lesson, host string) (*Lesson, bool, error) {
	return s.record(ctx, l, host, s.source(), false)
}

// source is who writes through this store (api when the options say not).
func (s *Store) source() Source {
	if s.opts.Provenance.Source == "" {
		return SourceAPI
	}
	return s.opts.Provenance.Source
}

// stamp sets a new lesson's source, trust and provenance as written by src
// on host.
func (s *Store) stamp(l *Lesson, src Source, host string) {
	if l.Source != SourceSeed || src != SourceManual {
		l.Source = src
	}
	l.Trust = trustOf(l.Source)
	site := ""
	if host != "" {
		site = domain.Site(host)
	} else if l.Domain != "" {
		site = siteOf(l.Domain)
	}
	l.Provenance = s.opts.Provenance
	l.Provenance.Source = src
	l.Provenance = l.Provenance.Stamp(s.opts.Now(), site)
}

// record is Record as written by src; firstUse says the writing is itself
// the lesson's first use (learning: the run it was learned from).
func (s *Store) record(ctx context.Context, l Lesson, host string, src Source, firstUse bool) (*Lesson, bool, error) {
	if host != "" {
		if h, err := domain.Host(host); err == nil {
			host = h
		}
	}
	if l.Source != "" {
		if _, err := engine.ParseSource(string(l.Source)); err != nil {
			return nil, false, engine.Invalid("lesson", fmt.Sprintf("unknown source %q (want one of seed, manual, learned, imported, api)", l.Source))
		}
	}
	s.stamp(&l, src, host)
	if err := s.normalize(&l); err != nil {
		return nil, false, err
	}
	startCounts(&l, firstUse, host)
	if l.Quarantine == "" {
		l.Quarantine = screenOf(&l)
	}
	if l.Quarantine != "" {
		l.Trust = Quarantined
		var created bool
		err := s.db.Update(ctx, func(tx kv.Txn) error {
			var err error
			created, err = quarantine(tx, &l)
			return err
		})
		if err != nil {
			return nil, false, fmt.Errorf("lesson: record %s: %w", l.ID, err)
		}
		s.emitQuarantined(&l)
		return &l, created, nil
	}
	var (
		out     *Lesson
		created bool
		ch      change
		w       *ownWrite
	)
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		old, err := load(tx, l.ID)
		switch {
		case errors.Is(err, ErrNotFound):
			n := l
			ch = change{promoted: promote(&n)}
			out, created = &n, true
			return putOwn(tx, nil, &n, &w)
		case err != nil:
			return err
		}
		n := *old
		n.TriggeredDomains = slices.Clone(old.TriggeredDomains)
		ch = s.countUse(&n, host, false)
		out, created = &n, false
		if err := s.keep(tx, OpDedup, old); err != nil {
			return err
		}
		return putOwn(tx, old, &n, &w)
	})
	if err != nil {
		return nil, false, fmt.Errorf("lesson: record %s: %w", l.ID, err)
	}
	w.advance()
	if created {
		s.opts.Events.Emit(event.LessonRecorded, map[string]any{
			"lesson": out.Lesson, "category": out.Category,
			"failed_command": nullable(out.FailedCommand), "error_pattern": nullable(out.ErrorPattern),
		})
	} else {
		s.opts.Events.Emit(event.LessonDeduplicated, map[string]any{"lesson": out.Lesson, "new_use_count": out.UseCount})
	}
	s.emitChange(out, ch)
	return out, created, nil
}

// startCounts gives a new lesson written on host the counters the store
// starts every lesson with, whatever the writer sent: no use (one when the
// writing is its first use: the run learning found it in), the writer's
// own site as its only triggered domain (none when host is ""), and no
// shown, used or helped credit. Counters are evidence the store accounts
// for; a count a writer sends is a claim (see docs/design/trust.md).
func startCounts(l *Lesson, firstUse bool, host string) {
	l.UseCount = 0
	if firstUse {
		l.UseCount = 1
	}
	l.TriggeredDomains = []string{}
	if host != "" {
		l.TriggeredDomains = append(l.TriggeredDomains, domain.Site(host))
	}
	l.Counts = engine.Counts{}
}

// Use counts one use of lesson id on host: the pattern held again there.
// It returns the updated lesson. A use that is the lesson's second makes a
// candidate trusted (see Trust).
func (s *Store) Use(ctx context.Context, id, host string) (*Lesson, error) {
	l, ch, err := s.use(ctx, id, host, false)
	if err == nil {
		s.emitChange(l, ch)
	}
	return l, err
}

// Helped records that the agent's next action followed lesson id, shown to
// it on host, and succeeded: a use, and one more to its shown, used and
// helped counts. It makes a candidate trusted: the recovery worked in a
// successful run. A run credits its lessons with Attribute instead.
func (s *Store) Helped(ctx context.Context, id, host string) (*Lesson, error) {
	l, ch, err := s.use(ctx, id, host, true)
	if err == nil {
		s.emitChange(l, ch)
	}
	return l, err
}

// change is what a write did beyond itself, for the events its caller
// emits in the order that tells the story: a promotion, and why a
// candidate became trusted ("" when it did not).
type change struct {
	promoted bool
	trusted  string
	// offSite is the site a lesson bound to another domain was used on;
	// widened is the domain a learned lesson left ("" when neither).
	offSite, widened string
}

// use counts one use and reports what it changed.
func (s *Store) use(ctx context.Context, id, host string, helped bool) (*Lesson, change, error) {
	if host != "" {
		h, err := domain.Host(host)
		if err != nil {
			return nil, change{}, engine.Invalid("lesson", fmt.Sprintf("domain: %v", err))
		}
		host = h
	}
	var (
		out *Lesson
		ch  change
		w   *ownWrite
	)
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		old, err := load(tx, id)
		if err != nil {
			return err
		}
		n := *old
		n.TriggeredDomains = slices.Clone(old.TriggeredDomains)
		ch = s.countUse(&n, host, helped)
		out = &n
		op := OpUse
		if helped {
			op = OpHelped
		}
		if err := s.keep(tx, op, old); err != nil {
			return err
		}
		return putOwn(tx, old, &n, &w)
	})
	if err != nil {
		return nil, change{}, fmt.Errorf("lesson: use %s: %w", id, err)
	}
	w.advance()
	return out, ch, nil
}

// countUse applies one use on host to l (and one help when helped): the
// count, the day, the domain it was seen on, widening, promotion and
// trust by evidence. It reports what changed.
//
// A domain someone gave a lesson (a person, the API, an import, a seed) is
// a claim that the lesson is about that site: used on another site, the
// lesson keeps its domain, the site joins its triggered_domains and the
// change reports the off-site use; it is never promoted.
//
// Widening: a lesson learned from a run is bound by the learner to the site
// it was seen on, an observation rather than a claim. Seen on a second site
// that is not within it, it has shown it is not about that site, so it
// becomes global and the change reports it (site_specific lessons never
// widen).
//
// Trust: a candidate used a second time (learning counts a use once per
// log, so that is a second run) or credited by a successful run is
// trusted from then on.
func (s *Store) countUse(l *Lesson, host string, helped bool) change {
	l.UseCount++
	if helped {
		// A help is of a lesson shown and used (engine.Counts): the
		// caller saw it follow the lesson.
		l.Counts.Add(engine.Counts{Shown: 1, Used: 1, Helped: 1})
	}
	l.LastUsed = s.today()
	var ch change
	if host != "" {
		site := domain.Site(host)
		if !slices.Contains(l.TriggeredDomains, site) {
			l.TriggeredDomains = append(l.TriggeredDomains, site)
		}
		if l.Domain != "" && !domain.Within(host, l.Domain) {
			if l.Source == SourceLearned && l.Category != SiteSpecific {
				ch.widened = l.Domain
				l.Domain = ""
			} else {
				ch.offSite = site
			}
		}
	}
	if l.Trust == Candidate && proven(l) {
		l.Trust = Trusted
		ch.trusted = "used again on another run"
		if helped {
			ch.trusted = "helped a successful run"
		}
	}
	ch.promoted = promote(l)
	return ch
}

// promote moves an error_recovery lesson into Tier 1 as a best_practice
// once it has been used often, across sites, and is bound to no site. Such
// a lesson has the evidence of trust, and is trusted.
func promote(l *Lesson) bool {
	if l.Category == ErrorRecovery && l.UseCount >= PromoteUseCount &&
		len(l.TriggeredDomains) >= PromoteDomains && l.Domain == "" {
		l.Category = BestPractice
		if l.Trust == Candidate {
			l.Trust = Trusted
		}
		return true
	}
	return false
}

// emitChange emits the events of what a write changed besides itself.
func (s *Store) emitChange(l *Lesson, ch change) {
	if ch.offSite != "" {
		s.opts.Events.Emit(event.LessonUsedOffSite, map[string]any{
			"id": l.ID, "lesson": l.Lesson, "domain": l.Domain, "site": ch.offSite,
			"triggered_domains": l.TriggeredDomains,
		})
	}
	if ch.widened != "" {
		s.opts.Events.Emit(event.LessonWidened, map[string]any{
			"id": l.ID, "lesson": l.Lesson, "from": ch.widened, "triggered_domains": l.TriggeredDomains,
		})
	}
	if ch.trusted != "" {
		s.emitTrusted(l, ch.trusted)
	}
	if ch.promoted {
		s.emitPromoted(l)
	}
}

func (s *Store) emitTrusted(l *Lesson, why string) {
	s.opts.Events.Emit(event.LessonTrusted, map[string]any{"id": l.ID, "lesson": l.Lesson, "why": why})
}

func (s *Store) emitPromoted(l *Lesson) {
	s.opts.Events.Emit(event.LessonPromoted, map[string]any{
		"lesson": l.Lesson, "use_count": l.UseCount, "triggered_domains": l.TriggeredDomains,
	})
}

// Remove deletes lesson id.
func (s *Store) Remove(ctx context.Context, id string) error {
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		l, err := load(tx, id)
		if err != nil {
			return err
		}
		if err := s.keep(tx, OpRemove, l); err != nil {
			return err
		}
		return remove(tx, l)
	})
	if err != nil {
		return fmt.Errorf("lesson: remove %s: %w", id, err)
	}
	return nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
