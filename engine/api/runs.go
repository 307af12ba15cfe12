package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/session"
)

// CreateRun is POST /v1/runs's body: a run that begins.
type CreateRun struct {
	// RunID is the run's id; "" generates run_<unix ms>_<random>.
	RunID       string `json:"run_id,omitempty"`
	SessionID   string `json:"session_id,omitempty"`
	ParentRunID string `json:"parent_run_id,omitempty"`
	Goal        string `json:"goal"`
	// Domain is the host the run is on; "" takes the start URL's host.
	Domain   string `json:"domain,omitempty"`
	StartURL string `json:"start_url,omitempty"`
	// Owner is the process that runs the run, as run.Self() gives it on
	// the caller's machine, so readers can show the run as crashed once
	// that process is gone; none for a run some other program drives.
	Owner *run.Owner `json:"owner,omitempty"`
}

// RunProgress is POST /v1/runs/{id}/progress's body: what a running run
// reports as it goes. Zero fields leave the manifest as it is.
type RunProgress struct {
	CurrentURL string `json:"current_url,omitempty"`
	TurnCount  int    `json:"turn_count,omitempty"` // turns so far
	// ArtifactPaths are added to the run's.
	ArtifactPaths []string `json:"artifact_paths,omitempty"`
	Summary       string   `json:"summary,omitempty"`
}

// RunCompletion is POST /v1/runs/{id}/complete's body: how a run ended.
type RunCompletion struct {
	// Success is required: true completes the run, false fails it.
	Success *bool `json:"success"`
	// FinalURL is where the browser ended up ("" : the last current URL).
	FinalURL      string   `json:"final_url,omitempty"`
	Summary       string   `json:"summary,omitempty"`
	Result        string   `json:"result,omitempty"`
	Reason        string   `json:"reason,omitempty"`
	TurnCount     int      `json:"turn_count,omitempty"`
	ArtifactPaths []string `json:"artifact_paths,omitempty"` // added to the run's
	// NoSession leaves the run out of its site's session history.
	NoSession bool `json:"no_session,omitempty"`
	// Replay is how the run replayed a trajectory, if it did.
	Replay *run.Replay `json:"replay,omitempty"`
}

// RunPage is one page of GET /v1/runs, newest started first: Next is the
// cursor of the next page, "" after the last.
type RunPage struct {
	Runs []run.Manifest `json:"runs"`
	Next string         `json:"next,omitempty"`
}

// CompletedRun is POST /v1/runs/{id}/complete's answer: the finished run,
// and the entry recorded in its site's session history (none with
// no_session).
type CompletedRun struct {
	Run     run.Manifest     `json:"run"`
	Session *session.Session `json:"session,omitempty"`
}

// ScenarioRequest is the body of POST /v1/runs/{id}/resume and /fork ({}
// keeps the run's goal).
type ScenarioRequest struct {
	// Goal is the new run's goal; "" repeats the run's.
	Goal string `json:"goal,omitempty"`
}

func init() { routeSets = append(routeSets, runRoutes) }

func runRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/v1/runs", Summary: "List runs, newest started first (a running run whose process is gone shows as crashed)",
			Query: []Param{
				{Name: "domain", Type: "string", Description: "runs on this host and its subdomains"},
				{Name: "status", Type: "string", Description: "running, completed, failed or crashed"},
				{Name: "session", Type: "string", Description: "runs of this session id"},
				limitParam, cursorParam,
			},
			Response: RunPage{},
			handle:   listRuns},
		{Method: http.MethodPost, Path: "/v1/runs", Summary: "Register a run as running",
			Body: CreateRun{}, Required: []string{"goal"}, Response: run.Manifest{},
			handle: func(c *call) (any, error) {
				var in CreateRun
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				return runErr(c.m.Runs.Start(c.ctx, run.Start{
					RunID: in.RunID, SessionID: in.SessionID, ParentRunID: in.ParentRunID,
					Goal: in.Goal, Domain: in.Domain, StartURL: in.StartURL, Owner: in.Owner,
				}))
			}},
		{Method: http.MethodGet, Path: "/v1/runs/{id}", Summary: "One run's manifest", Response: run.Manifest{},
			handle: func(c *call) (any, error) {
				id, err := runID(c)
				if err != nil {
					return nil, err
				}
				return c.m.Runs.Get(c.ctx, id)
			}},
		{Method: http.MethodPost, Path: "/v1/runs/{id}/progress", Summary: "Record a running run's progress (and its heartbeat)",
			Body: RunProgress{}, Response: run.Manifest{},
			handle: func(c *call) (any, error) {
				id, err := runID(c)
				if err != nil {
					return nil, err
				}
				var in RunProgress
				if err := c.decode(&in); err != nil {
					return nil, err
				}
				return runErr(c.m.Runs.Update(c.ctx, id, run.Progress{
					CurrentURL: in.CurrentURL, TurnCount: in.TurnCount, ArtifactPaths: in.ArtifactPaths, Summary: in.Summary,
				}))
			}},
		{Method: http.MethodPost, Path: "/v1/runs/{id}/complete", Summary: "Finish a running run (completed or failed) and add it to its site's session history",
			Body: RunCompletion{}, Required: []string{"success"}, Response: CompletedRun{},
			handle: completeRun},
		{Method: http.MethodPost, Path: "/v1/runs/{id}/resume", Summary: "The scenario that continues a run at its final URL, in the same session",
			Body: ScenarioRequest{}, Response: run.Scenario{},
			handle: func(c *call) (any, error) { return scenario(c, c.m.Runs.Resume) }},
		{Method: http.MethodPost, Path: "/v1/runs/{id}/fork", Summary: "The scenario that branches off a run at its final URL, in a new session",
			Body: ScenarioRequest{}, Response: run.Scenario{},
			handle: func(c *call) (any, error) { return scenario(c, c.m.Runs.Fork) }},
	}
}

// runID returns the {id} path parameter, a valid run id.
func runID(c *call) (string, error) {
	id := c.r.PathValue("id")
	return id, run.CheckID(id)
}

// runErr classes the registry's state errors (an id that is taken, a run
// that already finished) as bad input: the caller asked for something the
// run's state does not allow. The message is unchanged.
func runErr[T any](v T, err error) (T, error) {
	if errors.Is(err, run.ErrExists) || errors.Is(err, run.ErrFinished) {
		err = engine.MarkInvalid(err)
	}
	return v, err
}

func listRuns(c *call) (any, error) {
	f := run.Filter{Domain: c.query("domain"), SessionID: c.query("session")}
	if v := c.query("status"); v != "" {
		st, err := run.ParseStatus(v)
		if err != nil {
			return nil, err
		}
		f.Status = st
	}
	req, err := c.page()
	if err != nil {
		return nil, err
	}
	p, err := c.m.Runs.Page(c.ctx, f, req)
	if err != nil {
		return nil, err
	}
	return RunPage{Runs: nonNilSlice(p.Items), Next: p.Next}, nil
}

func completeRun(c *call) (any, error) {
	id, err := runID(c)
	if err != nil {
		return nil, err
	}
	var in RunCompletion
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if in.Success == nil {
		return nil, engine.Invalid("run", "success is required: true completes the run, false fails it")
	}
	m, err := runErr(c.m.Runs.Complete(c.ctx, id, run.Completion{
		Success: *in.Success, FinalURL: in.FinalURL, Summary: in.Summary, Result: in.Result,
		Reason: in.Reason, TurnCount: in.TurnCount, ArtifactPaths: in.ArtifactPaths, Replay: in.Replay,
	}))
	if err != nil {
		return nil, err
	}
	out := CompletedRun{Run: *m}
	if !in.NoSession {
		s, err := c.m.Sessions.Record(c.ctx, m.Session())
		if err != nil {
			return nil, fmt.Errorf("run %s completed, but recording its session failed: %w", m.RunID, err)
		}
		out.Session = &s
	}
	return out, nil
}

func scenario(c *call, build func(ctx context.Context, id, goal string) (*run.Scenario, error)) (any, error) {
	id, err := runID(c)
	if err != nil {
		return nil, err
	}
	var in ScenarioRequest
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	return build(c.ctx, id, in.Goal)
}

// Runs is GET /v1/runs.
func (c *Client) Runs(ctx context.Context, f run.Filter, req listing.Request) (*RunPage, error) {
	q := url.Values{}
	set(q, "domain", f.Domain)
	set(q, "status", string(f.Status))
	set(q, "session", f.SessionID)
	setInt(q, "limit", req.Limit)
	set(q, "cursor", req.Cursor)
	var out RunPage
	return &out, c.do(ctx, request{method: http.MethodGet, path: "/v1/runs", query: q}, &out)
}

// EachRun calls fn with every run f selects, newest first, page after
// page from cursor, up to max runs (0: all). It returns the cursor after
// the last run given when more remain.
func (c *Client) EachRun(ctx context.Context, f run.Filter, cursor string, max int, fn func(run.Manifest) error) (string, error) {
	return eachPage(max, cursor, func(limit int, cursor string) ([]run.Manifest, string, error) {
		p, err := c.Runs(ctx, f, listing.Request{Limit: limit, Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return p.Runs, p.Next, nil
	}, fn)
}

// CreateRun is POST /v1/runs.
func (c *Client) CreateRun(ctx context.Context, in CreateRun) (*run.Manifest, error) {
	var out run.Manifest
	return &out, c.do(ctx, request{method: http.MethodPost, path: "/v1/runs", json: in}, &out)
}

// Run is GET /v1/runs/{id}.
func (c *Client) Run(ctx context.Context, id string) (*run.Manifest, error) {
	if err := run.CheckID(id); err != nil {
		return nil, err
	}
	var out run.Manifest
	return &out, c.do(ctx, request{method: http.MethodGet, path: pathf("/v1/runs/%s", id)}, &out)
}

// UpdateRun is POST /v1/runs/{id}/progress.
func (c *Client) UpdateRun(ctx context.Context, id string, in RunProgress) (*run.Manifest, error) {
	if err := run.CheckID(id); err != nil {
		return nil, err
	}
	var out run.Manifest
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/runs/%s/progress", id), json: in}, &out)
}

// CompleteRun is POST /v1/runs/{id}/complete.
func (c *Client) CompleteRun(ctx context.Context, id string, in RunCompletion) (*CompletedRun, error) {
	if err := run.CheckID(id); err != nil {
		return nil, err
	}
	var out CompletedRun
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf("/v1/runs/%s/complete", id), json: in}, &out)
}

// ResumeRun is POST /v1/runs/{id}/resume.
func (c *Client) ResumeRun(ctx context.Context, id, goal string) (*run.Scenario, error) {
	return c.scenario(ctx, "/v1/runs/%s/resume", id, goal)
}

// ForkRun is POST /v1/runs/{id}/fork.
func (c *Client) ForkRun(ctx context.Context, id, goal string) (*run.Scenario, error) {
	return c.scenario(ctx, "/v1/runs/%s/fork", id, goal)
}

func (c *Client) scenario(ctx context.Context, path, id, goal string) (*run.Scenario, error) {
	if err := run.CheckID(id); err != nil {
		return nil, err
	}
	var out run.Scenario
	return &out, c.do(ctx, request{method: http.MethodPost, path: pathf(path, id), json: ScenarioRequest{Goal: goal}}, &out)
}
