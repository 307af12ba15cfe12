package api

import (
	"context"
	"net/http"

	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// QuarantinedFacts is GET /v1/quarantine/facts's answer: every fact held
// out of the prompts (its key or value failed the screen), each with its
// id and reason.
type QuarantinedFacts struct {
	Facts []fact.Fact `json:"facts"`
}

// QuarantinedTrajectories is GET /v1/quarantine/trajectories's answer:
// every unexpired trajectory held out of matching (its goal or a step's
// text failed the screen), each with its reason.
type QuarantinedTrajectories struct {
	Trajectories []trajectory.Trajectory `json:"trajectories"`
}

func init() { routeSets = append(routeSets, quarantineRoutes) }

func quarantineRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/quarantine/facts", Summary: "The facts held out of every prompt (their key or value failed the screen), each with its id and reason",
			Response: QuarantinedFacts{},
			handle: func(c *call) (any, error) {
				fs, err := c.m.Facts.Quarantined(c.ctx)
				return QuarantinedFacts{Facts: nonNilSlice(fs)}, err
			}},
		{Method: http.MethodPost, Path: "/v1/quarantine/facts/{id}/approve", Summary: "Release a quarantined fact: it joins the facts (or confirms the same fact)",
			Response: fact.Fact{},
			handle:   func(c *call) (any, error) { return c.m.Facts.Approve(c.ctx, c.r.PathValue("id")) }},
		{Method: http.MethodPost, Path: "/v1/quarantine/facts/{id}/reject", Summary: "Delete a quarantined fact",
			Response: Removed{},
			handle: func(c *call) (any, error) {
				id := c.r.PathValue("id")
				return Removed{ID: id}, c.m.Facts.Reject(c.ctx, id)
			}},
		{Method: http.MethodGet, Path: "/v1/quarantine/trajectories", Summary: "The trajectories held out of matching (their goal or a step's text failed the screen), each with its reason",
			Response: QuarantinedTrajectories{},
			handle: func(c *call) (any, error) {
				ts, err := c.m.Trajectories.Quarantined(c.ctx)
				return QuarantinedTrajectories{Trajectories: nonNilSlice(ts)}, err
			}},
		{Method: http.MethodPost, Path: "/v1/quarantine/trajectories/{id}/approve", Summary: "Release a quarantined trajectory: it is stored and matched from then on",
			Response: trajectory.Trajectory{},
			handle:   func(c *call) (any, error) { return c.m.Trajectories.Approve(c.ctx, c.r.PathValue("id")) }},
		{Method: http.MethodPost, Path: "/v1/quarantine/trajectories/{id}/reject", Summary: "Delete a quarantined trajectory",
			Response: Removed{},
			handle: func(c *call) (any, error) {
				id := c.r.PathValue("id")
				return Removed{ID: id}, c.m.Trajectories.Reject(c.ctx, id)
			}},
	}
}

// QuarantinedFacts is GET /v1/quarantine/facts.
func (c *Client) QuarantinedFacts(ctx context.Context) ([]fact.Fact, error) {
	var out QuarantinedFacts
	return out.Facts, c.do(ctx, request{method: http.MethodGet, path: "/v1/quarantine/facts"}, &out)
}

// ApproveFact is POST /v1/quarantine/facts/{id}/approve.
func (c *Client) ApproveFact(ctx context.Context, id string) (*fact.Fact, error) {
	var out fact.Fact
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/quarantine/facts/%s/approve", id)}, &out)
}

// RejectFact is POST /v1/quarantine/facts/{id}/reject.
func (c *Client) RejectFact(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/quarantine/facts/%s/reject", id)}, &Removed{})
}

// QuarantinedTrajectories is GET /v1/quarantine/trajectories.
func (c *Client) QuarantinedTrajectories(ctx context.Context) ([]trajectory.Trajectory, error) {
	var out QuarantinedTrajectories
	return out.Trajectories, c.do(ctx, request{method: http.MethodGet, path: "/v1/quarantine/trajectories"}, &out)
}

// ApproveTrajectory is POST /v1/quarantine/trajectories/{id}/approve.
func (c *Client) ApproveTrajectory(ctx context.Context, id string) (*trajectory.Trajectory, error) {
	var out trajectory.Trajectory
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/quarantine/trajectories/%s/approve", id)}, &out)
}

// RejectTrajectory is POST /v1/quarantine/trajectories/{id}/reject.
func (c *Client) RejectTrajectory(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/quarantine/trajectories/%s/reject", id)}, &Removed{})
}
