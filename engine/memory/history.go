package memory

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/selector"
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

// RecordHistory is the kept versions of a lesson, fact, selector or
// trajectory, newest first.
type RecordHistory struct {
	ID       string          `json:"id"`
	Kind     string          `json:"kind"`
	Versions []history.Entry `json:"versions"`
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

// entries converts one kind's versions into history entries.
func entries[V any](kind, id string, vs []V, err error) ([]history.Entry, error) {
	if err != nil {
		return nil, err
	}
	out := make([]history.Entry, 0, len(vs))
	for _, v := range vs {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		e, err := history.Decode(kind, id, b)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// History returns the kept versions of any record.
func (m *Memory) History(ctx context.Context, id string) (RecordHistory, error) {
	h := RecordHistory{ID: id, Kind: KindOf(id)}
	var err error
	switch h.Kind {
	case history.Trajectory:
		vs, e := m.Trajectories.History(ctx, id)
		h.Versions, err = entries(h.Kind, id, vs, e)
	case history.Fact:
		vs, e := m.Facts.History(ctx, id)
		h.Versions, err = entries(h.Kind, id, vs, e)
	case history.Selector:
		vs, e := m.Selectors.History(ctx, id)
		h.Versions, err = entries(h.Kind, id, vs, e)
	default:
		vs, e := m.Lessons.History(ctx, id)
		h.Versions, err = entries(h.Kind, id, vs, e)
	}
	if h.Versions == nil {
		h.Versions = []history.Entry{}
	}
	return h, err
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
