package mcp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/plan"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/engine/server/mcp"
	"github.com/engine-dev/engine/engine/server/mcp/mcptest"
)

// connect serves memory in a fresh data dir on real badger through
// api.Local, and returns an MCP client session of mcp.New over it (the
// SDK's in-memory transports), with the API client and the runs folder.
func connect(t testing.TB) (*sdk.ClientSession, *api.Client, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	c := api.Local(api.Handler(m, api.Options{}), api.ClientOptions{})
	t.Cleanup(func() { c.Close() })
	runsDir := filepath.Join(dir, "runs")
	return session(t, mcp.New(c.Client, mcp.Options{Version: "test", RunsDir: runsDir})), c.Client, runsDir
}

// session connects an MCP client to srv over the SDK's in-memory
// transports; both ends close with the test.
func session(t testing.TB, srv *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestTools(t *testing.T) {
	cs, _, _ := connect(t)
	mcptest.Check(t, context.Background(), cs)
}

func TestFindTrajectory(t *testing.T) {
	ctx := context.Background()
	cs, c, _ := connect(t)
	if _, err := c.RecordTrajectory(ctx, trajectory.Trajectory{Domain: "shop.example", Goal: "add 2 padel rackets to the cart",
		Steps: []trajectory.Step{
			{Action: "navigate", URL: "https://shop.example/"},
			{Action: "type", Role: "textbox", Name: "Quantity", Value: "2", Selector: "#qty", Verified: true},
			{Action: "click", Role: "button", Name: "Add to cart", Verified: true},
		}}); err != nil {
		t.Fatal(err)
	}
	text, out := mcptest.OK(t, ctx, cs, "memory_find_trajectory", map[string]any{"goal": "add 3 padel rackets to the cart", "url": "https://shop.example/"},
		"Steps for your goal:\n1. navigate on https://shop.example/\n2. type textbox \"Quantity\" value \"3\" (selector #qty)\n3. click button \"Add to cart\"")
	if m, _ := out["match"].(map[string]any); m == nil || m["similarity"] == nil {
		t.Fatalf("structured match: %v\n%s", out, text)
	}
	mcptest.OK(t, ctx, cs, "memory_query", map[string]any{"kind": "trajectories"}, `on shop.example: "add 2 padel rackets to the cart", 3 steps`)
}

func TestRunResources(t *testing.T) {
	ctx := context.Background()
	cs, c, runsDir := connect(t)
	if _, err := c.CreateRun(ctx, api.CreateRun{RunID: "run_1", Goal: "buy a racket", StartURL: "https://shop.example/"}); err != nil {
		t.Fatal(err)
	}
	// No folder: the manifest, and a timeline that says why it is empty.
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "engine://runs/run_1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := rr.Contents[0].Text; !strings.Contains(got, "# Run run_1\n\n- goal: buy a racket\n- status: running\n- domain: shop.example") ||
		!strings.Contains(got, "the run left no action log") {
		t.Fatalf("run without folder:\n%s", got)
	}
	if err := os.MkdirAll(filepath.Join(runsDir, "run_1"), 0o755); err != nil {
		t.Fatal(err)
	}
	log := `{"step":1,"action":"click","ref":"e3","role":"button","name":"Checkout","ok":false,"error":"not visible","url":"https://shop.example/cart","screenshot":"error-step-01.png","lessons_shown":["l1"]}
{"step":2,"action":"scroll","ok":true,"url":"https://shop.example/cart","replayed":true}
{"step":3,"act`
	if err := os.WriteFile(filepath.Join(runsDir, "run_1", "actions.jsonl"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	rr, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "engine://runs/run_1"})
	if err != nil {
		t.Fatal(err)
	}
	want := "## Steps\n\n1. click button \"Checkout\": FAILED: not visible\n   on https://shop.example/cart\n   lessons shown: l1\n   screenshot: error-step-01.png\n2. scroll: ok [replayed]\n   on https://shop.example/cart"
	if got := rr.Contents[0].Text; !strings.HasSuffix(got, want) {
		t.Fatalf("timeline:\n%s\nwant suffix:\n%s", got, want)
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "engine://runs/..%2Fetc"}); err == nil || !strings.Contains(err.Error(), "run id") {
		t.Fatalf("a bad run id: %v", err)
	}

	// The planner history.
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "engine://runs/run_1/plan"}); err == nil || !strings.Contains(err.Error(), "run_1") {
		t.Fatalf("a run without a plan: %v", err)
	}
	day := time.Date(2026, 3, 12, 9, 0, 0, 0, time.UTC)
	if _, err := c.AddIteration(ctx, "run_1", plan.Iteration{Planner: plan.Output{UserTask: "buy a racket", ProposedActions: []string{"Navigate to the shop"}},
		Tools: []plan.ToolExecution{{Tool: "navigate", OK: true}}, StartedAt: day, EndedAt: day.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	rr, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "engine://runs/run_1/plan"})
	if err != nil {
		t.Fatal(err)
	}
	if got := rr.Contents[0].Text; !strings.HasPrefix(got, "# Planner history of run run_1\n\n") || !strings.Contains(got, "Navigate to the shop") {
		t.Fatalf("plan:\n%s", got)
	}
}

// BenchmarkRecallError is memory_recall_error through the SDK's in-memory
// transports over api.Local, on 200 lessons of the site: the MCP part of
// the stdio round trip without the pipes and the process.
func BenchmarkRecallError(b *testing.B) {
	ctx := context.Background()
	cs, c, _ := connect(b)
	for i := range 200 {
		if _, err := c.RecordLesson(ctx, lesson.Lesson{Lesson: "scroll first", Category: "site_specific", FailedCommand: "click", Source: lesson.SourceLearned,
			ErrorPattern: "not visible " + string(rune('a'+i%26)) + string(rune('a'+i/26)), Domain: "shop.example"}); err != nil {
			b.Fatal(err)
		}
	}
	args := map[string]any{"command": "click e12", "error": "element not visible ab", "domain": "shop.example"}
	b.Run("api", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.RecallError(ctx, "click e12", "element not visible ab", "shop.example"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mcp", func(b *testing.B) {
		for b.Loop() {
			if res := mcptest.Call(b, ctx, cs, "memory_recall_error", args); res.IsError {
				b.Fatal(mcptest.Text(b, res))
			}
		}
	})
}

// TestFindTrajectoryTraceScoring: memory_find_trajectory's weighted and
// trace_ttl_days pick the reference trajectory as GET
// /v1/recall/trajectory's do, and bad values get the API's errors.
func TestFindTrajectoryTraceScoring(t *testing.T) {
	ctx := context.Background()
	m, err := memory.Open(ctx, t.TempDir(), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	h := api.Handler(m, api.Options{AllowClock: true})
	at := func(now time.Time) *api.LocalClient {
		c := api.Local(h, api.ClientOptions{Now: now})
		t.Cleanup(func() { c.Close() })
		return c
	}
	today := time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC)
	search := func(verified bool) []trajectory.Step {
		return []trajectory.Step{{Action: "click", Role: "textbox", Name: "Search", Verified: verified},
			{Action: "click", Role: "button", Name: "Search", Verified: verified}}
	}
	// An exact match, 25 days old, slow and unverified; a near one (7/8),
	// recorded today, fast and verified.
	if _, err := at(today.AddDate(0, 0, -25)).RecordTrajectory(ctx, trajectory.Trajectory{Domain: "shop.example",
		Goal: "search for padel and open the first result", Steps: search(false), DurationMs: 600000}); err != nil {
		t.Fatal(err)
	}
	if _, err := at(today).RecordTrajectory(ctx, trajectory.Trajectory{Domain: "shop.example",
		Goal: "search for padel and open the result", Steps: search(true), DurationMs: 5000}); err != nil {
		t.Fatal(err)
	}
	cs := session(t, mcp.New(at(today).Client, mcp.Options{Version: "test"}))

	goal := "search for padel and open the first result"
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, `goal "search for padel and open the first result", similarity 1.00)`},
		{map[string]any{"weighted": false}, `goal "search for padel and open the first result", similarity 1.00)`},
		// 0.6·0.875 + 0.2 + 0.1·0.923 + 0.1 = 0.917 beats 0.6 + 0.2·exp(-25/14) + 0.1·(1/11) = 0.643.
		{map[string]any{"weighted": true}, `goal "search for padel and open the result", similarity 0.88, weighted score 0.92)`},
		{map[string]any{"trace_ttl_days": 14}, `goal "search for padel and open the result", similarity 0.88)`},
		{map[string]any{"trace_ttl_days": 30}, `goal "search for padel and open the first result", similarity 1.00)`},
	} {
		tc.args["goal"], tc.args["url"] = goal, "https://shop.example/"
		mcptest.OK(t, ctx, cs, "memory_find_trajectory", tc.args, tc.want)
		// memory_context ranks its reference trajectory the same way.
		ctxArgs := map[string]any{"goal": goal, "url": "https://shop.example/"}
		for _, k := range []string{"weighted", "trace_ttl_days"} {
			if v, ok := tc.args[k]; ok {
				ctxArgs[k] = v
			}
		}
		want := strings.SplitN(strings.TrimPrefix(tc.want, "goal "), ",", 2)[0]
		mcptest.OK(t, ctx, cs, "memory_context", ctxArgs, "Goal: "+want)
	}

	// Bad values: the API's errors, from the API's parsing.
	for _, tool := range []string{"memory_find_trajectory", "memory_context"} {
		for _, ttl := range []int{-1, 36501} {
			res := mcptest.Call(t, ctx, cs, tool, map[string]any{"goal": goal, "url": "shop.example", "trace_ttl_days": ttl})
			if text := mcptest.Text(t, res); !res.IsError || !strings.Contains(text, fmt.Sprintf(`trace_ttl_days="%d": want a number from 0 to 36500`, ttl)) {
				t.Errorf("%s trace_ttl_days=%d: IsError=%v %q", tool, ttl, res.IsError, text)
			}
		}
		res := mcptest.Call(t, ctx, cs, tool, map[string]any{"goal": goal, "url": "shop.example", "weighted": "maybe"})
		if text := mcptest.Text(t, res); !res.IsError || !strings.Contains(text, "weighted") {
			t.Errorf("%s weighted=maybe: IsError=%v %q; want an error naming weighted", tool, res.IsError, text)
		}
	}
}
