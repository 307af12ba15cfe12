package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/archive"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/selector"
)

// Version is one kept version of any kind of record: the change that
// replaced it (op, at, by) and the record as it was (null: an import
// created the record, which did not exist before).
type Version = history.Entry

// RecordHistory is GET /v1/history/{id}'s answer: the kept versions of a
// lesson, fact, selector or trajectory, newest first.
type RecordHistory struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind"`
	Versions []Version `json:"versions"`
}

// RecordReverted is POST /v1/revert/{id}'s answer: the record as restored
// (null when the version restored is the absence before an import).
type RecordReverted struct {
	ID     string          `json:"id"`
	Kind   string          `json:"kind"`
	Record json.RawMessage `json:"record"`
}

// FactEditRequest is POST /v1/facts/{id}/edit's body.
type FactEditRequest struct {
	// Value is the new value.
	Value string `json:"value"`
}

// ImportReverted is POST /v1/imports/{sha256}/revert's answer.
type ImportReverted = archive.ImportReverted

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

// entries converts one kind's versions into Versions.
func entries[V any](kind, id string, vs []V, err error) ([]Version, error) {
	if err != nil {
		return nil, err
	}
	out := make([]Version, 0, len(vs))
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

// recordHistory returns the kept versions of any record.
func recordHistory(ctx context.Context, m *memory.Memory, id string) (RecordHistory, error) {
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
	h.Versions = nonNilSlice(h.Versions)
	return h, err
}

// revertRecord restores any record's version to (the newest when to < 0).
func revertRecord(ctx context.Context, m *memory.Memory, id string, to int64) (RecordReverted, error) {
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

// RunReverted is POST /v1/revert?run='s answer: what undoing one run did
// to each kind.
type RunReverted struct {
	Run string `json:"run"`
	history.Kinds
}

// revertRun undoes everything run changed, kind by kind, as the kept
// versions (by.run) and the records' provenance say; it stops at the first
// kind that fails, returning what it did so far.
func revertRun(ctx context.Context, m *memory.Memory, run string) (*RunReverted, error) {
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

// Retraction is a record of any kind withdrawn by a person: POST
// /v1/retract/{id}'s answer and an entry of GET /v1/retracted.
type Retraction = history.Retraction

// Retracted is GET /v1/retracted's answer: the retracted records of every
// kind, each with its reason.
type Retracted struct {
	Lessons      []lesson.Retraction `json:"lessons"`
	Facts        []Retraction        `json:"facts"`
	Selectors    []Retraction        `json:"selectors"`
	Trajectories []Retraction        `json:"trajectories"`
}

// retractRecord withdraws any record (the id says its kind) with reason.
func retractRecord(ctx context.Context, m *memory.Memory, id, reason string) (*Retraction, error) {
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
	return &Retraction{Kind: history.Lesson, ID: id, Reason: rt.Reason, At: rt.At, By: rt.By, Record: rec}, err
}

// retracted lists the retracted records of every kind.
func retracted(ctx context.Context, m *memory.Memory) (out Retracted, err error) {
	if out.Lessons, err = m.Lessons.Retracted(ctx); err != nil {
		return out, err
	}
	out.Lessons = nonNilSlice(out.Lessons)
	if out.Facts, err = m.Facts.Retracted(ctx); err != nil {
		return out, err
	}
	if out.Selectors, err = m.Selectors.Retracted(ctx); err != nil {
		return out, err
	}
	out.Trajectories, err = m.Trajectories.Retracted(ctx)
	return out, err
}

// versionQuery reads ?to=VERSION (-1 when absent).
func versionQuery(c *call) (int64, error) {
	v := c.query("to")
	if v == "" {
		return -1, nil
	}
	n, err := strconv.ParseUint(v, 10, 63)
	if err != nil {
		return 0, engine.Invalidf("revert", "to=%q is not a version number", v)
	}
	return int64(n), nil
}

func init() {
	routeSets = append(routeSets, historyRoutes)
}

func historyRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/history/{id}", Summary: "The kept versions of any record (lesson, fact_…, sel_…, traj_…), newest first: each as it was before a change, with the change and who made it",
			Response: RecordHistory{},
			handle: func(c *call) (any, error) {
				return recordHistory(c.ctx, c.m, c.r.PathValue("id"))
			}},
		{Method: http.MethodPost, Path: "/v1/revert/{id}", Summary: "Restore any record's previous version (or ?to=VERSION); the state it replaces is kept as a version",
			Query:    []Param{{Name: "to", Type: "integer", Description: "the version to restore (default: the newest kept)"}},
			Response: RecordReverted{},
			handle: func(c *call) (any, error) {
				to, err := versionQuery(c)
				if err != nil {
					return nil, err
				}
				return revertRecord(c.ctx, c.m, c.r.PathValue("id"), to)
			}},
		{Method: http.MethodPost, Path: "/v1/retract/{id}", Summary: "Withdraw any record (lesson, fact_…, sel_…, traj_…) from every read path, held with the reason until reverted; its version is kept",
			Body: RetractRequest{}, Response: Retraction{},
			handle: func(c *call) (any, error) {
				var in RetractRequest
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				return retractRecord(c.ctx, c.m, c.r.PathValue("id"), in.Reason)
			}},
		{Method: http.MethodGet, Path: "/v1/retracted", Summary: "The retracted records of every kind, each with its reason",
			Response: Retracted{},
			handle: func(c *call) (any, error) {
				return retracted(c.ctx, c.m)
			}},
		{Method: http.MethodPost, Path: "/v1/facts/{id}/edit", Summary: "Change a fact's value (screened); it takes the new value's id, and both ids keep the previous version",
			Body: FactEditRequest{}, Response: fact.Fact{},
			handle: func(c *call) (any, error) {
				var in FactEditRequest
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				return c.m.Facts.Edit(c.ctx, c.r.PathValue("id"), in.Value)
			}},
		{Method: http.MethodPost, Path: "/v1/imports/{sha256}/revert", Summary: "Undo everything one import changed: restore each lesson, fact, selector and trajectory it replaced, remove those it created",
			Response: ImportReverted{},
			handle: func(c *call) (any, error) {
				return archive.RevertImport(c.ctx, c.m, c.r.PathValue("sha256"))
			}},
	}
}

// History is GET /v1/history/{id}: any record's kept versions.
func (c *Client) History(ctx context.Context, id string) (*RecordHistory, error) {
	var out RecordHistory
	return &out, c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/history/%s", id)}, &out)
}

// Revert is POST /v1/revert/{id} (to < 0: the newest kept version).
func (c *Client) Revert(ctx context.Context, id string, to int64) (*RecordReverted, error) {
	q := url.Values{}
	if to >= 0 {
		q.Set("to", strconv.FormatInt(to, 10))
	}
	var out RecordReverted
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/revert/%s", id), query: q}, &out)
}

// Retract is POST /v1/retract/{id}: withdraw any record with reason.
func (c *Client) Retract(ctx context.Context, id, reason string) (*Retraction, error) {
	var out Retraction
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/retract/%s", id), json: RetractRequest{Reason: reason}}, &out)
}

// Retracted is GET /v1/retracted: the retracted records of every kind.
func (c *Client) Retracted(ctx context.Context) (*Retracted, error) {
	var out Retracted
	return &out, c.do(ctx, request{method: http.MethodGet, path: "/v1/retracted"}, &out)
}

// EditFact is POST /v1/facts/{id}/edit.
func (c *Client) EditFact(ctx context.Context, id, value string) (*fact.Fact, error) {
	var out fact.Fact
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/facts/%s/edit", id), json: FactEditRequest{Value: value}}, &out)
}

// RevertImport is POST /v1/imports/{sha256}/revert.
func (c *Client) RevertImport(ctx context.Context, sha string) (*ImportReverted, error) {
	var out ImportReverted
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/imports/%s/revert", sha)}, &out)
}

// The kinds of record KindOf names.
const (
	KindLesson     = history.Lesson
	KindFact       = history.Fact
	KindSelector   = history.Selector
	KindTrajectory = history.Trajectory
)

// Reverted is what undoing one import did to one kind.
type Reverted = history.Reverted

// RevertedKinds is what undoing an import or a run did to each kind.
type RevertedKinds = history.Kinds

// Absent reports whether a version's (or a revert's) record is none: the
// record did not exist (an import created it) or was removed.
func Absent(rec json.RawMessage) bool { return history.IsAbsent(rec) }
