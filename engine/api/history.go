package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/archive"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/history"
)

// Version is one kept version of any kind of record: the change that
// replaced it (op, at, by), the record as it was (null: an import created
// the record, which did not exist before) and the change that made it
// (made).
type Version = history.Version

// RecordHistory is GET /v1/history/{id}'s answer: the record in force
// (current) and the kept versions of a lesson, fact, selector or
// trajectory, newest first.
type RecordHistory = memory.RecordHistory

// RecordReverted is POST /v1/revert/{id}'s answer: the record as restored
// (null when the version restored is the absence before an import).
type RecordReverted = memory.RecordReverted

// FactEditRequest is POST /v1/facts/{id}/edit's body.
type FactEditRequest struct {
	// Value is the new value.
	Value string `json:"value"`
}

// ImportReverted is POST /v1/imports/{sha256}/revert's answer.
type ImportReverted = archive.ImportReverted

// KindOf says which kind of record id names, by its shape: "traj_…" a
// trajectory, "fact_…" a fact, "sel_…" a selector, anything else a lesson
// (memory.KindOf).
func KindOf(id string) string { return memory.KindOf(id) }

// RunReverted is POST /v1/revert?run='s answer: what undoing one run did
// to each kind.
type RunReverted = memory.RunReverted

// Retraction is a record of any kind withdrawn by a person: POST
// /v1/retract/{id}'s answer and an entry of GET /v1/retracted.
type Retraction = history.Retraction

// Retracted is GET /v1/retracted's answer: the retracted records of every
// kind, each with its reason.
type Retracted = memory.Retracted

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
		{Method: http.MethodGet, Path: "/v1/history/{id}", Summary: "Any record's history (lesson, fact_…, sel_…, traj_…): the record in force and the change that made it (current), then the kept versions, newest first, each as it was before a change (op, at, by) with the change that made it (made)",
			Response: RecordHistory{},
			handle: func(c *call) (any, error) {
				return c.m.History(c.ctx, c.r.PathValue("id"))
			}},
		{Method: http.MethodPost, Path: "/v1/revert/{id}", Summary: "Restore any record's previous version (or ?to=VERSION); the state it replaces is kept as a version",
			Query:    []Param{{Name: "to", Type: "integer", Description: "the version to restore (default: the newest kept)"}},
			Response: RecordReverted{},
			handle: func(c *call) (any, error) {
				to, err := versionQuery(c)
				if err != nil {
					return nil, err
				}
				return c.m.Revert(c.ctx, c.r.PathValue("id"), to)
			}},
		{Method: http.MethodPost, Path: "/v1/retract/{id}", Summary: "Withdraw any record (lesson, fact_…, sel_…, traj_…) from every read path, held with the reason until reverted; its version is kept",
			Body: RetractRequest{}, Required: []string{"reason"}, Response: Retraction{},
			handle: func(c *call) (any, error) {
				var in RetractRequest
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				return c.m.Retract(c.ctx, c.r.PathValue("id"), in.Reason)
			}},
		{Method: http.MethodGet, Path: "/v1/retracted", Summary: "The retracted records of every kind, each with its reason",
			Response: Retracted{},
			handle: func(c *call) (any, error) {
				return c.m.Retracted(c.ctx)
			}},
		{Method: http.MethodPost, Path: "/v1/facts/{id}/edit", Summary: "Change a fact's value (screened); it takes the new value's id, and both ids keep the previous version",
			Body: FactEditRequest{}, Required: []string{"value"}, Response: fact.Fact{},
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
