package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

var searchSteps = []trajectory.Step{
	{Action: "type", Role: "searchbox", Name: "Search", Selector: "#q", Value: "padel rackets", URL: "https://www.shop.example/", Verified: true},
	{Action: "press", Value: "Enter", Verified: true},
	{Action: "click", Role: "link", Name: "First result", URL: "https://www.shop.example/s?q=padel+rackets"},
}

func TestTrajectoryRoutes(t *testing.T) {
	ctx := context.Background()
	c, events := local(t, march12)

	got, err := c.RecordTrajectory(ctx, trajectory.Trajectory{Domain: "https://www.shop.example/", Goal: "Search padel rackets", Steps: searchSteps, DurationMs: 12000})
	if err != nil || got.ID == "" || got.Domain != "www.shop.example" || got.Template != "search {1}" || len(got.Params) != 1 || got.Runs != 1 {
		t.Fatalf("record: %+v, %v", got, err)
	}
	if want := march12.Add(trajectory.DefaultTTL); !got.ExpiresAt.Equal(want) {
		t.Fatalf("expires %v, want %v (the request's clock)", got.ExpiresAt, want)
	}
	if n := names(*events); len(n) != 1 || n[0] != trajectory.EventRecorded {
		t.Fatalf("events after record: %v", n)
	}
	again, err := c.RecordTrajectory(ctx, trajectory.Trajectory{Domain: "www.shop.example", Goal: "search squash balls",
		Steps: []trajectory.Step{{Action: "type", Selector: "#q", Value: "squash balls"}}})
	if err != nil || again.ID != got.ID || again.Runs != 2 {
		t.Fatalf("the same template again: %+v, %v; want %s replaced (2 runs)", again, err, got.ID)
	}
	if _, err := c.RecordTrajectory(ctx, trajectory.Trajectory{Domain: "news.example", Goal: "open the top 5 stories", Steps: []trajectory.Step{{Action: "click"}}}); err != nil {
		t.Fatal(err)
	}

	one, err := c.Trajectory(ctx, "shop.example", got.ID)
	if err != nil || one.Goal != "search squash balls" || len(one.Steps) != 1 {
		t.Fatalf("show: %+v, %v", one, err)
	}
	list, err := c.Trajectories(ctx, "shop.example")
	if err != nil || len(list.Trajectories) != 1 || list.Trajectories[0].ID != got.ID {
		t.Fatalf("list shop.example: %+v, %v", list, err)
	}
	if all, err := c.Trajectories(ctx, ""); err != nil || len(all.Trajectories) != 2 {
		t.Fatalf("list every site: %+v, %v", all, err)
	}

	*events = nil
	m, err := c.MatchTrajectory(ctx, api.MatchRequest{Domain: "shop.example", Goal: "search tennis balls"})
	if err != nil || m.Match == nil || m.Match.Trajectory.ID != got.ID || m.Match.Similarity != 1 || m.Threshold != trajectory.DefaultThreshold {
		t.Fatalf("match: %+v, %v", m, err)
	}
	if m.Match.Steps[0].Value != "tennis balls" || len(m.Match.Bindings) != 1 || !m.Match.Bindings[0].Bound {
		t.Fatalf("match: the steps are not bound for the new goal: %+v", m.Match)
	}
	if n := names(*events); len(n) != 1 || n[0] != trajectory.EventMatched {
		t.Fatalf("events after match: %v", n)
	}
	if w, err := c.MatchTrajectory(ctx, api.MatchRequest{Domain: "shop.example", Goal: "search tennis balls", Weighted: true}); err != nil || w.Match == nil || w.Match.Score == w.Match.Similarity {
		t.Fatalf("weighted match: %+v, %v; want a blended score", w, err)
	}
	none, err := c.MatchTrajectory(ctx, api.MatchRequest{Domain: "shop.example", Goal: "cancel my order"})
	if err != nil || none.Match != nil || none.Threshold != trajectory.DefaultThreshold {
		t.Fatalf("no match: %+v, %v", none, err)
	}

	if err := c.RemoveTrajectory(ctx, "news.example", "traj_nope"); !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "no such trajectory") {
		t.Fatalf("remove an unknown id: %v; want not found", err)
	}
	if err := c.RemoveTrajectory(ctx, "shop.example", got.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Trajectory(ctx, "shop.example", got.ID); !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "no such trajectory") {
		t.Fatalf("show after remove: %v; want not found", err)
	}

	_, err = c.RecordTrajectory(ctx, trajectory.Trajectory{Domain: "shop.example", Goal: "x"})
	if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "a trajectory needs at least one step") {
		t.Fatalf("no steps: %v; want bad input", err)
	}
	_, err = c.MatchTrajectory(ctx, api.MatchRequest{Domain: "shop.example", Goal: " "})
	if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "the goal is empty") {
		t.Fatalf("empty goal: %v; want bad input", err)
	}
}

// TestTrajectoryMatchTraceTTL: trace_ttl_days on GET /v1/recall/trajectory
// leaves out trajectories recorded more than that many days ago, as on
// GET /v1/context.
func TestTrajectoryMatchTraceTTL(t *testing.T) {
	ctx := context.Background()
	h := api.Handler(open(t), api.Options{AllowClock: true})
	at := func(now time.Time) *api.LocalClient {
		c := api.Local(h, api.ClientOptions{Now: now})
		t.Cleanup(func() { c.Close() })
		return c
	}
	tenDaysAgo := march12.Add(-10 * 24 * time.Hour)
	old, err := at(tenDaysAgo).RecordTrajectory(ctx, trajectory.Trajectory{Domain: "shop.example", Goal: "search padel rackets", Steps: searchSteps})
	if err != nil {
		t.Fatal(err)
	}
	c := at(march12)
	for _, tc := range []struct {
		days int
		want string
	}{{0, old.ID}, {10, old.ID}, {9, ""}} {
		for _, weighted := range []bool{false, true} {
			m, err := c.MatchTrajectory(ctx, api.MatchRequest{Domain: "shop.example", Goal: "search tennis balls", Weighted: weighted, TraceTTLDays: tc.days})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if m.Match != nil {
				got = m.Match.Trajectory.ID
			}
			if got != tc.want {
				t.Errorf("trace_ttl_days=%d weighted=%v: matched %q, want %q", tc.days, weighted, got, tc.want)
			}
		}
	}
}

// TestTrajectoryExpiry: the request's clock decides what has expired.
func TestTrajectoryExpiry(t *testing.T) {
	ctx := context.Background()
	m := open(t)
	h := api.Handler(m, api.Options{AllowClock: true})
	at := func(now time.Time) *api.LocalClient {
		c := api.Local(h, api.ClientOptions{Now: now})
		t.Cleanup(func() { c.Close() })
		return c
	}
	got, err := at(march12).RecordTrajectory(ctx, trajectory.Trajectory{Domain: "shop.example", Goal: "search padel rackets", Steps: searchSteps})
	if err != nil {
		t.Fatal(err)
	}
	later := at(march12.Add(trajectory.DefaultTTL))
	if l, err := later.Trajectories(ctx, "shop.example"); err != nil || len(l.Trajectories) != 0 {
		t.Fatalf("list after expiry: %+v, %v", l, err)
	}
	if _, err := later.Trajectory(ctx, "shop.example", got.ID); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("show after expiry: %v; want not found", err)
	}
}

func TestTrajectoryRoutesOverHTTP(t *testing.T) {
	h := api.Handler(open(t), api.Options{})
	if b := body(t, do(t, h, "GET", "/v1/trajectories", "", "")); strings.TrimSpace(b) != `{"trajectories":[]}` {
		t.Fatalf("empty list: %s", b)
	}
	if b := body(t, do(t, h, "GET", "/v1/recall/trajectory?domain=shop.example&goal=x", "", "")); strings.TrimSpace(b) != `{"match":null,"threshold":0.5}` {
		t.Fatalf("no match: %s", b)
	}
	// Without a domain the id finds the trajectory (or does not).
	wantProblem(t, do(t, h, "GET", "/v1/trajectories/traj_1", "", ""), 404, "traj_1: no such trajectory")
	wantProblem(t, do(t, h, "DELETE", "/v1/trajectories/traj_1", "application/json", ""), 404, "traj_1: no such trajectory")
	wantProblem(t, do(t, h, "GET", "/v1/trajectories/traj_1?domain=http://", "", ""), 400, "domain")
	wantProblem(t, do(t, h, "GET", "/v1/trajectories/traj_1?domain=shop.example", "", ""), 404, "no such trajectory")
	wantProblem(t, do(t, h, "DELETE", "/v1/trajectories/traj_1?domain=shop.example", "application/json", ""), 404, "no such trajectory")
	wantProblem(t, do(t, h, "GET", "/v1/trajectories?domain=http://", "", ""), 400, "domain")
	wantProblem(t, do(t, h, "GET", "/v1/recall/trajectory?goal=x", "", ""), 400, "domain")
	wantProblem(t, do(t, h, "GET", "/v1/recall/trajectory?domain=shop.example&goal=x&weighted=maybe", "", ""), 400, "weighted")
	wantProblem(t, do(t, h, "GET", "/v1/recall/trajectory?domain=shop.example&goal=x&trace_ttl_days=-1", "", ""), 400, "trace_ttl_days")
	wantProblem(t, do(t, h, "POST", "/v1/trajectories", "application/json", `{"domain": "shop.example", "goal": "x", "steps": [{"acton": "click"}]}`), 400, `unknown field "acton"`)
	wantProblem(t, do(t, h, "POST", "/v1/trajectories", "application/json", `{"domain": "shop.example", "goal": "x", "steps": [{"action": "click"}, {"name": "Go"}]}`), 400, "step 2 has no action")

	// A trajectory may be larger than an ordinary body: its route takes
	// what the CLI takes from a steps file.
	big, err := json.Marshal(trajectory.Trajectory{Domain: "shop.example", Goal: "paste the essay",
		Steps: []trajectory.Step{{Action: "type", Value: strings.Repeat("x", api.MaxBody)}}})
	if err != nil {
		t.Fatal(err)
	}
	resp := do(t, h, "POST", "/v1/trajectories", "application/json", string(big))
	b := body(t, resp)
	if resp.StatusCode != 200 || !strings.Contains(b, `"id":"traj_`) {
		t.Fatalf("a trajectory over %d bytes: %d %.200s", api.MaxBody, resp.StatusCode, b)
	}
	resp = do(t, h, "POST", "/v1/trajectories", "application/json", `{"domain": "www.shop.example", "goal": "open the cart", "steps": [{"action": "click", "name": "Cart"}]}`)
	b = body(t, resp)
	var rec trajectory.Trajectory
	if err := json.Unmarshal([]byte(b), &rec); err != nil || resp.StatusCode != 200 {
		t.Fatalf("record: %d %s (%v)", resp.StatusCode, b, err)
	}
	resp = do(t, h, "GET", "/v1/trajectories/"+rec.ID, "", "")
	if got := body(t, resp); resp.StatusCode != 200 || !strings.Contains(got, `"goal":"open the cart"`) {
		t.Fatalf("get %s without a domain: %d %.200s", rec.ID, resp.StatusCode, got)
	}
	if resp := do(t, h, "DELETE", "/v1/trajectories/"+rec.ID, "application/json", ""); resp.StatusCode != 200 {
		t.Fatalf("delete %s without a domain: %d %s", rec.ID, resp.StatusCode, body(t, resp))
	}
	wantProblem(t, do(t, h, "GET", "/v1/trajectories/"+rec.ID, "", ""), 404, "no such trajectory")
}

// Only a successful run records a trajectory: a run the registry holds as
// finished without success is refused; a running, a completed or an
// unknown run id is not.
func TestTrajectoryOfAFailedRunIsRefused(t *testing.T) {
	ctx := context.Background()
	m := open(t)
	h := api.Handler(m, api.Options{})
	for id, success := range map[string]bool{"won": true, "lost": false} {
		if _, err := m.Runs.Start(ctx, run.Start{RunID: id, Goal: "x", Domain: "shop.example"}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Runs.Complete(ctx, id, run.Completion{Success: success}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Runs.Start(ctx, run.Start{RunID: "going", Goal: "x", Domain: "shop.example"}); err != nil {
		t.Fatal(err)
	}
	rec := func(id string) string {
		return `{"domain": "shop.example", "goal": "search padel rackets", "run_id": "` + id + `", "steps": [{"action": "click", "name": "Search"}]}`
	}
	wantProblem(t, do(t, h, "POST", "/v1/trajectories", "application/json", rec("lost")), 400, "run lost did not succeed: only a successful run records a trajectory")
	for _, id := range []string{"won", "going", "elsewhere"} {
		if resp := do(t, h, "POST", "/v1/trajectories", "application/json", rec(id)); resp.StatusCode != 200 {
			t.Fatalf("run %s: %d %s", id, resp.StatusCode, body(t, resp))
		}
	}
}
