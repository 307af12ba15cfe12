package api

import (
	"context"
	"math"
	"net/http"
	"net/url"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/session"
)

// RenderedSessions is GET /v1/sessions/rendered's answer: a site's
// session history as the agent's context gets it ("" when it is empty).
type RenderedSessions struct {
	Text string `json:"text"`
}

func init() { routeSets = append(routeSets, sessionRoutes) }

var sessionFilterParams = []Param{
	{Name: "status", Type: "string", Description: "completed (or succeeded) or failed"},
	{Name: "session", Type: "string", Description: "sessions with this id"},
	{Name: "limit", Type: "integer", Description: "at most this many (default: all)"},
}

func sessionRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/sessions", Summary: "List the session history, newest first",
			Query:    append([]Param{{Name: "domain", Type: "string", Description: "sessions on this host's site"}}, sessionFilterParams...),
			Response: []session.Session{},
			handle: func(c *call) (any, error) {
				f, err := sessionFilter(c)
				if err != nil {
					return nil, err
				}
				return nonNil(c.m.Sessions.List(c.ctx, f))
			}},
		{Method: http.MethodGet, Path: "/v1/sessions/rendered", Summary: "A site's session history as the agent's context gets it",
			Query:    append([]Param{{Name: "domain", Type: "string", Required: true, Description: "the host whose site's history is rendered"}}, sessionFilterParams...),
			Response: RenderedSessions{},
			handle: func(c *call) (any, error) {
				if _, err := c.required("domain"); err != nil {
					return nil, err
				}
				f, err := sessionFilter(c)
				if err != nil {
					return nil, err
				}
				ss, err := c.m.Sessions.List(c.ctx, f)
				if err != nil {
					return nil, err
				}
				return RenderedSessions{Text: session.Render(ss)}, nil
			}},
		{Method: http.MethodPost, Path: "/v1/sessions", Summary: "Record a finished run in its site's session history (the site keeps its newest 5)",
			Body: session.Session{}, Required: []string{"goal"}, Response: session.Session{},
			handle: func(c *call) (any, error) {
				var in session.Session
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				in.Provenance = engine.Provenance{} // who records is who the request's headers say
				return c.m.Sessions.Record(c.ctx, in)
			}},
	}
}

func sessionFilter(c *call) (session.Filter, error) {
	f := session.Filter{Domain: c.query("domain"), SessionID: c.query("session")}
	v := c.query("status")
	success, ok := session.ParseOutcome(v)
	if !ok {
		return f, engine.Invalidf("request", "status=%q: want completed or failed", v)
	}
	f.Success = success
	var err error
	f.Limit, err = c.queryInt("limit", 0, 0, math.MaxInt32)
	return f, err
}

func sessionQuery(f session.Filter) url.Values {
	q := url.Values{}
	set(q, "domain", f.Domain)
	set(q, "session", f.SessionID)
	setInt(q, "limit", f.Limit)
	switch {
	case f.Success == nil:
	case *f.Success:
		q.Set("status", "completed")
	default:
		q.Set("status", "failed")
	}
	return q
}

// Sessions is GET /v1/sessions.
func (c *Client) Sessions(ctx context.Context, f session.Filter) ([]session.Session, error) {
	var out []session.Session
	return out, c.do(ctx, request{method: http.MethodGet, path: "/v1/sessions", query: sessionQuery(f)}, &out)
}

// RenderSessions is GET /v1/sessions/rendered: the text ("" for no
// sessions).
func (c *Client) RenderSessions(ctx context.Context, f session.Filter) (string, error) {
	var out RenderedSessions
	return out.Text, c.do(ctx, request{method: http.MethodGet, path: "/v1/sessions/rendered", query: sessionQuery(f)}, &out)
}

// RecordSession is POST /v1/sessions.
func (c *Client) RecordSession(ctx context.Context, s session.Session) (*session.Session, error) {
	var out session.Session
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/sessions", json: s}, &out)
}
