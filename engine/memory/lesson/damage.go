package lesson

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/internal/sitecache"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// errDamaged marks a stored record or index entry that cannot be read as
// what it should be: a record that does not decode, a malformed index
// entry, a list entry at the wrong position.
var errDamaged = errors.New("damaged")

// errBadEntry is a malformed index entry.
var errBadEntry = fmt.Errorf("%w index entry", errDamaged)

// maxDamageKeys bounds the keys an event or a health report names.
const maxDamageKeys = 20

// damage counts what one read skipped because it could not be read. Reads
// skip such entries instead of failing, so one bad record never stops a
// recall, a list or the run that asked; reportDamage says so in an event,
// and Check / Repair (engine doctor [--repair]) find and mend them.
type damage struct {
	n    int
	keys []string
}

// skip counts key as damaged when err says it is (damaged, or an index
// entry pointing at no record) and returns nil; any other error (the store
// failing) is returned, for the read to fail with it.
func (d *damage) skip(key []byte, err error) error {
	if !errors.Is(err, errDamaged) && !errors.Is(err, ErrNotFound) {
		return err
	}
	d.n++
	if len(d.keys) < maxDamageKeys {
		d.keys = append(d.keys, string(key))
	}
	return nil
}

// reportDamage emits event.RecordsDamaged when op skipped something.
func (s *Store) reportDamage(op string, d *damage) {
	if d.n == 0 {
		return
	}
	s.opts.Events.Emit(event.RecordsDamaged, map[string]any{
		"store": "lesson", "op": op, "skipped": d.n, "keys": d.keys, "repair": "engine doctor --repair",
	})
}

// Health is what Check found in the lesson store.
type Health struct {
	// Records is the number of lesson records; Damaged those that do not
	// decode (DamagedKeys names the first few).
	Records     int      `json:"records"`
	Damaged     int      `json:"damaged"`
	DamagedKeys []string `json:"damaged_keys,omitempty"`
	// BadEntries are index entries no record needs, or that disagree with
	// the record they point at; MissingEntries are entries a record needs
	// and lacks. BadKeys names the first few of both.
	BadEntries     int      `json:"bad_entries"`
	MissingEntries int      `json:"missing_entries"`
	BadKeys        []string `json:"bad_keys,omitempty"`
	// MovedAside counts the records an earlier Repair moved out of the way
	// (keyspace.Damaged).
	MovedAside int `json:"moved_aside"`
}

// OK reports whether nothing needs repair.
func (h Health) OK() bool { return h.Damaged == 0 && h.BadEntries == 0 && h.MissingEntries == 0 }

// Check reads every lesson record and every lesson index entry, in one
// snapshot, and reports the records that do not decode and the index
// entries that are wrong or missing: the index is what recall and lists
// read, and it must say exactly what the records say. It writes nothing.
func (s *Store) Check(ctx context.Context) (Health, error) {
	var h Health
	err := s.db.View(ctx, func(r kv.Reader) error {
		h = Health{}
		want := map[string]uint64{} // index key → hash of its value, from the records
		have := map[string]uint64{} // index key → hash of its value, as stored
		err := r.Scan(keyspace.SitesPrefix(), kv.ScanOptions{}, func(k, v []byte) error {
			family, _ := keyspace.SiteFamily(k)
			switch family {
			case keyspace.FamilyLesson:
				h.Records++
				l, err := decodeAt(k, v)
				if err != nil {
					h.Damaged++
					if len(h.DamagedKeys) < maxDamageKeys {
						h.DamagedKeys = append(h.DamagedKeys, string(k))
					}
					return nil
				}
				for _, e := range indexEntries(l, v) {
					want[string(e.key)] = sum(e.value)
				}
			case keyspace.FamilyLessonCmd:
				have[string(k)] = sum(matchHead(v))
			case keyspace.FamilyLessonHost, keyspace.FamilyLessonList, keyspace.FamilyTier1:
				have[string(k)] = sum(v)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, p := range keyspace.LessonIndexPrefixes() {
			err := r.Scan(p, kv.ScanOptions{}, func(k, v []byte) error {
				have[string(k)] = sum(v)
				return nil
			})
			if err != nil {
				return err
			}
		}
		var bad []string
		for k, v := range have {
			if w, ok := want[k]; !ok || w != v {
				h.BadEntries++
				bad = append(bad, k)
			}
		}
		for k := range want {
			if _, ok := have[k]; !ok {
				h.MissingEntries++
				bad = append(bad, k)
			}
		}
		slices.Sort(bad)
		h.BadKeys = bad[:min(len(bad), maxDamageKeys)]
		return r.Scan(keyspace.DamagedPrefix(), kv.ScanOptions{KeysOnly: true}, func([]byte, []byte) error {
			h.MovedAside++
			return nil
		})
	})
	if err != nil {
		return Health{}, fmt.Errorf("lesson: check: %w", err)
	}
	return h, nil
}

// decodeAt decodes the record stored at key k, which must be where the
// record belongs (its id and its domain's site).
func decodeAt(k, v []byte) (*Lesson, error) {
	l, err := decode(v, keyspace.LastPart(k))
	if err != nil {
		return nil, err
	}
	if string(keyspace.Lesson(siteOf(l.Domain), l.ID)) != string(k) {
		return nil, fmt.Errorf("lesson %s: %w record: stored at %s, not where its id and domain put it", l.ID, errDamaged, k)
	}
	return l, nil
}

func sum(b []byte) uint64 {
	f := fnv.New64a()
	f.Write(b)
	return f.Sum64()
}

// repairBatch bounds the writes of one Batch or transaction of Repair.
const repairBatch = 500

// Repair rebuilds every lesson index from the lesson records: it deletes
// all lesson index entries, moves each record that does not decode aside
// (keyspace.Damaged, byte for byte, out of every read path), and writes
// the entries of every other record afresh. It returns the health found
// afterwards. The caller must hold the store alone (no other writer):
// engine doctor --repair opens the data dir itself. Records are never
// lost: a record is moved aside in one transaction (copy, then delete),
// and a crash part way leaves indexes that the next Repair rebuilds.
func (s *Store) Repair(ctx context.Context) (Health, error) {
	var drop []kv.Op
	var records [][]byte
	err := s.db.View(ctx, func(r kv.Reader) error {
		drop, records = nil, nil
		touched := map[string]bool{}
		err := r.Scan(keyspace.SitesPrefix(), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			switch family, site := keyspace.SiteFamily(k); family {
			case keyspace.FamilyLesson:
				records = append(records, slices.Clone(k))
			case keyspace.FamilyLessonCmd, keyspace.FamilyLessonHost, keyspace.FamilyLessonList, keyspace.FamilyTier1:
				drop = append(drop, kv.Op{Key: slices.Clone(k), Delete: true})
				if !touched[site] {
					// A fresh generation token with the first batch: no
					// recall index compiled before the repair is trusted.
					touched[site] = true
					drop = append(drop, kv.Op{Key: keyspace.LessonGen(site), Value: []byte(sitecache.Gen())})
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, p := range keyspace.LessonIndexPrefixes() {
			err := r.Scan(p, kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
				drop = append(drop, kv.Op{Key: slices.Clone(k), Delete: true})
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Health{}, fmt.Errorf("lesson: repair: %w", err)
	}
	for len(drop) > 0 {
		n := min(len(drop), repairBatch)
		if err := s.db.Batch(ctx, drop[:n]); err != nil {
			return Health{}, fmt.Errorf("lesson: repair: dropping index entries: %w", err)
		}
		drop = drop[n:]
	}
	batch := kv.TxnItems(s.db, repairBatch, lessonKeys) // a record read, then moved or reindexed
	for len(records) > 0 {
		n := min(len(records), batch)
		err := s.db.Update(ctx, func(tx kv.Txn) error {
			for _, k := range records[:n] {
				v, err := tx.Get(k)
				if errors.Is(err, kv.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				_, site := keyspace.SiteFamily(k)
				if err := touch(tx, site); err != nil {
					return err
				}
				l, err := decodeAt(k, v)
				if err != nil {
					if err := tx.Set(keyspace.Damaged(k), v, 0); err != nil {
						return err
					}
					if err := tx.Delete(k); err != nil {
						return err
					}
					continue
				}
				for _, e := range indexEntries(l, v) {
					if err := tx.Set(e.key, e.value, 0); err != nil {
						return fmt.Errorf("lesson %s: set %s: %w", l.ID, e.key, err)
					}
				}
			}
			return nil
		})
		if err != nil {
			return Health{}, fmt.Errorf("lesson: repair: reindexing: %w", err)
		}
		records = records[n:]
	}
	return s.Check(ctx)
}
