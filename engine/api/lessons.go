package api

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/lesson"
)

// RecallErrorRequest is POST /v1/recall/error's body: Trigger A.
type RecallErrorRequest struct {
	Command string `json:"command"`
	Error   string `json:"error"`
	Domain  string `json:"domain,omitempty"`
}

// LessonFilter selects lessons for GET /v1/lessons: a page of Limit
// lessons (0: page.DefaultLimit; at most page.MaxLimit) after Cursor.
type LessonFilter struct {
	Domain   string
	Category lesson.Category
	Tier     int
	Trust    lesson.Trust // trusted or candidate; "" for both
	Limit    int
	Cursor   string
}

// LessonPage is one page of GET /v1/lessons: Next is the cursor of the
// next page, "" after the last.
type LessonPage struct {
	Lessons []lesson.Lesson `json:"lessons"`
	Next    string          `json:"next,omitempty"`
}

// RecordedLesson is POST /v1/lessons's answer: the stored lesson, and
// whether it is new (else an existing lesson with the same failed command
// and error pattern got one more use).
type RecordedLesson struct {
	Lesson  lesson.Lesson `json:"lesson"`
	Created bool          `json:"created"`
}

// UseRequest is POST /v1/lessons/{id}/use's body.
type UseRequest struct {
	// Domain is the host the lesson was used on.
	Domain string `json:"domain"`
	// Helped says the action after it was shown succeeded (attribution)
	// rather than the pattern recurring.
	Helped bool `json:"helped,omitempty"`
}

// QuarantinedLessons is GET /v1/quarantine/lessons's answer: every lesson
// held out of the prompts, each with its reason (quarantine).
type QuarantinedLessons struct {
	Lessons []lesson.Lesson `json:"lessons"`
}

// Approved is POST /v1/quarantine/lessons/{id}/approve's answer: the
// lesson, now trusted, and its trust before (quarantined, candidate, or
// trusted when the approval changed nothing).
type Approved struct {
	lesson.Lesson
	Was lesson.Trust `json:"was"`
}

// Pruned is POST /v1/prune's answer.
type Pruned struct {
	Pruned    int `json:"pruned"`
	Remaining int `json:"remaining"`
}

func init() {
	routeSets = append(routeSets, lessonRoutes)
}

func lessonRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/recall/tier1", Summary: "Tier 1: the lessons section of every system prompt",
			Response: []lesson.Lesson{},
			handle:   func(c *call) (any, error) { return nonNil(c.m.Lessons.Tier1(c.ctx)) }},
		{Method: http.MethodPost, Path: "/v1/recall/error", Summary: "Trigger A: the tips for a failed command's error",
			Body: RecallErrorRequest{}, Required: []string{"command", "error"}, Response: []lesson.Lesson{},
			handle: func(c *call) (any, error) {
				var in RecallErrorRequest
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				if strings.TrimSpace(in.Command) == "" {
					return nil, engine.Invalid("recall", "the command is empty")
				}
				return nonNil(c.m.Lessons.RecallError(c.ctx, in.Command, in.Error, in.Domain))
			}},
		{Method: http.MethodGet, Path: "/v1/recall/domain", Summary: "Trigger B: the tips for entering a domain",
			Query:    []Param{{Name: "host", Type: "string", Required: true, Description: "the host entered"}},
			Response: []lesson.Lesson{},
			handle: func(c *call) (any, error) {
				host, err := c.required("host")
				if err != nil {
					return nil, err
				}
				return nonNil(c.m.Lessons.RecallDomain(c.ctx, host))
			}},
		{Method: http.MethodGet, Path: "/v1/lessons", Summary: "List lessons: Tier 1 first, then by use",
			Query: []Param{
				{Name: "domain", Type: "string", Description: "lessons bound to this domain or a parent of it"},
				{Name: "tier", Type: "integer", Description: "1 or 2"},
				{Name: "category", Type: "string", Description: "tool_fallback, best_practice, error_recovery or site_specific"},
				{Name: "trust", Type: "string", Description: "trusted or candidate (quarantined lessons: GET /v1/quarantine/lessons)"},
				staleParam("site-bound lessons"), limitParam, cursorParam,
			},
			Response: LessonPage{},
			handle:   listLessons},
		{Method: http.MethodPost, Path: "/v1/stale/lessons", Summary: "Record what a run found about its site-bound lessons' pages: learned on (re-validates) or failed on after a change (marks stale); one request per run",
			Body: lesson.PageMarks{}, Response: lesson.PageMarked{},
			handle: func(c *call) (any, error) {
				var in lesson.PageMarks
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				return c.m.Lessons.MarkPages(c.ctx, in)
			}},
		{Method: http.MethodPost, Path: "/v1/lessons", Summary: "Record a lesson (or count one more use of the same pattern)",
			Body: lesson.Lesson{}, Required: []string{"lesson", "category"}, Response: RecordedLesson{},
			handle: func(c *call) (any, error) {
				var l lesson.Lesson
				if err := c.decode(&l); err != nil {
					return nil, err
				}
				if err := refuseClaims(&l); err != nil {
					return nil, err
				}
				got, created, err := c.m.Lessons.Record(c.ctx, l, "")
				if err != nil {
					return nil, err
				}
				return RecordedLesson{Lesson: *got, Created: created}, nil
			}},
		{Method: http.MethodGet, Path: "/v1/lessons/{id}", Summary: "One lesson", Response: lesson.Lesson{},
			handle: func(c *call) (any, error) { return c.m.Lessons.Get(c.ctx, c.r.PathValue("id")) }},
		{Method: http.MethodDelete, Path: "/v1/lessons/{id}", Summary: "Remove a lesson", Response: Removed{},
			handle: func(c *call) (any, error) {
				id := c.r.PathValue("id")
				return Removed{ID: id}, c.m.Lessons.Remove(c.ctx, id)
			}},
		{Method: http.MethodGet, Path: "/v1/quarantine/lessons", Summary: "The lessons held out of every prompt (their text failed the screen), each with its reason",
			Response: QuarantinedLessons{},
			handle: func(c *call) (any, error) {
				ls, err := c.m.Lessons.Quarantined(c.ctx)
				return QuarantinedLessons{Lessons: ls}, err
			}},
		{Method: http.MethodPost, Path: "/v1/quarantine/lessons/{id}/approve", Summary: "An operator trusts a lesson: a quarantined one is released (it joins the lessons, trusted), a candidate becomes trusted, a trusted one stays as it is",
			Response: Approved{},
			handle: func(c *call) (any, error) {
				l, was, err := c.m.Lessons.Approve(c.ctx, c.r.PathValue("id"))
				if err != nil {
					return nil, err
				}
				return Approved{Lesson: *l, Was: was}, nil
			}},
		{Method: http.MethodPost, Path: "/v1/quarantine/lessons/{id}/reject", Summary: "Delete a quarantined lesson",
			Response: Removed{},
			handle: func(c *call) (any, error) {
				id := c.r.PathValue("id")
				return Removed{ID: id}, c.m.Lessons.Reject(c.ctx, id)
			}},
		{Method: http.MethodPost, Path: "/v1/lessons/{id}/use", Summary: "Count one use of a lesson on a domain (promotion applies)",
			Body: UseRequest{}, Response: lesson.Lesson{},
			handle: func(c *call) (any, error) {
				var in UseRequest
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				if in.Helped {
					return c.m.Lessons.Helped(c.ctx, c.r.PathValue("id"), in.Domain)
				}
				return c.m.Lessons.Use(c.ctx, c.r.PathValue("id"), in.Domain)
			}},
		{Method: http.MethodPost, Path: "/v1/attribution/lessons", Summary: "Add a run's shown/used/helped counts to its lessons (one request per run; a version kept for each)",
			Body: LessonAttribution{}, Response: AttributionResult{},
			handle: func(c *call) (any, error) {
				var in LessonAttribution
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				n, err := c.m.Lessons.Attribute(c.ctx, in.Lessons)
				return AttributionResult{Updated: n}, err
			}},
		{Method: http.MethodPost, Path: "/v1/learn", Summary: "Learn lessons from a run's action log (JSON lines): browser-side failures a different action recovered from; a log is learned once; stale lessons are pruned first",
			Query:    []Param{{Name: "domain", Type: "string", Description: "the host the run was on, for steps that carry no url"}},
			BodyType: "application/jsonl", Limit: MaxUpload, Response: []lesson.Learned{},
			handle: func(c *call) (any, error) {
				b, err := c.raw()
				if err != nil {
					return nil, err
				}
				actions, err := lesson.ParseActionLog(bytes.NewReader(b), "action log")
				if err != nil {
					return nil, err
				}
				c.red.Value(&actions) // lessons quote commands and errors
				if _, _, err := c.m.Lessons.Prune(c.ctx, 0); err != nil {
					return nil, err
				}
				return nonNil(c.m.Lessons.Learn(c.ctx, actions, c.query("domain")))
			}},
		{Method: http.MethodPost, Path: "/v1/prune", Summary: "Remove learned lessons unused for N days and used fewer than 5 times",
			Query:    []Param{{Name: "max_age_days", Type: "integer", Description: "default " + strconv.Itoa(lesson.DefaultPruneAgeDays)}},
			Response: Pruned{},
			handle: func(c *call) (any, error) {
				days, err := c.queryInt("max_age_days", lesson.DefaultPruneAgeDays, 1, 1<<20)
				if err != nil {
					return nil, err
				}
				p, r, err := c.m.Lessons.Prune(c.ctx, days)
				return Pruned{Pruned: p, Remaining: r}, err
			}},
	}
}

// refuseClaims refuses a written lesson that sets what only the store's
// own accounting may: its counters (use_count, triggered_domains, shown,
// used, helped) and its trust. A lesson starts with the store's counters
// and a trust given by who writes it; an operator brings counted lessons
// with engine import --trust.
func refuseClaims(l *lesson.Lesson) error {
	set := map[string]int{"use_count": l.UseCount, "triggered_domains": len(l.TriggeredDomains),
		"shown": l.Shown, "used": l.Used, "helped": l.Helped}
	if l.Trust != "" {
		set["trust"] = 1
	}
	return refuseCounts("lesson", set)
}

// refuseCounts is the error naming, in order, the fields of what that a
// request set (non-zero) although only the engine's accounting may: nil
// when none is set.
func refuseCounts(what string, fields map[string]int) error {
	var set []string
	for _, f := range []string{"use_count", "triggered_domains", "runs", "shown", "used", "helped", "trust"} {
		if fields[f] != 0 {
			set = append(set, f)
		}
	}
	if len(set) == 0 {
		return nil
	}
	return engine.Invalid(what, strings.Join(set, ", ")+" cannot be written: counters and trust come only from the engine's own accounting (an operator brings counted records by an import with trust, POST /v1/import?trust=true)")
}

func listLessons(c *call) (any, error) {
	var f lesson.Filter
	f.Domain = c.query("domain")
	stale, err := c.staleOnly()
	if err != nil {
		return nil, err
	}
	if stale {
		if c.query("category") != "" || c.query("trust") != "" || c.query("tier") != "" {
			return nil, engine.Invalid("request", "a stale list takes only domain")
		}
		ls, err := c.m.Lessons.StaleList(c.ctx, f.Domain)
		return LessonPage{Lessons: nonNilSlice(ls)}, err
	}
	if v := c.query("category"); v != "" {
		cat, err := lesson.ParseCategory(v)
		if err != nil {
			return nil, err
		}
		f.Category = cat
	}
	if v := c.query("trust"); v != "" {
		t, err := lesson.ParseTrust(v)
		if err != nil {
			return nil, err
		}
		f.Trust = t
	}
	if f.Tier, err = c.queryInt("tier", 0, 1, 2); err != nil {
		return nil, err
	}
	req, err := c.page()
	if err != nil {
		return nil, err
	}
	p, err := c.m.Lessons.Page(c.ctx, f, req)
	if err != nil {
		return nil, err
	}
	return LessonPage{Lessons: nonNilSlice(p.Items), Next: p.Next}, nil
}

// Removed is the answer of a DELETE.
type Removed struct {
	ID string `json:"removed"`
}

// nonNil makes a nil list an empty one, so JSON shows [] and not null.
func nonNil[T any](s []T, err error) ([]T, error) {
	return nonNilSlice(s), err
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Tier1 is GET /v1/recall/tier1.
func (c *Client) Tier1(ctx context.Context) ([]lesson.Lesson, error) {
	var out []lesson.Lesson
	return out, c.do(ctx, request{method: http.MethodGet, path: "/v1/recall/tier1"}, &out)
}

// MarkLessonPages is POST /v1/stale/lessons.
func (c *Client) MarkLessonPages(ctx context.Context, in lesson.PageMarks) (*lesson.PageMarked, error) {
	var out lesson.PageMarked
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/stale/lessons", json: in}, &out)
}

// StaleLessons is GET /v1/lessons?stale=true: the stale site-bound
// lessons that apply on host ("" = every site).
func (c *Client) StaleLessons(ctx context.Context, host string) (*LessonPage, error) {
	q := url.Values{"stale": {"true"}}
	set(q, "domain", host)
	var out LessonPage
	return &out, c.do(ctx, request{method: http.MethodGet, path: "/v1/lessons", query: q}, &out)
}

// RecallError is POST /v1/recall/error.
func (c *Client) RecallError(ctx context.Context, command, errText, host string) ([]lesson.Lesson, error) {
	var out []lesson.Lesson
	return out, c.do(ctx, request{method: http.MethodPost, path: "/v1/recall/error",
		json: RecallErrorRequest{Command: command, Error: errText, Domain: host}}, &out)
}

// RecallDomain is GET /v1/recall/domain.
func (c *Client) RecallDomain(ctx context.Context, host string) ([]lesson.Lesson, error) {
	var out []lesson.Lesson
	return out, c.do(ctx, request{method: http.MethodGet, path: "/v1/recall/domain", query: url.Values{"host": {host}}}, &out)
}

// Lessons is GET /v1/lessons.
func (c *Client) Lessons(ctx context.Context, f LessonFilter) (*LessonPage, error) {
	q := url.Values{}
	set(q, "domain", f.Domain)
	set(q, "category", string(f.Category))
	setInt(q, "tier", f.Tier)
	set(q, "trust", string(f.Trust))
	setInt(q, "limit", f.Limit)
	set(q, "cursor", f.Cursor)
	var out LessonPage
	return &out, c.do(ctx, request{method: http.MethodGet, path: "/v1/lessons", query: q}, &out)
}

// RecordLesson is POST /v1/lessons.
func (c *Client) RecordLesson(ctx context.Context, l lesson.Lesson) (*RecordedLesson, error) {
	var out RecordedLesson
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/lessons", json: l}, &out)
}

// Lesson is GET /v1/lessons/{id}.
func (c *Client) Lesson(ctx context.Context, id string) (*lesson.Lesson, error) {
	var out lesson.Lesson
	return &out, c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/lessons/%s", id)}, &out)
}

// RemoveLesson is DELETE /v1/lessons/{id}.
func (c *Client) RemoveLesson(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: pathf("/v1/lessons/%s", id)}, &Removed{})
}

// QuarantinedLessons is GET /v1/quarantine/lessons.
func (c *Client) QuarantinedLessons(ctx context.Context) ([]lesson.Lesson, error) {
	var out QuarantinedLessons
	return out.Lessons, c.do(ctx, request{method: http.MethodGet, path: "/v1/quarantine/lessons"}, &out)
}

// ApproveLesson is POST /v1/quarantine/lessons/{id}/approve.
func (c *Client) ApproveLesson(ctx context.Context, id string) (*Approved, error) {
	var out Approved
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/quarantine/lessons/%s/approve", id)}, &out)
}

// RejectLesson is POST /v1/quarantine/lessons/{id}/reject.
func (c *Client) RejectLesson(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/quarantine/lessons/%s/reject", id)}, &Removed{})
}

// LessonAttribution is POST /v1/attribution/lessons's body: what a run's
// steps did with the lessons they were shown.
type LessonAttribution struct {
	Lessons []lesson.Attribution `json:"lessons"`
}

// AttributeLessons is POST /v1/attribution/lessons.
func (c *Client) AttributeLessons(ctx context.Context, in LessonAttribution) (*AttributionResult, error) {
	var out AttributionResult
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/attribution/lessons", json: in}, &out)
}

// UseLesson is POST /v1/lessons/{id}/use.
func (c *Client) UseLesson(ctx context.Context, id string, in UseRequest) (*lesson.Lesson, error) {
	var out lesson.Lesson
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/lessons/%s/use", id), json: in}, &out)
}

// Learn is POST /v1/learn with an action log (JSON lines).
func (c *Client) Learn(ctx context.Context, host string, log []byte) ([]lesson.Learned, error) {
	q := url.Values{}
	set(q, "domain", host)
	var out []lesson.Learned
	return out, c.do(ctx, request{method: http.MethodPost, path: "/v1/learn", query: q, raw: log, rawType: "application/jsonl"}, &out)
}

// Prune is POST /v1/prune.
func (c *Client) Prune(ctx context.Context, maxAgeDays int) (*Pruned, error) {
	q := url.Values{}
	setInt(q, "max_age_days", maxAgeDays)
	var out Pruned
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/prune", query: q}, &out)
}

func set(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

func setInt(q url.Values, k string, v int) {
	if v != 0 {
		q.Set(k, strconv.Itoa(v))
	}
}

// EachLesson calls fn with every lesson f selects, page after page, up to
// max lessons (0: all). It returns the cursor after the last lesson given
// when more remain.
func (c *Client) EachLesson(ctx context.Context, f LessonFilter, max int, fn func(lesson.Lesson) error) (string, error) {
	return eachPage(max, f.Cursor, func(limit int, cursor string) ([]lesson.Lesson, string, error) {
		f.Limit, f.Cursor = limit, cursor
		p, err := c.Lessons(ctx, f)
		if err != nil {
			return nil, "", err
		}
		return p.Lessons, p.Next, nil
	}, fn)
}
