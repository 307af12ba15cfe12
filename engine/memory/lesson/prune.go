package lesson

import (
	"context"
	"fmt"
	"time"

	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// pruneBatch bounds the lessons one prune transaction removes; a store
// with a lower op limit (etcd) gets fewer (pruneKeys keys read or written
// per lesson: its due entry, id and record, its index entries, and its
// version).
const (
	pruneBatch = 500
	pruneKeys  = 14
)

// Prune removes old learned lessons: last used more than maxAgeDays days
// ago (default 90) and used fewer than 5 times; and unhelpful ones: written
// by a program (not a seed, not a person's), shown
// engine.PruneUnhelpfulAfter times and never helped, whatever their age or
// use (prunableUnhelpful; the event's unhelpful_count). Seeds are never
// pruned. It reads only the lessons due for pruning, through an index of
// learned lessons by last use, and reports how many it removed and how
// many lessons remain. The lessons_pruned event is emitted when it removed
// any, as the seed's does (its example event log of a run, which loads and
// so prunes, has none).
func (s *Store) Prune(ctx context.Context, maxAgeDays int) (pruned, remaining int, err error) {
	if maxAgeDays <= 0 {
		maxAgeDays = DefaultPruneAgeDays
	}
	cutoff := s.opts.Now().UTC().AddDate(0, 0, -maxAgeDays).Format(time.DateOnly)
	batch := kv.TxnItems(s.db, pruneBatch, pruneKeys)
	unhelpful := 0 // of pruned, those pruned for their counters
	for {
		n, u := 0, 0
		err := s.db.Update(ctx, func(tx kv.Txn) error {
			n, u = 0, 0
			var due []*Lesson
			err := tx.Scan(keyspace.LessonDuePrefix(), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
				// due/lesson/<yyyy-mm-dd>/<id>: stop at the first day not before the cutoff.
				day := string(k[len(keyspace.LessonDuePrefix()):][:len(time.DateOnly)])
				if day >= cutoff || len(due) == batch {
					return kv.ErrStop
				}
				l, err := load(tx, keyspace.LastPart(k))
				if err != nil {
					return err
				}
				due = append(due, l)
				return nil
			})
			if err != nil {
				return err
			}
			for _, l := range due {
				if !prunableUnhelpful(l) && (l.Source == SourceSeed || l.UseCount >= PruneKeepUseCount) {
					continue // not indexed as due; defensive
				}
				if prunableUnhelpful(l) {
					u++
				}
				if err := s.keep(tx, OpPrune, l); err != nil {
					return err
				}
				if err := remove(tx, l); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if err != nil {
			return pruned, 0, fmt.Errorf("lesson: prune: %w", err)
		}
		pruned += n
		unhelpful += u
		if n < batch {
			break
		}
	}
	err = s.db.View(ctx, func(r kv.Reader) error {
		remaining = 0
		return r.Scan(keyspace.LessonIDPrefix(), kv.ScanOptions{KeysOnly: true}, func(_, _ []byte) error {
			remaining++
			return nil
		})
	})
	if err != nil {
		return pruned, 0, fmt.Errorf("lesson: prune: count: %w", err)
	}
	if pruned > 0 {
		fields := map[string]any{"pruned_count": pruned, "remaining_count": remaining}
		if unhelpful > 0 {
			fields["unhelpful_count"] = unhelpful // the seed's event otherwise
		}
		s.opts.Events.Emit(event.LessonsPruned, fields)
	}
	return pruned, remaining, nil
}
