package lesson

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/internal/check"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/trust/injection"
	"github.com/engine-dev/engine/kv"
)

// ErrNotQuarantined is a reject of an id no quarantined lesson has.
var ErrNotQuarantined = engine.NotFound("no such quarantined lesson")

// screenOf returns why l must be held out of every prompt, or "": its text
// is what a model is shown (engine/trust/injection).
func screenOf(l *Lesson) string {
	return injection.Text(l.Lesson, injection.Options{Domain: l.Domain})
}

// quarantine holds l (whose Quarantine is set) apart, in tx: it replaces a
// quarantined lesson of the same id, and leaves a shown lesson of that id
// as it is. It reports whether l was not held before.
func quarantine(tx kv.Txn, l *Lesson) (bool, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return false, fmt.Errorf("lesson %s: encode: %w", l.ID, err)
	}
	_, err = tx.Get(keyspace.QuarantinedLesson(l.ID))
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return false, err
	}
	return errors.Is(err, kv.ErrNotFound), tx.Set(keyspace.QuarantinedLesson(l.ID), b, 0)
}

func (s *Store) emitQuarantined(l *Lesson) {
	s.opts.Events.Emit(event.LessonQuarantined, map[string]any{"id": l.ID, "lesson": l.Lesson, "reason": l.Quarantine, "source": l.Source})
}

// Quarantined returns the lessons held out of every prompt, by id, each
// with its reason.
func (s *Store) Quarantined(ctx context.Context) ([]Lesson, error) {
	out := []Lesson{}
	err := s.db.View(ctx, func(r kv.Reader) error {
		out = out[:0]
		return r.Scan(keyspace.QuarantinedLessons(), kv.ScanOptions{}, func(k, v []byte) error {
			l, err := decode(v, keyspace.LastPart(k))
			if err != nil {
				return nil // a damaged held lesson is never shown anyway
			}
			out = append(out, *l)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("lesson: quarantined: %w", err)
	}
	return out, nil
}

// Approve is an operator's word that lesson id is advice to trust. A
// quarantined lesson is released (a person read it): it joins the lessons
// as it was held, trusted (or counts as a use of the same lesson if one was
// stored meanwhile, which is then trusted too). A candidate becomes
// trusted. A trusted lesson stays as it is. It returns the lesson and its
// trust before; an id that is neither held nor stored is ErrNotFound.
func (s *Store) Approve(ctx context.Context, id string) (*Lesson, Trust, error) {
	var (
		out      *Lesson
		was      Trust
		released bool
		ch       change
	)
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		out, was, released, ch = nil, "", false, change{}
		b, err := tx.Get(keyspace.QuarantinedLesson(id))
		if errors.Is(err, kv.ErrNotFound) {
			// Not held: a stored lesson, trusted by the operator.
			old, err := load(tx, id)
			if err != nil {
				return err
			}
			was, out = old.Trust, old
			if old.Trust == Trusted {
				return nil
			}
			n := *old
			n.Trust = Trusted
			ch.trusted = "approved"
			out = &n
			if err := s.keep(tx, OpApprove, old); err != nil {
				return err
			}
			return put(tx, old, &n)
		}
		if err != nil {
			return err
		}
		l, err := decode(b, id)
		if err != nil {
			return err
		}
		was, released = Quarantined, true
		l.Quarantine = ""
		l.Trust = Trusted
		if err := tx.Delete(keyspace.QuarantinedLesson(id)); err != nil {
			return err
		}
		old, err := load(tx, l.ID)
		switch {
		case errors.Is(err, ErrNotFound):
			ch = change{promoted: promote(l), trusted: "approved"}
			out = l
			return put(tx, nil, l)
		case err != nil:
			return err
		}
		n := *old
		ch = s.countUse(&n, "", false)
		if n.Trust != Trusted {
			n.Trust = Trusted
			ch.trusted = "approved"
		}
		out = &n
		if err := s.keep(tx, OpApprove, old); err != nil {
			return err
		}
		return put(tx, old, &n)
	})
	if err != nil {
		return nil, "", fmt.Errorf("lesson: approve %s: %w", id, err)
	}
	if released {
		s.opts.Events.Emit(event.LessonRecorded, map[string]any{
			"lesson": out.Lesson, "category": out.Category, "approved": true,
			"failed_command": nullable(out.FailedCommand), "error_pattern": nullable(out.ErrorPattern),
		})
	}
	s.emitChange(out, ch)
	return out, was, nil
}

// Reject deletes quarantined lesson id.
func (s *Store) Reject(ctx context.Context, id string) error {
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		_, err := tx.Get(keyspace.QuarantinedLesson(id))
		if errors.Is(err, kv.ErrNotFound) {
			return fmt.Errorf("lesson %s: %w", id, ErrNotQuarantined)
		}
		if err != nil {
			return err
		}
		return tx.Delete(keyspace.QuarantinedLesson(id))
	})
	if err != nil {
		return fmt.Errorf("lesson: reject %s: %w", id, err)
	}
	return nil
}

// checkReason bounds a quarantine reason given by an import.
func checkReason(l *Lesson) error {
	if p := check.Text("quarantine", l.Quarantine, check.MaxPattern, false); p != "" {
		return engine.Invalid("lesson", p)
	}
	return nil
}
