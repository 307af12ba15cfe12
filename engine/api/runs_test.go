package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory/plan"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/session"
)

// localClient is the CLI's embedded mode over a fresh memory, with a fixed
// clock and the names of the events each request caused.
func localClient(t *testing.T) (*api.LocalClient, *[]string) {
	t.Helper()
	var events []string
	c := api.Local(api.Handler(open(t), api.Options{AllowClock: true}), api.ClientOptions{
		Events: func(e event.Event) { events = append(events, e.Name) },
		Now:    march12,
	})
	t.Cleanup(func() { c.Close() })
	return c, &events
}

func wantEvents(t *testing.T, events *[]string, want ...string) {
	t.Helper()
	if !slices.Equal(*events, want) {
		t.Fatalf("events %v, want %v", *events, want)
	}
	*events = nil
}

// TestRunLifecycle drives a run through the registry routes: create,
// progress, complete (which records its session server-side), list with
// filters, resume and fork.
func TestRunLifecycle(t *testing.T) {
	ctx := context.Background()
	c, events := localClient(t)
	m, err := c.CreateRun(ctx, api.CreateRun{RunID: "run_1", SessionID: "proj_123", Goal: "Build a todo app", StartURL: "https://www.example.com/"})
	if err != nil || m.Status != run.Running || m.Domain != "www.example.com" || !m.StartedAt.Equal(march12) {
		t.Fatalf("create: %+v, %v", m, err)
	}
	wantEvents(t, events, run.EventStarted)
	m, err = c.UpdateRun(ctx, "run_1", api.RunProgress{CurrentURL: "https://www.example.com/project/123", TurnCount: 3, ArtifactPaths: []string{"shots/1.png"}})
	if err != nil || m.TurnCount != 3 || m.CurrentURL != "https://www.example.com/project/123" || len(m.ArtifactPaths) != 1 {
		t.Fatalf("progress: %+v, %v", m, err)
	}
	yes := true
	done, err := c.CompleteRun(ctx, "run_1", api.RunCompletion{Success: &yes, Summary: "Created the project", TurnCount: 8})
	if err != nil || done.Run.Status != run.Completed || done.Run.FinalURL != "https://www.example.com/project/123" {
		t.Fatalf("complete: %+v, %v", done, err)
	}
	if done.Session == nil || done.Session.ID != "proj_123" || done.Session.RunID != "run_1" || !done.Session.Success {
		t.Fatalf("complete: session %+v, want the run's entry in the history", done.Session)
	}
	wantEvents(t, events, run.EventCompleted, session.EventRecorded)
	ss, err := c.Sessions(ctx, session.Filter{Domain: "example.com"})
	if err != nil || len(ss) != 1 || ss[0].Outcome != "Created the project" || ss[0].TurnsUsed != 8 {
		t.Fatalf("sessions after complete: %+v, %v", ss, err)
	}

	if _, err := c.CreateRun(ctx, api.CreateRun{RunID: "run_2", SessionID: "proj_123", Goal: "Add auth", Domain: "example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateRun(ctx, api.CreateRun{RunID: "run_3", Goal: "Find rackets", StartURL: "https://shop.other.org/"}); err != nil {
		t.Fatal(err)
	}
	no := false
	failed, err := c.CompleteRun(ctx, "run_3", api.RunCompletion{Success: &no, Reason: "login wall", NoSession: true})
	if err != nil || failed.Run.Status != run.Failed || failed.Session != nil {
		t.Fatalf("complete --no-session: %+v, %v", failed, err)
	}
	if ss, _ := c.Sessions(ctx, session.Filter{Domain: "other.org"}); len(ss) != 0 {
		t.Fatalf("no_session recorded a session: %+v", ss)
	}
	for _, tc := range []struct {
		f    run.Filter
		want []string
	}{
		{run.Filter{}, []string{"run_3", "run_2", "run_1"}},
		{run.Filter{Domain: "example.com"}, []string{"run_2", "run_1"}},
		{run.Filter{SessionID: "proj_123", Status: run.Running}, []string{"run_2"}},
		{run.Filter{Status: run.Failed}, []string{"run_3"}},
		{run.Filter{Limit: 1}, []string{"run_3"}},
		{run.Filter{Domain: "nothing.org"}, []string{}},
	} {
		p, err := c.Runs(ctx, tc.f, listing.Request{Limit: tc.f.Limit})
		got := []string{}
		for _, m := range p.Runs {
			got = append(got, m.RunID)
		}
		if err != nil || p.Runs == nil || !slices.Equal(got, tc.want) {
			t.Errorf("runs %+v: %v, %v; want %v", tc.f, got, err, tc.want)
		}
	}

	sc, err := c.ResumeRun(ctx, "run_1", "Now add dark mode")
	if err != nil || *sc != (run.Scenario{Goal: "Now add dark mode", StartURL: "https://www.example.com/project/123", SessionID: "proj_123", ParentRunID: "run_1"}) {
		t.Fatalf("resume: %+v, %v", sc, err)
	}
	sc, err = c.ForkRun(ctx, "run_1", "")
	if err != nil || sc.Goal != "Build a todo app" || !strings.HasPrefix(sc.SessionID, "fork_") || sc.ParentRunID != "run_1" {
		t.Fatalf("fork: %+v, %v", sc, err)
	}
	got, err := c.Run(ctx, "run_1")
	if err != nil || got.Status != run.Completed || got.TurnCount != 8 {
		t.Fatalf("show: %+v, %v", got, err)
	}
}

// TestRunErrors: unknown ids are 404 with the registry's message (the one
// the CLI prints), bad ids, filters and bodies 400, and a run's state
// (taken id, finished run) refuses with 400 too.
func TestRunErrors(t *testing.T) {
	ctx := context.Background()
	m := open(t)
	h := api.Handler(m, api.Options{})
	wantProblem(t, do(t, h, "GET", "/v1/runs/nope", "", ""), 404, "run nope: no such run")
	wantProblem(t, do(t, h, "POST", "/v1/runs/nope/resume", "application/json", `{}`), 404, "run: resume: run nope: no such run")
	wantProblem(t, do(t, h, "POST", "/v1/runs/nope/fork", "application/json", `{"goal": "x"}`), 404, "run: fork: run nope: no such run")
	wantProblem(t, do(t, h, "POST", "/v1/runs/nope/progress", "application/json", `{"turn_count": 2}`), 404, "run: update nope: run nope: no such run")
	wantProblem(t, do(t, h, "POST", "/v1/runs/nope/complete", "application/json", `{"success": true}`), 404, "no such run")
	wantProblem(t, do(t, h, "GET", "/v1/runs/a%20b", "", ""), 400, `run id "a b": use letters, digits`)
	wantProblem(t, do(t, h, "GET", "/v1/runs?status=done", "", ""), 400, `unknown status "done"`)
	wantProblem(t, do(t, h, "GET", "/v1/runs?limit=-1", "", ""), 400, "limit")
	wantProblem(t, do(t, h, "POST", "/v1/runs", "application/json", `{"goal": "x"}`), 400, "invalid run: no domain: give the domain or the start URL")
	wantProblem(t, do(t, h, "POST", "/v1/runs", "application/json", `{"goal": "x", "domain": "a.com", "run_id": "a b"}`), 400, `run id "a b"`)
	wantProblem(t, do(t, h, "POST", "/v1/runs", "application/json", `{"goal": "x", "domain": "a.com", "id": "r1"}`), 400, `unknown field "id"`)

	if _, err := m.Runs.Start(ctx, run.Start{RunID: "r1", Goal: "x", Domain: "a.com"}); err != nil {
		t.Fatal(err)
	}
	wantProblem(t, do(t, h, "POST", "/v1/runs", "application/json", `{"goal": "y", "domain": "a.com", "run_id": "r1"}`), 400, "run: start r1: run id already exists")
	wantProblem(t, do(t, h, "POST", "/v1/runs/r1/complete", "application/json", `{}`), 400, `the field "success" is required`)
	wantProblem(t, do(t, h, "POST", "/v1/runs/r1/progress", "application/json", `{"turn_count": -1}`), 400, "turn count -1 is negative")
	wantProblem(t, do(t, h, "POST", "/v1/runs/r1/resume", "application/json", ``), 400, "the body is empty")
	if resp := do(t, h, "POST", "/v1/runs/r1/complete", "application/json", `{"success": true}`); resp.StatusCode != 200 {
		t.Fatalf("complete: %d %s", resp.StatusCode, body(t, resp))
	}
	wantProblem(t, do(t, h, "POST", "/v1/runs/r1/complete", "application/json", `{"success": false}`), 400, "run: complete r1: run already finished (completed)")
	wantProblem(t, do(t, h, "POST", "/v1/runs/r1/progress", "application/json", `{"turn_count": 4}`), 400, "run already finished")

	// Through the client: the same messages, classed for the CLI's exit
	// status; an id that is no path element is refused before it is sent.
	c := api.Local(h, api.ClientOptions{})
	defer c.Close()
	if _, err := c.Run(ctx, "nope"); !errors.Is(err, engine.ErrNotFound) || err.Error() != "run nope: no such run" {
		t.Fatalf("client show nope: %v", err)
	}
	for _, id := range []string{"", "..", "a/b"} {
		if _, err := c.Run(ctx, id); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("client show %q: %v; want bad input", id, err)
		}
	}
	if _, err := c.CreateRun(ctx, api.CreateRun{RunID: "r1", Goal: "x", Domain: "a.com"}); !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("client create r1 again: %v", err)
	}
}

// TestCrashedIsDerivedByTheServer: a running run whose owner process is
// gone shows as crashed, judged against the host and /proc of the process
// that serves the request (the owner's own machine when the server runs
// next to its agents); an owner on another host cannot be judged and stays
// running.
func TestCrashedIsDerivedByTheServer(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no process liveness check on windows")
	}
	ctx := context.Background()
	c, _ := localClient(t)
	host, _ := os.Hostname()
	self := run.Self()
	// 4194304 is PID_MAX_LIMIT: no process on Linux has that pid.
	for id, owner := range map[string]*run.Owner{
		"alive":  &self,
		"gone":   {PID: 4194304, Host: host},
		"remote": {PID: 4194304, Host: host + ".elsewhere"},
		"none":   nil,
	} {
		if _, err := c.CreateRun(ctx, api.CreateRun{RunID: id, Goal: "x", Domain: "a.com", Owner: owner}); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]run.Status{"alive": run.Running, "gone": run.Crashed, "remote": run.Running, "none": run.Running} {
		m, err := c.Run(ctx, id)
		if err != nil || m.Status != want {
			t.Errorf("run %s: %+v, %v; want %s", id, m, err, want)
		}
	}
	m, _ := c.Run(ctx, "gone")
	if !strings.HasPrefix(m.Reason, "crashed: process 4194304 on "+host+" is gone") {
		t.Errorf("crashed reason %q", m.Reason)
	}
	p, err := c.Runs(ctx, run.Filter{Status: run.Crashed}, listing.Request{})
	if err != nil || len(p.Runs) != 1 || p.Runs[0].RunID != "gone" {
		t.Fatalf("runs status=crashed: %+v, %v", p, err)
	}
	// Crashed is shown, never stored: the run can still be completed.
	yes := true
	if _, err := c.CompleteRun(ctx, "gone", api.RunCompletion{Success: &yes}); err != nil {
		t.Fatalf("complete a crashed run: %v", err)
	}
}

func TestSessionRoutes(t *testing.T) {
	ctx := context.Background()
	c, events := localClient(t)
	for _, s := range []session.Session{
		{ID: "proj_123", Goal: "Build a todo app", Outcome: "Created project", Success: true, FinalURL: "https://example.com/project/123", Timestamp: march12.Add(-48 * time.Hour), TurnsUsed: 8, DurationMS: 45000},
		{ID: "proj_123", Goal: "Add auth", Outcome: "Login page added", Success: true, FinalURL: "https://example.com/login", Timestamp: march12.Add(-24 * time.Hour), TurnsUsed: 5, DurationMS: 31000},
		{Goal: "Delete old todos", Outcome: "no delete button", Domain: "app.example.com", Timestamp: march12.Add(-72 * time.Hour)},
		{Goal: "Search rackets", Success: true, FinalURL: "https://www.padel.shop/search"},
	} {
		got, err := c.RecordSession(ctx, s)
		if err != nil || got.Domain == "" || got.ID == "" || got.Timestamp.IsZero() {
			t.Fatalf("record %q: %+v, %v", s.Goal, got, err)
		}
	}
	wantEvents(t, events, session.EventRecorded, session.EventRecorded, session.EventRecorded, session.EventRecorded)
	no := false
	for _, tc := range []struct {
		f    session.Filter
		want []string
	}{
		{session.Filter{Domain: "www.example.com"}, []string{"Add auth", "Build a todo app", "Delete old todos"}},
		{session.Filter{SessionID: "proj_123"}, []string{"Add auth", "Build a todo app"}},
		{session.Filter{Success: &no}, []string{"Delete old todos"}},
		{session.Filter{Limit: 1}, []string{"Search rackets"}},
	} {
		ss, err := c.Sessions(ctx, tc.f)
		var got []string
		for _, s := range ss {
			got = append(got, s.Goal)
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("sessions %+v: %v, %v; want %v", tc.f, got, err, tc.want)
		}
	}
	text, err := c.RenderSessions(ctx, session.Filter{Domain: "example.com"})
	ss, _ := c.Sessions(ctx, session.Filter{Domain: "example.com"})
	if err != nil || text != session.Render(ss) || !strings.HasPrefix(text, `1. [2026-03-11 10:00] "Add auth": succeeded (session proj_123)`) {
		t.Fatalf("rendered: %q, %v", text, err)
	}
	if text, err := c.RenderSessions(ctx, session.Filter{Domain: "nothing.org"}); err != nil || text != "" {
		t.Fatalf("rendered, no sessions: %q, %v", text, err)
	}

	h := api.Handler(open(t), api.Options{})
	wantProblem(t, do(t, h, "GET", "/v1/sessions?status=maybe", "", ""), 400, `status="maybe": want completed or failed`)
	wantProblem(t, do(t, h, "GET", "/v1/sessions/rendered", "", ""), 400, "the domain parameter is required")
	wantProblem(t, do(t, h, "POST", "/v1/sessions", "application/json", `{"goal": "x"}`), 400, "invalid session: no domain: give the domain or the final URL")
	wantProblem(t, do(t, h, "POST", "/v1/sessions", "application/json", `{"goal": "x", "domain": "a.com", "turns_used": -2}`), 400, "turns_used -2 is negative")
	if b := body(t, do(t, h, "GET", "/v1/sessions", "", "")); strings.TrimSpace(b) != "[]" {
		t.Fatalf("no sessions: %s, want []", b)
	}
	if b := body(t, do(t, h, "GET", "/v1/runs", "", "")); strings.TrimSpace(b) != `{"runs":[]}` {
		t.Fatalf("no runs: %s, want {\"runs\":[]}", b)
	}
}

func TestPlanRoutes(t *testing.T) {
	ctx := context.Background()
	c, events := localClient(t)
	if _, err := c.CreateRun(ctx, api.CreateRun{RunID: "run_amz", Goal: "Order toothpaste", StartURL: "https://www.amazon.com/"}); err != nil {
		t.Fatal(err)
	}
	*events = nil
	it1 := plan.Iteration{
		Planner: plan.Output{UserTask: "the planner's task", ProposedActions: []string{"Navigate"}},
		Tools: []plan.ToolExecution{
			{Tool: "navigate", OK: true, Output: json.RawMessage(`"<b>Amazon</b> & more"`)},
			{Tool: "visual_click", OK: false, Error: "Vision API key not provided."},
		},
		Observations: 1, StartedAt: march12, EndedAt: march12.Add(6 * time.Second),
	}
	got, err := c.AddIteration(ctx, "run_amz", it1)
	if err != nil || got.N != 1 || len(got.Tools) != 2 {
		t.Fatalf("add: %+v, %v", got, err)
	}
	// The answer shows tool outputs as given: the client adds no HTML
	// escaping on the way.
	if string(got.Tools[0].Output) != `"<b>Amazon</b> & more"` {
		t.Fatalf("output stored as %s", got.Tools[0].Output)
	}
	wantEvents(t, events, plan.EventIteration)
	if _, err := c.AddIteration(ctx, "run_amz", plan.Iteration{N: 5, Planner: plan.Output{UserTask: "x"}}); !errors.Is(err, engine.ErrInvalid) ||
		!strings.Contains(err.Error(), "iteration 5 given, but the next iteration of run run_amz is 2") {
		t.Fatalf("add numbered 5: %v", err)
	}
	if _, err := c.AddIteration(ctx, "run_amz", plan.Iteration{N: 2, Planner: plan.Output{UserTask: "x"}, EndedAt: march12.Add(10 * time.Second)}); err != nil {
		t.Fatal(err)
	}

	h, err := c.Plan(ctx, "run_amz", 0)
	if err != nil {
		t.Fatal(err)
	}
	its := h.Iterations
	text, rep := plan.Render(its, 0)
	if h.RunID != "run_amz" || h.Task != "Order toothpaste" || len(its) != 2 || h.Metrics != plan.ComputeMetrics(its) ||
		h.Rendered != text || h.Render != rep || h.Prompt != plan.Prompt("Order toothpaste", its, 0) {
		t.Fatalf("plan: %+v", h)
	}
	small, err := c.Plan(ctx, "run_amz", 30)
	if err != nil || small.Render.Full == 2 || small.Prompt != plan.Prompt("Order toothpaste", its, 30) {
		t.Fatalf("plan with a budget: %+v, %v", small.Render, err)
	}

	// A run the registry does not hold takes no iteration.
	if _, err := c.AddIteration(ctx, "orphan", it1); !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "orphan") {
		t.Fatalf("add to an unregistered run: %v", err)
	}
	// A history without its run (an import's) is served, the task the
	// planner's.
	om := open(t)
	if _, err := om.Plans.Add(ctx, "orphan", it1); err != nil {
		t.Fatal(err)
	}
	oc := api.Local(api.Handler(om, api.Options{}), api.ClientOptions{})
	t.Cleanup(func() { oc.Close() })
	if h, err := oc.Plan(ctx, "orphan", 0); err != nil || h.Task != "the planner's task" {
		t.Fatalf("orphan plan: %+v, %v", h, err)
	}

	hh := api.Handler(open(t), api.Options{})
	wantProblem(t, do(t, hh, "GET", "/v1/runs/nope/plan", "", ""), 404, "plan: no planner history for run nope")
	wantProblem(t, do(t, hh, "GET", "/v1/runs/nope/plan?budget=-1", "", ""), 400, "budget")
	wantProblem(t, do(t, hh, "GET", "/v1/runs/a%20b/plan", "", ""), 400, `run id "a b"`)
	if resp := do(t, hh, "POST", "/v1/runs", "application/json", `{"run_id": "r1", "goal": "x", "domain": "shop.example"}`); resp.StatusCode != 201 && resp.StatusCode != 200 {
		t.Fatalf("register r1: %d %s", resp.StatusCode, body(t, resp))
	}
	wantProblem(t, do(t, hh, "POST", "/v1/runs/r1/plan/iterations", "application/json", `{"plan": {}}`), 400, `unknown field "plan"`)
	wantProblem(t, do(t, hh, "POST", "/v1/runs/r1/plan/iterations", "application/json",
		`{"planner": {"user_task": "x"}, "tools": [{"tool": "click", "ok": false}]}`), 400, "invalid iteration: tools[0] (click): a failed tool execution needs its error")
}
