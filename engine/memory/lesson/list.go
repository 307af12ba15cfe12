package lesson

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// CursorKind names lesson cursors (see engine/listing).
const CursorKind = "lesson"

// Filter selects lessons for List and Page. Zero values select everything.
type Filter struct {
	Domain   string   // lessons that apply on this host (bound to it or a parent)
	Category Category // one category
	Tier     int      // 1 or 2
	Trust    Trust    // trusted or candidate ("" for both; quarantined lessons are not listed here, see Quarantined)
	Max      int      // List: at most this many (Page ignores it: the request's Limit bounds a page)
}

// filter is a checked Filter.
type filter struct {
	host, site string // host "" for no domain filter
	category   Category
	tier       int
	trust      Trust
}

func (f Filter) check() (filter, error) {
	out := filter{category: f.Category, tier: f.Tier, trust: f.Trust}
	if f.Trust != "" && f.Trust != Trusted && f.Trust != Candidate {
		return out, engine.Invalid("lesson", fmt.Sprintf("trust must be trusted or candidate, not %q (quarantined lessons are listed apart)", f.Trust))
	}
	if f.Domain != "" {
		h, err := domain.Host(f.Domain)
		if err != nil {
			return out, engine.Invalid("lesson", fmt.Sprintf("domain: %v", err))
		}
		out.host, out.site = h, domain.Site(h)
	}
	if f.Category != "" {
		if _, err := ParseCategory(string(f.Category)); err != nil {
			return out, err
		}
	}
	if f.Tier < 0 || f.Tier > 2 {
		return out, engine.Invalid("lesson", fmt.Sprintf("tier must be 1 or 2, not %d", f.Tier))
	}
	if f.Max < 0 {
		return out, engine.Invalid("lesson", "max is negative")
	}
	return out, nil
}

func (f filter) keep(l *Lesson) bool {
	return (f.category == "" || l.Category == f.category) && f.keepRead(l) &&
		(f.host == "" || (l.Domain != "" && domain.Within(f.host, l.Domain)))
}

// keepRead is what a listed entry's lesson must pass once read: the trust
// filter, and the tier (a lesson stored before trust levels may sit among
// Tier 1's entries while it reads as Tier 2).
func (f filter) keepRead(l *Lesson) bool {
	return (f.tier == 0 || l.Tier() == f.tier) && (f.trust == "" || l.Trust == f.trust)
}

// List returns the lessons that pass f in list order: Tier 1 first, then
// most used, then seeds before learned, then by id; at most f.Max when it
// is set. It reads one snapshot. With Max it reads only the index entries
// and lessons it returns (see Page for what a filter costs); without, every
// lesson that passes.
func (s *Store) List(ctx context.Context, f Filter) ([]Lesson, error) {
	ff, err := f.check()
	if err != nil {
		return nil, err
	}
	var out []Lesson
	var dmg damage
	err = s.db.View(ctx, func(r kv.Reader) error {
		var err error
		dmg = damage{}
		out, _, err = s.listFrom(r, ff, "", f.Max, &dmg)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("lesson: list: %w", err)
	}
	s.reportDamage("list", &dmg)
	return out, nil
}

// Page returns one page of the lessons List(ctx, f) returns, in the same
// order: at most req.Limit of them after req.Cursor, and the cursor of the
// next page ("" after the last). Concatenating the pages gives List's
// output when nothing is written meanwhile; under concurrent writes a
// lesson whose position (tier, use count, source, id) did not change
// between pages is neither repeated nor skipped. A cursor that is not one
// of a lesson page is engine.ErrInvalid. f.Max is ignored.
//
// Cost: without a domain filter, with or without a tier or category
// filter, a page reads limit+1 index entries and the limit lessons it
// returns (list/lesson/ or list/lesson-cat/<category>/, whose tier is the
// first part of the position). With a domain filter it reads up to
// limit+1 entries of the list of each domain the host is within (host,
// parents, down to its site: a handful), skipping only the entries of
// another category; a tier 1 filter with a domain is empty without a read
// (lessons bound to a domain are Tier 2).
func (s *Store) Page(ctx context.Context, f Filter, req listing.Request) (listing.Result[Lesson], error) {
	var res listing.Result[Lesson]
	ff, err := f.check()
	if err != nil {
		return res, err
	}
	n, after, err := req.Open(CursorKind, keyspace.CheckLessonPos)
	if err != nil {
		return res, err
	}
	var more bool
	var dmg damage
	err = s.db.View(ctx, func(r kv.Reader) error {
		var err error
		dmg = damage{}
		res.Items, more, err = s.listFrom(r, ff, after, n, &dmg)
		return err
	})
	if err != nil {
		return listing.Result[Lesson]{}, fmt.Errorf("lesson: page: %w", err)
	}
	s.reportDamage("list", &dmg)
	if res.Items == nil {
		res.Items = []Lesson{}
	}
	if more && len(res.Items) > 0 {
		res.Next = listing.Encode(CursorKind, listPos(&res.Items[len(res.Items)-1]))
	}
	return res, nil
}

// listFrom reads, in r, up to n lessons (n <= 0: all) that pass f and lie
// after position after ("" = from the first), in list order, and reports
// whether more follow. Entries and lessons that cannot be read are skipped
// and counted in dmg.
func (s *Store) listFrom(r kv.Reader, f filter, after string, n int, dmg *damage) ([]Lesson, bool, error) {
	if s.opts.Unindexed {
		return s.listScan(r, f, after, n, dmg)
	}
	if f.host != "" {
		return s.listHost(r, f, after, n, dmg)
	}
	family := keyspace.LessonListPrefix()
	if f.category != "" {
		family = keyspace.LessonListCategory(string(f.category))
	}
	prefix := family
	if f.tier != 0 {
		prefix = append(slices.Clip(family), strconv.Itoa(f.tier)+"/"...)
	}
	opts := kv.ScanOptions{}
	var start []byte
	if after != "" {
		start = append(slices.Clip(family), after...)
		switch {
		case bytes.HasPrefix(start, prefix):
			opts.Start = start
		case bytes.Compare(start, prefix) > 0:
			return nil, false, nil // the cursor is past this tier
		}
	}
	var out []Lesson
	more := false
	err := r.Scan(prefix, opts, func(k, v []byte) error {
		if start != nil && bytes.Equal(k, start) {
			return nil
		}
		if n > 0 && len(out) == n {
			more = true
			return kv.ErrStop
		}
		l, err := loadListed(r, string(v), k)
		if err != nil {
			return dmg.skip(k, err)
		}
		if f.keepRead(l) {
			out = append(out, *l)
		}
		return nil
	})
	return out, more, err
}

// loadListed loads the lesson a list entry at key names, stored under
// site, and checks that the entry sits where the lesson belongs.
func loadListed(r kv.Reader, site string, key []byte) (*Lesson, error) {
	l, err := loadAt(r, site, keyspace.LastPart(key))
	if err != nil {
		return nil, err
	}
	if pos := keyspace.LessonPosOf(key); pos != listPos(l) {
		return nil, fmt.Errorf("lesson %s: list entry %q is stale (the lesson is at %s): %w index", l.ID, key, pos, errDamaged)
	}
	return l, nil
}

// listHost is listFrom with a domain filter: a merge of the lists of the
// domains the host is within.
func (s *Store) listHost(r kv.Reader, f filter, after string, n int, dmg *damage) ([]Lesson, bool, error) {
	if f.tier == 1 {
		return nil, false, nil
	}
	type hit struct {
		pos string
		key []byte
	}
	var hits []hit
	for _, d := range domainsOf(f.host, f.site) {
		if !domain.Within(f.host, d) {
			continue
		}
		prefix := keyspace.LessonListHost(f.site, d)
		opts := kv.ScanOptions{}
		var start []byte
		if after != "" {
			start = append(slices.Clip(prefix), after...)
			opts.Start = start
		}
		found := 0
		err := r.Scan(prefix, opts, func(k, v []byte) error {
			if start != nil && bytes.Equal(k, start) {
				return nil
			}
			if f.category != "" && string(v) != string(f.category) {
				return nil
			}
			if n > 0 && found == n+1 && f.trust == "" {
				return kv.ErrStop // with a trust filter, read on: which pass is known once read
			}
			found++
			hits = append(hits, hit{string(k[len(prefix):]), bytes.Clone(k)})
			return nil
		})
		if err != nil {
			return nil, false, err
		}
	}
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(a.pos, b.pos) })
	more := false
	if n > 0 && len(hits) > n && f.trust == "" {
		hits, more = hits[:n], true
	}
	out := make([]Lesson, 0, len(hits))
	for _, h := range hits {
		l, err := loadListed(r, f.site, h.key)
		if err != nil {
			if err := dmg.skip(h.key, err); err != nil {
				return nil, false, err
			}
			continue
		}
		if !f.keepRead(l) {
			continue
		}
		if n > 0 && len(out) == n {
			more = true
			break
		}
		out = append(out, *l)
	}
	return out, more, nil
}

// listScan is listFrom for a store without the list indexes: it reads
// every lesson (or, with a domain filter, the site's), filters and sorts.
func (s *Store) listScan(r kv.Reader, f filter, after string, n int, dmg *damage) ([]Lesson, bool, error) {
	var out []Lesson
	keep := func(l *Lesson) {
		if f.keep(l) && (after == "" || listPos(l) > after) {
			out = append(out, *l)
		}
	}
	var err error
	if f.host != "" {
		err = r.Scan(keyspace.Lessons(f.site), kv.ScanOptions{}, func(k, v []byte) error {
			l, err := decode(v, keyspace.LastPart(k))
			if err != nil {
				return dmg.skip(k, err)
			}
			keep(l)
			return nil
		})
	} else {
		err = r.Scan(keyspace.LessonIDPrefix(), kv.ScanOptions{}, func(k, site []byte) error {
			l, err := loadAt(r, string(site), keyspace.LastPart(k))
			if err != nil {
				return dmg.skip(k, err)
			}
			keep(l)
			return nil
		})
	}
	if err != nil {
		return nil, false, err
	}
	slices.SortFunc(out, func(a, b Lesson) int {
		return cmp.Or(cmp.Compare(a.Tier(), b.Tier()), cmp.Compare(b.UseCount, a.UseCount),
			cmp.Compare(sourceOrder(a.Source), sourceOrder(b.Source)), cmp.Compare(a.ID, b.ID))
	})
	if n > 0 && len(out) > n {
		return out[:n], true, nil
	}
	return out, false, nil
}

// BuildListIndex writes the list index entries of every stored lesson
// (the schema 1 → 2 migration; engine/memory runs it). It is idempotent
// and writes in transactions of a bounded size, so a crash part way is
// repaired by running it again. It returns the number of lessons indexed.
func (s *Store) BuildListIndex(ctx context.Context) (int, error) {
	total := 0
	var start []byte
	batch := kv.TxnItems(s.db, importBatch, lessonKeys)
	for {
		n := 0
		var last []byte
		err := s.db.Update(ctx, func(tx kv.Txn) error {
			n, last = 0, nil
			var ls []*Lesson
			opts := kv.ScanOptions{Start: start, Limit: batch + 1}
			err := tx.Scan(keyspace.LessonIDPrefix(), opts, func(k, site []byte) error {
				if start != nil && bytes.Equal(k, start) {
					return nil
				}
				if len(ls) == batch {
					return kv.ErrStop
				}
				l, err := loadAt(tx, string(site), keyspace.LastPart(k))
				if err != nil {
					return err
				}
				ls = append(ls, l)
				last = bytes.Clone(k)
				return nil
			})
			if err != nil {
				return err
			}
			for _, l := range ls {
				for _, e := range listEntries(l) {
					if err := tx.Set(e.key, e.value, 0); err != nil {
						return fmt.Errorf("lesson %s: set %s: %w", l.ID, e.key, err)
					}
				}
			}
			n = len(ls)
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("lesson: build list index after %q: %w", start, err)
		}
		total += n
		if n < batch {
			return total, nil
		}
		start = last
	}
}
