package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/url"

	"github.com/engine-dev/engine/engine/memory/plan"
	"github.com/engine-dev/engine/engine/memory/run"
)

// PlanHistory is GET /v1/runs/{id}/plan's answer: a run's planner history
// as the planner sees it.
type PlanHistory struct {
	RunID string `json:"run_id"`
	// Task is the run's goal, or the first iteration's task when the
	// registry does not hold the run.
	Task       string           `json:"task"`
	Metrics    plan.Metrics     `json:"metrics"`
	Iterations []plan.Iteration `json:"iterations"`
	// Rendered is the iteration history within the budget, and Render how
	// it was fitted.
	Rendered string      `json:"rendered"`
	Render   plan.Report `json:"render"`
	// Prompt is the history part of the planner's user prompt: the task,
	// the metrics and Rendered.
	Prompt string `json:"prompt"`
}

func init() { routeSets = append(routeSets, planRoutes) }

func planRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/runs/{id}/plan", Summary: "A run's planner history: task, execution metrics, iterations, and the prompt text",
			Query:    []Param{{Name: "budget", Type: "integer", Description: "fit the iteration history in this many tokens by summarising old iterations (default 0: no limit)"}},
			Response: PlanHistory{},
			handle:   getPlan},
		{Method: http.MethodPost, Path: "/v1/runs/{id}/plan/iterations", Summary: "Append one iteration (planner output and tool executions) to a registered run's planner history",
			Body: plan.Iteration{}, Response: plan.Iteration{},
			handle: func(c *call) (any, error) {
				id, err := runID(c)
				if err != nil {
					return nil, err
				}
				var in plan.Iteration
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				// A history belongs to a registered run: one added for an
				// unknown id would show up as a run's that never was.
				if _, err := c.m.Runs.Get(c.ctx, id); err != nil {
					return nil, err
				}
				return c.m.Plans.Add(c.ctx, id, in)
			}},
	}
}

func getPlan(c *call) (any, error) {
	id, err := runID(c)
	if err != nil {
		return nil, err
	}
	budget, err := c.queryInt("budget", 0, 0, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	its, err := c.m.Plans.Get(c.ctx, id)
	if err != nil {
		return nil, err
	}
	task := its[0].Planner.UserTask
	if m, err := c.m.Runs.Get(c.ctx, id); err == nil {
		task = m.Goal
	} else if !errors.Is(err, run.ErrNotFound) {
		return nil, err
	}
	text, rep := plan.Render(its, budget)
	return PlanHistory{
		RunID: id, Task: task, Metrics: plan.ComputeMetrics(its), Iterations: its,
		Rendered: text, Render: rep, Prompt: plan.Prompt(task, its, budget),
	}, nil
}

// Plan is GET /v1/runs/{id}/plan.
func (c *Client) Plan(ctx context.Context, id string, budget int) (*PlanHistory, error) {
	if err := run.CheckID(id); err != nil {
		return nil, err
	}
	q := url.Values{}
	setInt(q, "budget", budget)
	var out PlanHistory
	return &out, c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/runs/%s/plan", id), query: q}, &out)
}

// AddIteration is POST /v1/runs/{id}/plan/iterations.
func (c *Client) AddIteration(ctx context.Context, id string, it plan.Iteration) (*plan.Iteration, error) {
	if err := run.CheckID(id); err != nil {
		return nil, err
	}
	// Tool outputs are raw JSON, answered as given: encoded without the
	// HTML escaping json.Marshal applies to them, or the answer would show
	// "\u003c" for "<" where the caller sent "<".
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(it); err != nil {
		return nil, err
	}
	var out plan.Iteration
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/runs/%s/plan/iterations", id), raw: b.Bytes(), rawType: "application/json"}, &out)
}
