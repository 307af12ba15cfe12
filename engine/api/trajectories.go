package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// TrajectoryList is GET /v1/trajectories's answer: the unexpired
// trajectories, newest first.
type TrajectoryList struct {
	Trajectories []trajectory.Trajectory `json:"trajectories"`
	Next         string                  `json:"next,omitempty"` // the next page's cursor, when a page was asked for
}

// TrajectoryMatch is GET /v1/recall/trajectory's answer: the best
// trajectory for the goal, its steps rewritten with the goal's values
// (what to replay); Match is null when none passes Threshold (a match needs more).
type TrajectoryMatch struct {
	Match     *trajectory.Match `json:"match"`
	Threshold float64           `json:"threshold"`
}

// MatchRequest asks GET /v1/recall/trajectory for the best trajectory for
// Goal on Domain (a host or URL); Weighted ranks by the weighted blend, and
// TraceTTLDays leaves out trajectories recorded more than that many days
// ago (0: the store's TTL, 30 days), as a run's --trace-scoring and
// --trace-ttl-days do.
type MatchRequest struct {
	Domain       string
	Goal         string
	Weighted     bool
	TraceTTLDays int
}

func init() { routeSets = append(routeSets, trajectoryRoutes) }

func trajectoryRoutes() []Route {
	domainParam := Param{Name: "domain", Type: "string", Description: "the host (or URL) it was recorded on; without it the id (unique: it hashes the host) finds it"}
	return []Route{
		{Method: http.MethodGet, Path: "/v1/trajectories", Summary: "List unexpired trajectories, newest first",
			Query: []Param{{Name: "domain", Type: "string", Description: "trajectories of this host, its parent domains and its subdomains"},
				staleParam("trajectories"), siteLimitParam, cursorParam},
			Response: TrajectoryList{},
			handle: func(c *call) (any, error) {
				stale, err := c.staleOnly()
				if err != nil {
					return nil, err
				}
				if stale {
					ts, err := c.m.Trajectories.List(c.ctx, c.query("domain"))
					return TrajectoryList{Trajectories: onlyStale(ts, func(t *trajectory.Trajectory) bool { return t.Stale != nil })}, err
				}
				req, paged, err := c.pageIfAsked()
				if err != nil {
					return nil, err
				}
				if paged {
					p, err := c.m.Trajectories.Page(c.ctx, c.query("domain"), req)
					return TrajectoryList{Trajectories: nonNilSlice(p.Items), Next: p.Next}, err
				}
				ts, err := c.m.Trajectories.List(c.ctx, c.query("domain"))
				if err != nil {
					return nil, err
				}
				return TrajectoryList{Trajectories: nonNilSlice(ts)}, nil
			}},
		{Method: http.MethodPost, Path: "/v1/trajectories", Summary: "Record a successful run's steps (a run of the same goal template on the same host replaces it)",
			Body: trajectory.Trajectory{}, Required: []string{"domain", "goal", "steps"}, Limit: MaxUpload, Response: trajectory.Trajectory{},
			handle: func(c *call) (any, error) {
				var in trajectory.Trajectory
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				if err := refuseCounts("trajectory", map[string]int{"runs": in.Runs, "shown": in.Shown, "used": in.Used, "helped": in.Helped}); err != nil {
					return nil, err
				}
				// Only a successful run records (or replaces) a trajectory:
				// a run the registry holds as finished without success
				// cannot.
				if in.RunID != "" {
					if m, err := c.m.Runs.Get(c.ctx, in.RunID); err == nil && m.Success != nil && !*m.Success {
						return nil, engine.Invalidf("trajectory", "run %s did not succeed: only a successful run records a trajectory", in.RunID)
					}
				}
				// Who records is who the request says (its headers), not
				// what the body claims.
				in.Provenance = engine.Provenance{}
				return c.m.Trajectories.Record(c.ctx, in)
			}},
		{Method: http.MethodGet, Path: "/v1/trajectories/{id}", Summary: "One trajectory with its steps",
			Query: []Param{domainParam}, Response: trajectory.Trajectory{},
			handle: func(c *call) (any, error) {
				return c.m.Trajectories.Get(c.ctx, c.query("domain"), c.r.PathValue("id"))
			}},
		{Method: http.MethodDelete, Path: "/v1/trajectories/{id}", Summary: "Remove a trajectory",
			Query: []Param{domainParam}, Response: Removed{},
			handle: func(c *call) (any, error) {
				id := c.r.PathValue("id")
				return Removed{ID: id}, c.m.Trajectories.Delete(c.ctx, c.query("domain"), id)
			}},
		{Method: http.MethodGet, Path: "/v1/recall/trajectory", Summary: "The best trajectory for a goal on a site, with its steps as they would be replayed",
			Query: []Param{
				{Name: "domain", Type: "string", Required: true, Description: "the host (or URL): trajectories are matched within one site"},
				{Name: "goal", Type: "string", Required: true, Description: "the new goal"},
				weightedParam, traceTTLParam,
			},
			Response: TrajectoryMatch{},
			handle: func(c *call) (any, error) {
				traced, err := c.traced()
				if err != nil {
					return nil, err
				}
				m, err := traced.Trajectories.Match(c.ctx, c.query("domain"), c.query("goal"))
				if err != nil {
					return nil, err
				}
				return TrajectoryMatch{Match: m, Threshold: trajectory.DefaultThreshold}, nil
			}},
		{Method: http.MethodPost, Path: "/v1/stale/trajectories", Summary: "Mark trajectories stale: a run found the site diverging from them (one request per run)",
			Body: StaleTrajectories{}, Response: StaleResult{},
			handle: func(c *call) (any, error) {
				var in StaleTrajectories
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				n, err := c.m.Trajectories.MarkStale(c.ctx, in.Trajectories)
				return StaleResult{Marked: n}, err
			}},
		{Method: http.MethodPost, Path: "/v1/attribution/trajectories", Summary: "Add a run's shown/used/helped counts to its reference trajectories (one request per run)",
			Body: TrajectoryAttribution{}, Response: AttributionResult{},
			handle: func(c *call) (any, error) {
				var in TrajectoryAttribution
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				n, err := c.m.Trajectories.Attribute(c.ctx, in.Trajectories)
				return AttributionResult{Updated: n}, err
			}},
	}
}

// Trajectories is GET /v1/trajectories.
func (c *Client) Trajectories(ctx context.Context, host string) (*TrajectoryList, error) {
	q := url.Values{}
	set(q, "domain", host)
	var out TrajectoryList
	return &out, c.do(ctx, request{method: http.MethodGet, path: "/v1/trajectories", query: q}, &out)
}

// RecordTrajectory is POST /v1/trajectories.
func (c *Client) RecordTrajectory(ctx context.Context, t trajectory.Trajectory) (*trajectory.Trajectory, error) {
	var out trajectory.Trajectory
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/trajectories", json: t}, &out)
}

// Trajectory is GET /v1/trajectories/{id}.
func (c *Client) Trajectory(ctx context.Context, host, id string) (*trajectory.Trajectory, error) {
	var out trajectory.Trajectory
	return &out, c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/trajectories/%s", id), query: hostQuery(host)}, &out)
}

// RemoveTrajectory is DELETE /v1/trajectories/{id}.
func (c *Client) RemoveTrajectory(ctx context.Context, host, id string) error {
	return c.do(ctx, request{method: http.MethodDelete, path: pathf("/v1/trajectories/%s", id), query: hostQuery(host)}, &Removed{})
}

// hostQuery is the domain query of a trajectory by id: none for "" (the id
// finds it).
func hostQuery(host string) url.Values {
	if host == "" {
		return nil
	}
	return url.Values{"domain": {host}}
}

// MatchTrajectory is GET /v1/recall/trajectory.
func (c *Client) MatchTrajectory(ctx context.Context, r MatchRequest) (*TrajectoryMatch, error) {
	q := url.Values{"domain": {r.Domain}, "goal": {r.Goal}}
	setTraced(q, r.Weighted, r.TraceTTLDays)
	var out TrajectoryMatch
	return &out, c.do(ctx, request{method: http.MethodGet, path: "/v1/recall/trajectory", query: q}, &out)
}

// TrajectoryUse is what a run's steps did with one trajectory.
type TrajectoryUse = trajectory.Attribution

// TrajectoryAttribution is POST /v1/attribution/trajectories's body.
type TrajectoryAttribution struct {
	Trajectories []TrajectoryUse `json:"trajectories"`
}

// AttributeTrajectories is POST /v1/attribution/trajectories.
func (c *Client) AttributeTrajectories(ctx context.Context, in TrajectoryAttribution) (*AttributionResult, error) {
	var out AttributionResult
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/attribution/trajectories", json: in}, &out)
}

// StaleTrajectories is POST /v1/stale/trajectories's body: the
// trajectories a run found no longer holding, each with its step and
// reason (the run is the request's Engine-Run).
type StaleTrajectories struct {
	Trajectories []trajectory.StaleMark `json:"trajectories"`
}

// StaleResult is POST /v1/stale/trajectories's answer: how many were
// marked (one no longer kept or already stale is not).
type StaleResult struct {
	Marked int `json:"marked"`
}

// MarkTrajectoriesStale is POST /v1/stale/trajectories.
func (c *Client) MarkTrajectoriesStale(ctx context.Context, in StaleTrajectories) (*StaleResult, error) {
	var out StaleResult
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/stale/trajectories", json: in}, &out)
}

// StaleTrajectoryList is GET /v1/trajectories?stale=true.
func (c *Client) StaleTrajectoryList(ctx context.Context, host string) (*TrajectoryList, error) {
	q := url.Values{"stale": {"true"}}
	set(q, "domain", host)
	var out TrajectoryList
	return &out, c.do(ctx, request{method: http.MethodGet, path: "/v1/trajectories", query: q}, &out)
}

// staleParam documents a list route's stale filter.
func staleParam(what string) Param {
	return Param{Name: "stale", Type: "boolean", Description: "only the stale " + what + " (a run found the site changed), with their marks; not paged"}
}

// staleOnly reads a list route's stale filter; it is not paged.
func (c *call) staleOnly() (bool, error) {
	stale, err := c.queryBool("stale")
	if err == nil && stale && (c.query("limit") != "" || c.query("cursor") != "") {
		err = engine.Invalid("request", "a stale list is not paged: give stale without limit or cursor")
	}
	return stale, err
}

// onlyStale keeps the items is says are stale, never nil.
func onlyStale[T any](items []T, is func(*T) bool) []T {
	out := []T{}
	for i := range items {
		if is(&items[i]) {
			out = append(out, items[i])
		}
	}
	return out
}
