package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/kv"
)

// The history of any record, whatever its kind: the id says which store
// keeps it (KindOf), and each method here hands the request to that store,
// so a caller (the API) need not know the kinds apart.

// KindOf says which kind of record id names, by its shape: "traj_…" a
// trajectory, "fact_…" a fact, "sel_…" a selector, anything else a lesson.
func KindOf(id string) string {
	switch {
	case strings.HasPrefix(id, "traj_"):
		return history.Trajectory
	case fact.IsID(id):
		return history.Fact
	case selector.IsID(id):
		return history.Selector
	}
	return history.Lesson
}

// RecordHistory is a lesson, fact, selector or trajectory's history: the
// record in force and the change that made it (Current), then its kept
// versions, newest first, each with the change that made it and the one
// that replaced it.
type RecordHistory struct {
	ID       string            `json:"id"`
	Kind     string            `json:"kind"`
	Current  history.Current   `json:"current"`
	Versions []history.Version `json:"versions"`
}

// RecordReverted is a record as a revert restored it (null when the
// version restored is the absence before an import).
type RecordReverted struct {
	ID     string          `json:"id"`
	Kind   string          `json:"kind"`
	Record json.RawMessage `json:"record"`
}

// RunReverted is what undoing one run did to each kind.
type RunReverted struct {
	Run string `json:"run"`
	history.Kinds
}

// Retracted is the retracted records of every kind, each with its reason.
type Retracted struct {
	Lessons      []lesson.Retraction  `json:"lessons"`
	Facts        []history.Retraction `json:"facts"`
	Selectors    []history.Retraction `json:"selectors"`
	Trajectories []history.Retraction `json:"trajectories"`
}

// storedOf reads the record in force of one kind as stored.
func storedOf(kind string) func(kv.Reader, string) ([]byte, error) {
	switch kind {
	case history.Trajectory:
		return trajectory.Stored
	case history.Fact:
		return fact.Stored
	case history.Selector:
		return selector.Stored
	}
	return lesson.Stored
}

// History returns any record's history: the record in force and its kept
// versions, read in one transaction, each labelled with the change that
// made it (history.Chain). A record neither stored nor with versions
// kept (nor a retracted lesson) is not found.
func (m *Memory) History(ctx context.Context, id string) (RecordHistory, error) {
	h := RecordHistory{ID: id, Kind: KindOf(id), Versions: []history.Version{}}
	var (
		es  []history.Entry
		cur []byte
	)
	err := m.db.View(ctx, func(r kv.Reader) error {
		var err error
		if es, err = history.Entries(r, h.Kind, id); err != nil {
			return err
		}
		cur, err = storedOf(h.Kind)(r, id)
		if errors.Is(err, engine.ErrNotFound) && len(es) > 0 {
			return nil // removed or retracted: its versions say how
		}
		if errors.Is(err, engine.ErrNotFound) && h.Kind == history.Lesson {
			if _, rerr := r.Get(keyspace.RetractedLesson(id)); rerr == nil {
				return nil
			}
		}
		return err
	})
	if err != nil {
		return h, fmt.Errorf("%s: history %s: %w", h.Kind, id, err)
	}
	h.Current, h.Versions = history.Chain(es, cur)
	return h, nil
}

// Revert restores any record's version to (the newest when to < 0).
func (m *Memory) Revert(ctx context.Context, id string, to int64) (RecordReverted, error) {
	r := RecordReverted{ID: id, Kind: KindOf(id)}
	var rec any
	var err error
	switch r.Kind {
	case history.Trajectory:
		rec, err = m.Trajectories.Revert(ctx, id, to)
	case history.Fact:
		rec, err = m.Facts.Revert(ctx, id, to)
	case history.Selector:
		rec, err = m.Selectors.Revert(ctx, id, to)
	default:
		rec, err = m.Lessons.Revert(ctx, id, to)
	}
	if err != nil {
		return r, err
	}
	r.Record, err = json.Marshal(rec)
	return r, err
}

// RevertRun undoes everything run changed, kind by kind, as the kept
// versions (by.run) and the records' provenance say; it stops at the first
// kind that fails, returning what it did so far.
func (m *Memory) RevertRun(ctx context.Context, run string) (*RunReverted, error) {
	run = strings.TrimSpace(run)
	if run == "" {
		return nil, engine.Invalid("revert", "the run id is empty")
	}
	out := &RunReverted{Run: run}
	l, err := m.Lessons.RevertRun(ctx, run)
	if l != nil {
		out.Lessons = &history.Reverted{Restored: l.Restored, Removed: l.Removed}
	}
	if err != nil {
		return out, err
	}
	if out.Facts, err = m.Facts.RevertRun(ctx, run); err != nil {
		return out, err
	}
	if out.Selectors, err = m.Selectors.RevertRun(ctx, run); err != nil {
		return out, err
	}
	if out.Trajectories, err = m.Trajectories.RevertRun(ctx, run); err != nil {
		return out, err
	}
	return out, nil
}

// Retract withdraws any record (the id says its kind) with reason.
func (m *Memory) Retract(ctx context.Context, id, reason string) (*history.Retraction, error) {
	switch KindOf(id) {
	case history.Trajectory:
		return m.Trajectories.Retract(ctx, id, reason)
	case history.Fact:
		return m.Facts.Retract(ctx, id, reason)
	case history.Selector:
		return m.Selectors.Retract(ctx, id, reason)
	}
	rt, err := m.Lessons.Retract(ctx, id, reason)
	if err != nil {
		return nil, err
	}
	rec, err := json.Marshal(rt.Lesson)
	return &history.Retraction{Kind: history.Lesson, ID: id, Reason: rt.Reason, At: rt.At, By: rt.By, Record: rec}, err
}

// Retracted lists the retracted records of every kind.
func (m *Memory) Retracted(ctx context.Context) (out Retracted, err error) {
	if out.Lessons, err = m.Lessons.Retracted(ctx); err != nil {
		return out, err
	}
	if out.Lessons == nil {
		out.Lessons = []lesson.Retraction{}
	}
	if out.Facts, err = m.Facts.Retracted(ctx); err != nil {
		return out, err
	}
	if out.Selectors, err = m.Selectors.Retracted(ctx); err != nil {
		return out, err
	}
	out.Trajectories, err = m.Trajectories.Retracted(ctx)
	return out, err
}
