package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/memctx"
)

// ContextRequest is GET /v1/context's query: one step's state, and how to
// rank reference trajectories.
type ContextRequest struct {
	memctx.Request
	// Weighted ranks reference trajectories by the weighted blend.
	Weighted bool
	// TraceTTLDays leaves out trajectories recorded more than this many
	// days ago (0: the store's TTL, 30 days).
	TraceTTLDays int
}

// maxBudget bounds a context request's token budget.
const maxBudget = 1 << 30

func init() { routeSets = append(routeSets, contextRoutes) }

func contextRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/context", Summary: "What a run sends the model from memory at a step (the memory block, and the tips for the last error), fitted into a token budget by priority",
			Query: []Param{
				{Name: "url", Type: "string", Required: true, Description: "the page the agent is on (or the start URL, or a host)"},
				{Name: "goal", Type: "string", Required: true, Description: "the run's goal"},
				{Name: "budget", Type: "integer", Description: "token budget (default " + strconv.Itoa(memctx.DefaultBudget) + "; a token is about 4 characters)"},
				{Name: "step", Type: "integer", Description: "the step number (default 1; for the context_built event)"},
				{Name: "last_command", Type: "string", Description: "the previous command, when it failed (needs last_error)"},
				{Name: "last_error", Type: "string", Description: "the previous command's error: adds tips for it (Trigger A), returned apart in error_tips, as a run appends them to the error"},
				weightedParam, traceTTLParam,
				{Name: "domain_tips", Type: "boolean", Description: "include the site's tips, Trigger B (default true; an agent asks for them on the step it enters a domain)"},
			},
			Response: memctx.Result{},
			handle:   buildContext},
	}
}

func buildContext(c *call) (any, error) {
	req := memctx.Request{
		URL: c.query("url"), Goal: c.query("goal"),
		LastCommand: c.query("last_command"), LastError: c.query("last_error"),
	}
	var err error
	if req.Budget, err = c.queryInt("budget", 0, 0, maxBudget); err != nil {
		return nil, err
	}
	if req.Step, err = c.queryInt("step", 1, 0, maxBudget); err != nil {
		return nil, err
	}
	if req.LastCommand != "" && req.LastError == "" {
		return nil, engine.Invalid("request", "last_command needs last_error")
	}
	traced, err := c.traced()
	if err != nil {
		return nil, err
	}
	if c.query("domain_tips") != "" {
		tips, err := c.queryBool("domain_tips")
		if err != nil {
			return nil, err
		}
		req.SkipDomainTips = !tips
	}
	return traced.Context(memctx.Options{}).Build(c.ctx, req)
}

// maxTraceTTLDays bounds trace_ttl_days (a hundred years).
const maxTraceTTLDays = 36500

// weightedParam and traceTTLParam are the two query parameters that rank
// reference trajectories, the same on every route that matches one.
var (
	weightedParam = Param{Name: "weighted", Type: "boolean", Description: "rank trajectories by the weighted blend: similarity 60%, recency 20%, speed 10%, verification 10%"}
	traceTTLParam = Param{Name: "trace_ttl_days", Type: "integer", Description: "use only trajectories recorded at most this many days ago (default: their 30-day expiry)"}
)

// traced returns the memory with trajectory matches ranked as the
// request's weighted and trace_ttl_days ask, as a run's --trace-scoring
// and --trace-ttl-days do.
func (c *call) traced() (*memory.Memory, error) {
	weighted, err := c.queryBool("weighted")
	if err != nil {
		return nil, err
	}
	ttlDays, err := c.queryInt("trace_ttl_days", 0, 0, maxTraceTTLDays)
	if err != nil {
		return nil, err
	}
	return c.m.Traced(weighted, time.Duration(ttlDays)*24*time.Hour), nil
}

// setTraced puts a request's trajectory ranking into its query.
func setTraced(q url.Values, weighted bool, ttlDays int) {
	if weighted {
		q.Set("weighted", "true")
	}
	setInt(q, "trace_ttl_days", ttlDays)
}

// Context is GET /v1/context.
func (c *Client) Context(ctx context.Context, r ContextRequest) (*memctx.Result, error) {
	q := url.Values{"url": {r.URL}, "goal": {r.Goal}, "step": {strconv.Itoa(r.Step)}}
	setInt(q, "budget", r.Budget)
	set(q, "last_command", r.LastCommand)
	set(q, "last_error", r.LastError)
	setTraced(q, r.Weighted, r.TraceTTLDays)
	if r.SkipDomainTips {
		q.Set("domain_tips", "false")
	}
	var out memctx.Result
	return &out, c.do(ctx, request{method: http.MethodGet, path: "/v1/context", query: q}, &out)
}
