package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/lesson"
)

// LessonHistory is GET /v1/lessons/{id}/history's answer: the kept
// versions of a lesson, newest first.
type LessonHistory struct {
	ID       string           `json:"id"`
	Versions []lesson.Version `json:"versions"`
}

// EditRequest is POST /v1/lessons/{id}/edit's body.
type EditRequest struct {
	// Lesson is the new text.
	Lesson string `json:"lesson"`
}

// RetractRequest is POST /v1/lessons/{id}/retract's body.
type RetractRequest struct {
	// Reason is why the lesson is withdrawn, kept for audit.
	Reason string `json:"reason"`
}

// RetractedLessons is GET /v1/retracted/lessons's answer.
type RetractedLessons struct {
	Lessons []lesson.Retraction `json:"lessons"`
}

func init() {
	routeSets = append(routeSets, versionRoutes)
}

func versionRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/lessons/{id}/history", Summary: "The kept versions of a lesson, newest first: each as it was before a change, with the change and who made it",
			Response: LessonHistory{},
			handle: func(c *call) (any, error) {
				id := c.r.PathValue("id")
				vs, err := c.m.Lessons.History(c.ctx, id)
				return LessonHistory{ID: id, Versions: nonNilSlice(vs)}, err
			}},
		{Method: http.MethodPost, Path: "/v1/lessons/{id}/edit", Summary: "Change a lesson's text (screened), keeping its id; the previous version is kept",
			Body: EditRequest{}, Required: []string{"lesson"}, Response: lesson.Lesson{},
			handle: func(c *call) (any, error) {
				var in EditRequest
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				return c.m.Lessons.Edit(c.ctx, c.r.PathValue("id"), in.Lesson)
			}},
		{Method: http.MethodPost, Path: "/v1/lessons/{id}/retract", Summary: "Withdraw a lesson from every prompt and list, kept with the reason until reverted",
			Body: RetractRequest{}, Required: []string{"reason"}, Response: lesson.Retraction{},
			handle: func(c *call) (any, error) {
				var in RetractRequest
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				return c.m.Lessons.Retract(c.ctx, c.r.PathValue("id"), in.Reason)
			}},
		{Method: http.MethodGet, Path: "/v1/retracted/lessons", Summary: "The retracted lessons, each with its reason",
			Response: RetractedLessons{},
			handle: func(c *call) (any, error) {
				rs, err := c.m.Lessons.Retracted(c.ctx)
				return RetractedLessons{Lessons: nonNilSlice(rs)}, err
			}},
		{Method: http.MethodPost, Path: "/v1/revert", Summary: "Undo everything a run changed: restore each lesson, fact, selector and trajectory to before the run's first change, remove those it created",
			Query:    []Param{{Name: "run", Type: "string", Required: true, Description: "the run id"}},
			Response: RunReverted{},
			handle: func(c *call) (any, error) {
				run, err := c.required("run")
				if err != nil {
					return nil, err
				}
				return c.m.RevertRun(c.ctx, run)
			}},
		{Method: http.MethodPost, Path: "/v1/lessons/{id}/revert", Summary: "Restore a lesson's previous version (or ?to=VERSION), undoing a retraction too",
			Query:    []Param{{Name: "to", Type: "integer", Description: "the version to restore (default: the newest kept)"}},
			Response: lesson.Lesson{},
			handle: func(c *call) (any, error) {
				to := int64(-1)
				if v := c.query("to"); v != "" {
					n, err := strconv.ParseUint(v, 10, 63)
					if err != nil {
						return nil, engine.Invalidf("revert", "to=%q is not a version number", v)
					}
					to = int64(n)
				}
				return c.m.Lessons.Revert(c.ctx, c.r.PathValue("id"), to)
			}},
	}
}

// LessonHistory is GET /v1/lessons/{id}/history.
func (c *Client) LessonHistory(ctx context.Context, id string) (*LessonHistory, error) {
	var out LessonHistory
	return &out, c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/lessons/%s/history", id)}, &out)
}

// EditLesson is POST /v1/lessons/{id}/edit.
func (c *Client) EditLesson(ctx context.Context, id, text string) (*lesson.Lesson, error) {
	var out lesson.Lesson
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/lessons/%s/edit", id), json: EditRequest{Lesson: text}}, &out)
}

// RetractLesson is POST /v1/lessons/{id}/retract.
func (c *Client) RetractLesson(ctx context.Context, id, reason string) (*lesson.Retraction, error) {
	var out lesson.Retraction
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/lessons/%s/retract", id), json: RetractRequest{Reason: reason}}, &out)
}

// RetractedLessons is GET /v1/retracted/lessons.
func (c *Client) RetractedLessons(ctx context.Context) ([]lesson.Retraction, error) {
	var out RetractedLessons
	return out.Lessons, c.do(ctx, request{method: http.MethodGet, path: "/v1/retracted/lessons"}, &out)
}

// RevertRun is POST /v1/revert?run=RUN.
func (c *Client) RevertRun(ctx context.Context, run string) (*RunReverted, error) {
	var out RunReverted
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/revert", query: url.Values{"run": {run}}}, &out)
}

// RevertLesson is POST /v1/lessons/{id}/revert (to < 0: the newest kept
// version).
func (c *Client) RevertLesson(ctx context.Context, id string, to int64) (*lesson.Lesson, error) {
	q := url.Values{}
	if to >= 0 {
		q.Set("to", strconv.FormatInt(to, 10))
	}
	var out lesson.Lesson
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/lessons/%s/revert", id), query: q}, &out)
}
