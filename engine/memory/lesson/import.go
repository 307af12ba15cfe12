package lesson

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/internal/check"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// importBatch bounds the lessons one import, forget or index transaction
// writes; a store with a lower op limit (etcd) gets fewer, lessonKeys keys
// read or written per lesson (its record, id and index entries, its
// version: one Get, two Sets, one Delete, and its site's generation token).
const (
	importBatch = 1000
	lessonKeys  = 15
)

// File is the two-tier design's memory.json: {"version": 1, "lessons": [...]}.
type File struct {
	Version int      `json:"version"`
	Lessons []Lesson `json:"lessons"`
}

// ReadFile decodes a memory.json. name is used in errors, which give the
// line of a syntax error, or the lesson and field of an invalid value.
func ReadFile(r io.Reader, name string) ([]Lesson, error) {
	b, err := engine.ReadInput(r, engine.MaxInputFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, engine.MarkInvalid(fmt.Errorf("%s: %s", name, engine.JSONProblem(b, err)))
	}
	if f.Version != 1 {
		return nil, engine.MarkInvalid(fmt.Errorf("%s: version %d is not a memory.json version this engine reads (want 1)", name, f.Version))
	}
	return f.Lessons, nil
}

// ImportOptions say how Prepare treats what a file claims.
type ImportOptions struct {
	// KeepTrust keeps each lesson's trust, source and provenance as the
	// file gives them (engine import --trust); a lesson without a trust
	// field (a two-tier memory.json) is trusted. Without it every lesson
	// is a candidate of source imported, except one that is exactly an
	// engine seed (its id and text). The screen applies either way.
	KeepTrust bool
}

// Prepare validates and normalises lessons for Import, merging lessons of
// the same identity. An invalid lesson is reported by its position. The
// store's Options.Provenance gives the import's file and digest (File,
// SHA256), stamped on lessons whose provenance the import sets.
func (s *Store) Prepare(lessons []Lesson, opts ImportOptions) ([]Lesson, error) {
	byID := map[string]int{}
	var out []Lesson
	seeds := seedsByText()
	for i, l := range lessons {
		if l.TriggeredDomains == nil {
			l.TriggeredDomains = []string{}
		}
		id := l.ID
		if id != "" {
			if p := check.ID("id", id); p != "" {
				return nil, fmt.Errorf("lessons[%d]: %w", i, engine.Invalid("lesson", p))
			}
		}
		l.ID = ""
		if err := s.normalize(&l); err != nil {
			return nil, fmt.Errorf("lessons[%d]: %w", i, err)
		}
		if id != "" {
			l.ID = id // an exported lesson keeps its id
		}
		sd, isSeed := seeds[seedKey(l.Lesson)]
		isSeed = isSeed && l.Category != SiteSpecific
		if isSeed {
			s.asSeed(&l, sd)
		}
		if err := s.importTrust(&l, opts, isSeed); err != nil {
			return nil, fmt.Errorf("lessons[%d]: %w", i, err)
		}
		if l.Quarantine == "" {
			l.Quarantine = screenOf(&l)
		}
		if l.Quarantine != "" {
			l.Trust = Quarantined
		}
		j, seen := byID[l.ID]
		if !seen {
			byID[l.ID] = len(out)
			out = append(out, l)
			continue
		}
		m := &out[j]
		m.UseCount += l.UseCount
		m.Counts.Add(l.Counts)
		m.CreatedAt = min(m.CreatedAt, l.CreatedAt)
		m.LastUsed = max(m.LastUsed, l.LastUsed)
		for _, d := range l.TriggeredDomains {
			if !slices.Contains(m.TriggeredDomains, d) {
				m.TriggeredDomains = append(m.TriggeredDomains, d)
			}
		}
	}
	return out, nil
}

// importTrust sets an imported lesson's trust, source and provenance (see
// ImportOptions); seed says it is exactly one of the engine's seeds.
func (s *Store) importTrust(l *Lesson, opts ImportOptions, seed bool) error {
	if l.Trust == Quarantined && l.Quarantine == "" {
		l.Quarantine = "marked quarantined in the imported file"
	}
	stamp := func(src Source) {
		p := l.Provenance
		p.Source, p.File, p.SHA256 = src, s.opts.Provenance.File, s.opts.Provenance.SHA256
		p.At = s.opts.Now().UTC()
		if p.Site == "" && l.Domain != "" {
			p.Site = siteOf(l.Domain)
		}
		l.Provenance = p
	}
	switch {
	case opts.KeepTrust || seed:
		if l.Trust == "" {
			l.Trust = Trusted
		}
		if l.Provenance.Source == "" {
			stamp(SourceImported)
		}
	default:
		// The file's counts are claims: a plain import starts the lesson
		// as any written lesson starts (startCounts), with no site.
		l.Source, l.Trust = SourceImported, Candidate
		startCounts(l, false, "")
		stamp(SourceImported)
	}
	if l.Quarantine != "" {
		l.Trust = Quarantined
	}
	return l.Provenance.Check()
}

// seedKey is the form of a lesson's text that is compared with the seeds':
// case and spacing aside.
func seedKey(text string) string { return strings.ToLower(strings.Join(strings.Fields(text), " ")) }

// seedsByText maps each seed's text (seedKey) to the seed, with its id.
func seedsByText() map[string]Lesson {
	out := map[string]Lesson{}
	for _, l := range Seeds() {
		l.ID = idFor(&l)
		out[seedKey(l.Lesson)] = l
	}
	return out
}

// asSeed makes an imported lesson whose text is seed's that seed: its id,
// text, category, command and pattern, source seed and trusted, keeping the
// file's counts, days and triggered domains, which Import merges with the
// stored seed's. A domain the file gave it joins its triggered domains: a
// seed applies everywhere. A file cannot make a seed of any other text.
func (s *Store) asSeed(l *Lesson, seed Lesson) {
	if l.Domain != "" {
		if site := domain.Site(l.Domain); !slices.Contains(l.TriggeredDomains, site) {
			l.TriggeredDomains = append(l.TriggeredDomains, site)
		}
		l.Domain = ""
	}
	l.ID, l.Lesson, l.Category = seed.ID, seed.Lesson, seed.Category
	l.FailedCommand, l.ErrorPattern = seed.FailedCommand, seed.ErrorPattern
	l.Source, l.Trust, l.Quarantine = SourceSeed, Trusted, ""
	if l.Provenance.Source != SourceSeed || l.Provenance.At.IsZero() {
		l.Provenance = engine.Provenance{Source: SourceSeed, File: s.opts.Provenance.File, SHA256: s.opts.Provenance.SHA256,
			At: s.opts.Now().UTC()}
	}
}

// seedIDs are the ids of the engine's seeds.
var seedIDs = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, l := range Seeds() {
		out[idFor(&l)] = true
	}
	return out
})

// isSeed says whether l is one of the engine's seeds: its id and source.
func isSeed(l *Lesson) bool { return l.Source == SourceSeed && seedIDs()[l.ID] }

// everUsed says whether a stored lesson holds any evidence of use: a seed
// never used has nothing to merge, and the file's version replaces it as
// any import replaces a lesson (so an export imported elsewhere exports the
// same again).
func everUsed(l *Lesson) bool {
	return l.UseCount > 0 || l.Counts != (engine.Counts{}) || len(l.TriggeredDomains) > 0
}

// mergeSeed merges into the imported seed n what the stored seed old holds:
// the larger use count and counters, the earlier creation, the later use,
// both lists of triggered domains and the earlier provenance. Importing
// the same file twice changes nothing the second time.
func mergeSeed(old, n *Lesson) {
	n.UseCount = max(n.UseCount, old.UseCount)
	n.Counts.Shown = max(n.Counts.Shown, old.Counts.Shown)
	n.Counts.Used = max(n.Counts.Used, old.Counts.Used)
	n.Counts.Helped = max(n.Counts.Helped, old.Counts.Helped)
	n.CreatedAt = min(n.CreatedAt, old.CreatedAt)
	if old.UseCount > 0 {
		// A seed never used has last_used its seeding day, not a use.
		n.LastUsed = max(n.LastUsed, old.LastUsed)
	}
	td := slices.Clone(old.TriggeredDomains)
	for _, d := range n.TriggeredDomains {
		if !slices.Contains(td, d) {
			td = append(td, d)
		}
	}
	if td == nil {
		td = []string{}
	}
	n.TriggeredDomains = td
	if old.Source == SourceSeed && !n.Provenance.At.Before(old.Provenance.At) {
		n.Provenance = old.Provenance // the earlier of the two seedings
	}
}

// Import writes lessons prepared by Prepare, replacing stored lessons with
// the same id; a lesson Prepare found failing the screen (Quarantine set)
// is held in quarantine instead, whatever source or trust the file gave it. Callers validate everything they import before the first
// write, so bad input writes nothing.
func (s *Store) Import(ctx context.Context, lessons []Lesson) error {
	batch := kv.TxnItems(s.db, importBatch, lessonKeys)
	for start := 0; start < len(lessons); start += batch {
		chunk := lessons[start:min(start+batch, len(lessons))]
		err := s.db.Update(ctx, func(tx kv.Txn) error {
			for i := range chunk {
				l := chunk[i]
				if l.Quarantine != "" {
					if _, err := quarantine(tx, &l); err != nil {
						return err
					}
					continue
				}
				old, err := load(tx, l.ID)
				if err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
				if old != nil && isSeed(&l) && everUsed(old) {
					mergeSeed(old, &l)
				}
				if err := s.keepImport(tx, old, &l); err != nil {
					return err
				}
				if err := put(tx, old, &l); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("lesson: import: %w", err)
		}
	}
	return nil
}

// ForgetSite deletes every lesson bound to site (a registrable domain) with
// its index entries, including those outside the site's key range, and
// its kept versions: forgetting keeps no copy.
func (s *Store) ForgetSite(ctx context.Context, site string) (int, error) {
	if site == "" || site == keyspace.Global {
		return 0, engine.Invalid("lesson", "forgetting needs a site")
	}
	total := 0
	batch := kv.TxnItems(s.db, importBatch, lessonKeys+int(s.historyKeep())+1)
	for {
		n := 0
		err := s.db.Update(ctx, func(tx kv.Txn) error {
			n = 0
			var ls []*Lesson
			var damaged [][]byte
			err := tx.Scan(keyspace.Lessons(site), kv.ScanOptions{Limit: batch}, func(k, v []byte) error {
				l, err := decode(v, keyspace.LastPart(k))
				if err != nil {
					// Forgotten all the same; its entries outside the site's
					// range are what engine doctor --repair drops.
					damaged = append(damaged, bytes.Clone(k))
					return nil
				}
				ls = append(ls, l)
				return nil
			})
			if err != nil {
				return err
			}
			for _, l := range ls {
				if err := forgetHistory(tx, l.ID); err != nil {
					return err
				}
				if err := remove(tx, l); err != nil {
					return err
				}
			}
			for _, k := range damaged {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
			if len(damaged) > 0 {
				if err := touch(tx, site); err != nil {
					return err
				}
			}
			n = len(ls) + len(damaged)
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("lesson: forget %s: %w", site, err)
		}
		total += n
		if n < batch {
			break
		}
	}
	// The site's quarantined and retracted lessons go too.
	var held [][]byte
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		held = held[:0]
		err := tx.Scan(keyspace.QuarantinedLessons(), kv.ScanOptions{}, func(k, v []byte) error {
			l, err := decode(v, keyspace.LastPart(k))
			if err == nil && l.Domain != "" && siteOf(l.Domain) == site {
				held = append(held, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		var retracted []string
		err = tx.Scan(keyspace.RetractedLessons(), kv.ScanOptions{}, func(k, v []byte) error {
			var rt Retraction
			if json.Unmarshal(v, &rt) == nil && rt.Lesson.Domain != "" && siteOf(rt.Lesson.Domain) == site {
				held = append(held, bytes.Clone(k))
				retracted = append(retracted, rt.Lesson.ID)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, id := range retracted {
			if err := forgetHistory(tx, id); err != nil {
				return err
			}
		}
		for _, k := range held {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return total, fmt.Errorf("lesson: forget %s: quarantined: %w", site, err)
	}
	return total + len(held), nil
}
