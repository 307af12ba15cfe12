package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Route is one operation of the API: what the router serves, what the
// OpenAPI document says and what the client calls are all read from it.
type Route struct {
	Method string
	// Path is a net/http pattern path: /v1/lessons/{id}.
	Path    string
	Summary string
	// Query documents the query parameters.
	Query []Param
	// Body is a value of the JSON request body's type; nil for none.
	Body any
	// Required names the body's top-level fields a request must give (not
	// null): decode refuses a body without one, and the OpenAPI document
	// lists them, so the two cannot disagree.
	Required []string
	// BodyType is the content type of a body that is not JSON (an action
	// log is application/jsonl); "" for JSON.
	BodyType string
	// Limit is the body's byte limit (0: MaxBody).
	Limit int64
	// Response is a value of the JSON response's type.
	Response any
	// Stream says the response is application/jsonl, one Response value per
	// line, rather than one JSON value.
	Stream bool
	// Exclusive says the route changes memory in a way no other request
	// may see half done (an import's journaled commit, a forget's several
	// deletes): its handle does that work inside c.exclusive, which waits
	// for every other request of the handler to finish and holds off new
	// ones. Every other route's handle runs under the shared side of the
	// same lock; an exclusive route's runs under none (so it parses its
	// input without holding anyone up). No request holds the lock while
	// its body comes in: the body is read whole first.
	Exclusive bool

	handle func(*call) (any, error)
}

// Param is one documented query parameter.
type Param struct {
	Name        string
	Type        string // "string" or "integer"
	Required    bool
	Description string
}

// checkQuery parses a request's query (once: the handle reads it from
// the call) and refuses one the route does not take: a malformed query, or
// a parameter it does not document, named with the ones it takes. A
// misspelt filter (?domian=) would otherwise be ignored, and the answer
// would hold everything.
func (r Route) checkQuery(raw string) (url.Values, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	var unknown []string
	for k := range q {
		if !slices.ContainsFunc(r.Query, func(p Param) bool { return p.Name == k }) {
			unknown = append(unknown, fmt.Sprintf("%q", k))
		}
	}
	if len(unknown) == 0 {
		return q, nil
	}
	slices.Sort(unknown)
	takes := "no query parameters"
	if len(r.Query) > 0 {
		names := make([]string, len(r.Query))
		for i, p := range r.Query {
			names[i] = p.Name
		}
		takes = strings.Join(names, ", ")
	}
	what := "parameter"
	if len(unknown) > 1 {
		what = "parameters"
	}
	return nil, fmt.Errorf("unknown query %s %s: %s %s takes %s", what, strings.Join(unknown, ", "), r.Method, r.Path, takes)
}

func (r Route) limit() int64 {
	if r.Limit > 0 {
		return r.Limit
	}
	return MaxBody
}

// routeSets holds each group of routes (one file per group adds its own).
var routeSets []func() []Route

// Routes returns every route of the API, sorted by path then method.
func Routes() []Route { return routes() }

func routes() []Route {
	var out []Route
	for _, set := range routeSets {
		out = append(out, set()...)
	}
	slices.SortFunc(out, func(a, b Route) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	return out
}

// Health is GET /v1/health's answer.
type Health struct {
	Status string `json:"status"` // "ok"
	Schema int    `json:"schema"` // the data's schema version this engine writes
}

// APIRoutes are the routes about the API itself.
func init() {
	routeSets = append(routeSets, func() []Route {
		return []Route{
			{Method: http.MethodGet, Path: "/v1/health", Summary: "Whether the memory answers", Response: Health{},
				handle: func(c *call) (any, error) { return health(c) }},
			{Method: http.MethodGet, Path: "/v1/openapi.json", Summary: "This API as an OpenAPI 3.1 document", Response: map[string]any{},
				handle: func(*call) (any, error) { return OpenAPI(), nil }},
		}
	})
}

// Health is GET /v1/health.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	var out Health
	return &out, c.do(ctx, request{method: http.MethodGet, path: "/v1/health"}, &out)
}
