package lesson

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// DefaultHistoryKeep is how many past versions of a lesson are kept.
const DefaultHistoryKeep = history.DefaultKeep

// Ops a version records: what replaced it.
const (
	OpUse     = "use"
	OpHelped  = "helped"
	OpDedup   = "dedup"
	OpApprove = "approve"
	OpEdit    = "edit"
	OpRetract = "retract"
	OpRevert  = "revert"
	OpRemove  = "remove"
	OpImport  = "import"
	OpPrune   = "prune"
)

// ErrNoVersion is a revert to a version a lesson does not have.
var ErrNoVersion = engine.NotFound("no such lesson version")

// Version is a lesson as it was before one change: who made the change
// (By, the writing store's provenance), when, and what it was (Op).
type Version struct {
	Version uint64            `json:"version"`
	At      time.Time         `json:"at"`
	By      engine.Provenance `json:"by"`
	Op      string            `json:"op"`
	Lesson  Lesson            `json:"lesson"`
}

// Retraction is a lesson withdrawn from every prompt by a person, kept
// with the reason for audit until reverted.
type Retraction struct {
	Reason string            `json:"reason"`
	At     time.Time         `json:"at"`
	By     engine.Provenance `json:"by"`
	Lesson Lesson            `json:"lesson"`
}

func (s *Store) historyKeep() uint64 { return history.KeepN(s.opts.HistoryKeep) }

// by is who changes lessons through this store.
func (s *Store) by() engine.Provenance {
	p := s.opts.Provenance
	if p.Source == "" {
		p.Source = s.source()
	}
	return p
}

// keep stores old (the lesson a change by op replaces) as its next
// version in tx, keeping the last HistoryKeep (engine/memory/history).
// old is encoded again: reading its stored bytes back costs a Get, which
// allocates more than the encoding (measured); the bytes load read are
// not passed down to here.
func (s *Store) keep(tx kv.Txn, op string, old *Lesson) error {
	if old == nil {
		return nil
	}
	rec, err := json.Marshal(old)
	if err != nil {
		return fmt.Errorf("lesson %s: keep version: %w", old.ID, err)
	}
	c := history.Change{At: s.opts.Now(), By: s.by(), Op: op}
	return history.Keep(tx, history.Lesson, old.ID, c, rec, s.historyKeep())
}

// keepImport keeps old, the lesson an import replaces with l, as a version
// (op import), unless l is the same record (importing an export again
// changes nothing); a lesson the import creates gets an absent version
// (history.Absent), so revert --import removes it.
func (s *Store) keepImport(tx kv.Txn, old, l *Lesson) error {
	if old != nil {
		was, err := json.Marshal(old)
		if err != nil {
			return err
		}
		if b, err := json.Marshal(l); err == nil && bytes.Equal(b, was) {
			return nil
		}
		return s.keep(tx, OpImport, old)
	}
	c := history.Change{At: s.opts.Now(), By: s.by(), Op: OpImport}
	return history.Keep(tx, history.Lesson, l.ID, c, history.Absent, s.historyKeep())
}

// forgetHistory deletes every kept version of lesson id, in tx.
func forgetHistory(tx kv.Txn, id string) error { return history.Forget(tx, history.Lesson, id) }

// History returns the kept versions of lesson id, newest first (also of a
// removed or retracted lesson: they are kept for audit). A lesson with
// none returns ErrNotFound unless it exists.
func (s *Store) History(ctx context.Context, id string) ([]Version, error) {
	var out []Version
	err := s.db.View(ctx, func(r kv.Reader) error {
		err := r.Scan(keyspace.LessonHistoryOf(id), kv.ScanOptions{Reverse: true}, func(k, b []byte) error {
			var v Version
			if err := json.Unmarshal(b, &v); err != nil {
				return fmt.Errorf("lesson %s: %w version %s: %w", id, errDamaged, keyspace.LastPart(k), err)
			}
			out = append(out, v)
			return nil
		})
		if err != nil || len(out) > 0 {
			return err
		}
		if _, err := load(r, id); err != nil {
			if _, rerr := r.Get(keyspace.RetractedLesson(id)); rerr == nil {
				return nil
			}
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lesson: history %s: %w", id, err)
	}
	return out, nil
}

// Edit replaces the text of lesson id, keeping its id, counts and trust,
// and keeps the previous version (op edit). Text the screen refuses is
// refused with the screen's reason.
func (s *Store) Edit(ctx context.Context, id, text string) (*Lesson, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, engine.Invalid("lesson", "the new text is empty")
	}
	var out *Lesson
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		old, err := load(tx, id)
		if err != nil {
			return err
		}
		n := *old
		n.Lesson = text
		if err := checkText(&n); err != nil {
			return err
		}
		if err := n.validate(); err != nil {
			return err
		}
		if why := screenOf(&n); why != "" {
			return engine.Invalid("lesson", "the new text fails the screen: "+why)
		}
		if err := s.keep(tx, OpEdit, old); err != nil {
			return err
		}
		out = &n
		return put(tx, old, &n)
	})
	if err != nil {
		return nil, fmt.Errorf("lesson: edit %s: %w", id, err)
	}
	return out, nil
}

// Retract withdraws lesson id from recall, Tier 1, context and lists,
// holding it apart with reason (and keeping the version, op retract)
// until Revert restores it.
func (s *Store) Retract(ctx context.Context, id, reason string) (*Retraction, error) {
	reason, err := history.Reason(reason)
	if err != nil {
		return nil, err
	}
	var out *Retraction
	err = s.db.Update(ctx, func(tx kv.Txn) error {
		old, err := load(tx, id)
		if err != nil {
			return err
		}
		if err := s.keep(tx, OpRetract, old); err != nil {
			return err
		}
		if err := remove(tx, old); err != nil {
			return err
		}
		out = &Retraction{Reason: reason, At: s.opts.Now().UTC(), By: s.by(), Lesson: *old}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		return tx.Set(keyspace.RetractedLesson(id), b, 0)
	})
	if err != nil {
		return nil, fmt.Errorf("lesson: retract %s: %w", id, err)
	}
	return out, nil
}

// Retracted returns the retracted lessons, by id.
func (s *Store) Retracted(ctx context.Context) ([]Retraction, error) {
	var out []Retraction
	err := s.db.View(ctx, func(r kv.Reader) error {
		return r.Scan(keyspace.RetractedLessons(), kv.ScanOptions{}, func(k, b []byte) error {
			var rt Retraction
			if err := json.Unmarshal(b, &rt); err != nil {
				return fmt.Errorf("lesson %s: %w retraction: %w", keyspace.LastPart(k), errDamaged, err)
			}
			out = append(out, rt)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("lesson: retracted: %w", err)
	}
	return out, nil
}

// Revert restores lesson id to version to (the newest kept version when
// to < 0), undoing a retraction too, and keeps the version it replaces
// (op revert).
func (s *Store) Revert(ctx context.Context, id string, to int64) (*Lesson, error) {
	var out *Lesson
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		var v Version
		b, err := history.Get(tx, history.Lesson, id, to)
		if errors.Is(err, kv.ErrNotFound) {
			return fmt.Errorf("%w: %w", ErrNoVersion, err)
		}
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("lesson %s: %w version: %w", id, errDamaged, err)
		}
		if e, err := history.Decode(history.Lesson, id, b); err == nil && history.IsAbsent(e.Record) {
			return s.restore(tx, id, nil, OpRevert) // the version before an import created it
		}
		return s.restore(tx, id, &v.Lesson, OpRevert)
	})
	if err != nil {
		return nil, fmt.Errorf("lesson: revert %s: %w", id, err)
	}
	return out, s.db.View(ctx, func(r kv.Reader) error {
		var err error
		if out, err = load(r, id); errors.Is(err, ErrNotFound) {
			out, err = nil, nil // reverted to before it existed
		}
		return err
	})
}

// restore makes l the stored state of lesson id in tx (nil: no lesson),
// keeping the state it replaces as a version and ending a retraction.
func (s *Store) restore(tx kv.Txn, id string, l *Lesson, op string) error {
	cur, err := load(tx, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if cur == nil {
		if b, err := tx.Get(keyspace.RetractedLesson(id)); err == nil {
			var rt Retraction
			if json.Unmarshal(b, &rt) == nil {
				cur = &rt.Lesson // retracted: versioned as it was
			}
		}
	} else if l == nil {
		if err := s.keep(tx, op, cur); err != nil {
			return err
		}
		return remove(tx, cur)
	}
	if err := tx.Delete(keyspace.RetractedLesson(id)); err != nil {
		return err
	}
	if l == nil {
		return nil
	}
	if err := s.keep(tx, op, cur); err != nil {
		return err
	}
	stored, _ := load(tx, id)
	n := *l
	return put(tx, stored, &n)
}

// RunReverted is what RevertRun did: the lessons restored to their state
// before the run's first change, and the lessons the run created, removed.
type RunReverted struct {
	Run      string   `json:"run"`
	Restored []string `json:"restored"`
	Removed  []string `json:"removed"`
}

// RevertRun undoes every lesson change the run made, as its history says:
// each lesson the run changed is restored to its version before the run's
// first change (later changes by others are undone too, and kept as
// versions), and each lesson the run created is removed. It reads every
// kept version and every lesson: an operator's command, not a hot path.
func (s *Store) RevertRun(ctx context.Context, run string) (*RunReverted, error) {
	run = strings.TrimSpace(run)
	if run == "" {
		return nil, engine.Invalid("revert", "the run id is empty")
	}
	first := map[string]*Version{} // id → the run's earliest version
	var created []string
	err := s.db.View(ctx, func(r kv.Reader) error {
		err := r.Scan(keyspace.LessonHistoryPrefix(), kv.ScanOptions{}, func(k, b []byte) error {
			if strings.Count(string(k), "/") != 2 {
				return nil // a lesson's next-version counter
			}
			var v Version
			if err := json.Unmarshal(b, &v); err != nil {
				return fmt.Errorf("%w version %s: %w", errDamaged, k, err)
			}
			if v.By.Run == run && first[v.Lesson.ID] == nil {
				first[v.Lesson.ID] = &v
			}
			return nil
		})
		if err != nil {
			return err
		}
		return r.Scan(keyspace.LessonIDPrefix(), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			id := keyspace.LastPart(k)
			if first[id] != nil {
				return nil
			}
			l, err := load(r, id)
			if err != nil {
				return err
			}
			if l.Provenance.Run == run {
				created = append(created, id)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("lesson: revert run %s: %w", run, err)
	}
	out := &RunReverted{Run: run, Restored: []string{}, Removed: []string{}}
	for id, v := range first {
		if v.Lesson.Provenance.Run == run {
			created = append(created, id) // it was the run's from the start
			continue
		}
		if err := s.db.Update(ctx, func(tx kv.Txn) error { return s.restore(tx, id, &v.Lesson, OpRevert) }); err != nil {
			return out, fmt.Errorf("lesson: revert run %s: %s: %w", run, id, err)
		}
		out.Restored = append(out.Restored, id)
	}
	for _, id := range created {
		if err := s.db.Update(ctx, func(tx kv.Txn) error { return s.restore(tx, id, nil, OpRevert) }); err != nil {
			return out, fmt.Errorf("lesson: revert run %s: %s: %w", run, id, err)
		}
		out.Removed = append(out.Removed, id)
	}
	slices.Sort(out.Restored)
	slices.Sort(out.Removed)
	return out, nil
}

// RevertImport undoes every lesson change the import of the file with
// digest sha made, as the history says: each lesson it replaced goes back
// to its version before the import, each it created is removed (it keeps
// an absent version). It reads every kept lesson version: an operator's
// command, not a hot path.
func (s *Store) RevertImport(ctx context.Context, sha string) (*history.Reverted, error) {
	return history.RevertImport(ctx, s.db, history.Lesson, sha, func(ctx context.Context, id string, rec []byte) error {
		var l *Lesson
		if !history.IsAbsent(rec) {
			l = new(Lesson)
			if err := decodeInto(rec, id, l); err != nil {
				return err
			}
		}
		return s.db.Update(ctx, func(tx kv.Txn) error { return s.restore(tx, id, l, OpRevert) })
	})
}

// Stored returns lesson id as stored (decoded and encoded again, as its
// versions are kept), or an error wrapping ErrNotFound: the record in
// force that its history leads to.
func Stored(r kv.Reader, id string) ([]byte, error) {
	l, err := load(r, id)
	if err != nil {
		return nil, err
	}
	return json.Marshal(l)
}
