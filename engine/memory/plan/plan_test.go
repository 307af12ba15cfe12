package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

var t0 = time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)

func newStore(t testing.TB) (*Store, kv.Store) {
	t.Helper()
	db := badgertest.Open(t)
	return New(db, Options{Now: func() time.Time { return t0 }}), db
}

func ok(tool, out string) ToolExecution {
	return ToolExecution{Tool: tool, OK: true, Output: json.RawMessage(out)}
}
func fail(tool, e string) ToolExecution { return ToolExecution{Tool: tool, Error: e} }

// seedIteration is iteration 1 of the iteration-memory design's example.
func seedIteration() Iteration {
	return Iteration{
		Planner: Output{
			UserTask:             "Open amazon.com and order Sensodyne toothpaste",
			ExecutionHistory:     "No actions have been taken yet. This is the initial state.",
			CurrentState:         "We are currently on https://dub.sh/browseros-launch.",
			ChallengesIdentified: "We are not on the correct website yet.",
			StepByStepReasoning:  "The first step must be to navigate to amazon.com.",
			ProposedActions:      []string{"Navigate to amazon.com"},
		},
		Tools: []ToolExecution{
			ok("navigate", `"Successfully navigated to https://www.amazon.com"`),
			fail("visual_type", "Vision API key not provided."),
			ok("type", `"Successfully typed \"Sensodyne toothpaste\" into element 1 "`),
			fail("visual_click", "Vision API key not provided."),
			ok("key", `"Pressed Enter key"`),
		},
		Observations: 1,
		StartedAt:    t0,
		EndedAt:      t0.Add(4 * time.Second),
	}
}

func TestAddGetAndRenderSeedExample(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	it, err := s.Add(ctx, "run_1", seedIteration())
	if err != nil {
		t.Fatal(err)
	}
	if it.N != 1 {
		t.Fatalf("first iteration numbered %d", it.N)
	}
	second := Iteration{
		Planner: Output{UserTask: "Open amazon.com and order Sensodyne toothpaste", ProposedActions: []string{"Wait", "Extract"},
			TodoMarkdown: "- [x] search\n- [ ] pick", TaskComplete: true, FinalAnswer: "done"},
		Tools:     []ToolExecution{ok("extract", ` {"products": [] } `)},
		StartedAt: t0.Add(5 * time.Second), EndedAt: t0.Add(12500 * time.Millisecond), Observations: 2,
	}
	if _, err := s.Add(ctx, "run_1", second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, "run_1", Iteration{N: 5}); !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "next iteration of run run_1 is 3") {
		t.Fatalf("out-of-order number = %v", err)
	}
	its, err := s.Get(ctx, "run_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != 2 || its[1].N != 2 {
		t.Fatalf("got %d iterations", len(its))
	}
	if _, err := s.Get(ctx, "run_2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown run = %v", err)
	}
	text, rep := Render(its, 0)
	want := `=== ITERATION 1 ===
PLANNER OUTPUT:
- User Task: Open amazon.com and order Sensodyne toothpaste
- Execution History: No actions have been taken yet. This is the initial state.
- Current State: We are currently on https://dub.sh/browseros-launch.
- Challenges Identified: We are not on the correct website yet.
- Reasoning: The first step must be to navigate to amazon.com.
- Proposed Actions: Navigate to amazon.com

TOOL EXECUTIONS:
Tool: navigate - Result: {"ok":true,"output":"Successfully navigated to https://www.amazon.com"}
Tool: visual_type - Result: {"ok":false,"error":"Vision API key not provided."}
Tool: type - Result: {"ok":true,"output":"Successfully typed \"Sensodyne toothpaste\" into element 1 "}
Tool: visual_click - Result: {"ok":false,"error":"Vision API key not provided."}
Tool: key - Result: {"ok":true,"output":"Pressed Enter key"}

=== ITERATION 2 ===
PLANNER OUTPUT:
- User Task: Open amazon.com and order Sensodyne toothpaste
- Execution History: 
- Current State: 
- Challenges Identified: 
- Reasoning: 
- TODO Markdown: - [x] search
- [ ] pick
- Proposed Actions: Wait, Extract
- Task Complete: true
- Final Answer: done

TOOL EXECUTIONS:
Tool: extract - Result: {"ok":true,"output":{"products":[]}}`
	if text != want {
		t.Fatalf("Render =\n%s\n--- want\n%s", text, want)
	}
	if rep.Full != 2 || rep.Summarised != 0 || rep.Merged != 0 || !rep.Fits {
		t.Fatalf("report = %+v", rep)
	}
	m := ComputeMetrics(its)
	if m.ToolCalls != 6 || m.Errors != 2 || m.Observations != 3 || m.ElapsedMS != 12500 || m.HighErrorRate {
		t.Fatalf("metrics = %+v", m)
	}
	p := Prompt("Open amazon.com and order Sensodyne toothpaste", its, 0)
	if !strings.HasPrefix(p, "TASK: Open amazon.com and order Sensodyne toothpaste\nEXECUTION METRICS:\n- Tool calls: 6 (2 errors, 33.3% failure rate)\n- Observations taken: 3\n- Time elapsed: 12.5 seconds\n\nYOUR PREVIOUS STEPS DONE SO FAR (what you thought would work):\n=== ITERATION 1 ===\n") {
		t.Fatalf("prompt =\n%s", p)
	}
}

func TestNoToolExecutions(t *testing.T) {
	text, _ := Render([]Iteration{{N: 1, Planner: Output{UserTask: "t"}}}, 0)
	if !strings.HasSuffix(text, "- Proposed Actions: \n\nNo tool executions") {
		t.Fatalf("Render =\n%s", text)
	}
}

// calls builds one iteration with oks successful and fails failed tool
// calls.
func calls(oks, fails int) []Iteration {
	var ts []ToolExecution
	for range oks {
		ts = append(ts, ok("click", `"ok"`))
	}
	for range fails {
		ts = append(ts, fail("click", "not found"))
	}
	return []Iteration{{N: 1, Tools: ts}}
}

// The warning follows the integer failure rate, the printed one-decimal
// rate with its decimals dropped: above 30 warns, 30.x does not.
func TestHighErrorRateThreshold(t *testing.T) {
	for _, tc := range []struct {
		oks, fails int
		printed    string
		high       bool
	}{
		{19, 8, "29.6", false},  // 29.6 %
		{21, 9, "30.0", false},  // 30 %: not above
		{30, 13, "30.2", false}, // 30.2 %: its integer rate is 30
		{9, 4, "30.8", false},   // 30.8 %
		{18, 8, "30.8", false},  // 30.8 % with more calls
		{20, 9, "31.0", true},   // 31.0 %
		{136, 61, "31.0", true}, // 30.96 % prints 31.0, and 31 is above 30
		{6, 4, "40.0", true},    // 40 %, 4 errors
		{2, 3, "60.0", false},   // 60 % but only 3 errors
		{0, 0, "0", false},      // no tool calls yet
	} {
		m := ComputeMetrics(calls(tc.oks, tc.fails))
		if m.HighErrorRate != tc.high || m.RateText() != tc.printed {
			t.Errorf("%d ok, %d failed: high = %v, printed %q (rate %.2f)", tc.oks, tc.fails, m.HighErrorRate, m.RateText(), m.ErrorRate)
		}
		r := m.Render()
		if !strings.Contains(r, fmt.Sprintf("(%d errors, %s%% failure rate)\n", tc.fails, tc.printed)) {
			t.Errorf("%d ok, %d failed: rate line:\n%s", tc.oks, tc.fails, r)
		}
		if strings.Contains(r, HighErrorRateWarning) != m.HighErrorRate {
			t.Errorf("%d ok, %d failed: warning line does not match the flag:\n%s", tc.oks, tc.fails, r)
		}
	}
	// 13 failures in 43 calls: no high error rate, but that many failures
	// are many attempts.
	want := "EXECUTION METRICS:\n- Tool calls: 43 (13 errors, 30.2% failure rate)\n- Observations taken: 0\n- Time elapsed: 0.0 seconds\n" + ManyAttemptsWarning + "\n"
	if got := ComputeMetrics(calls(30, 13)).Render(); got != want {
		t.Fatalf("13 of 43 failed:\n%s--- want\n%s", got, want)
	}
}

// MANY ATTEMPTS: more than 10 tool calls with more than 5 failed, whatever
// the rate.
func TestManyAttempts(t *testing.T) {
	for _, tc := range []struct {
		oks, fails int
		many, high bool
	}{
		{4, 6, false, true},   // 10 calls: not more than 10
		{5, 6, true, true},    // 11 calls, 6 failed
		{6, 5, false, true},   // 11 calls, 5 failed: not more than 5
		{14, 6, true, false},  // 20 calls, 6 failed: 30 %, a loop but no high rate
		{100, 6, true, false}, // 5.7 %
		{3, 3, false, false},
	} {
		m := ComputeMetrics(calls(tc.oks, tc.fails))
		if m.ManyAttempts != tc.many || m.HighErrorRate != tc.high {
			t.Errorf("%d ok, %d failed: many = %v, high = %v", tc.oks, tc.fails, m.ManyAttempts, m.HighErrorRate)
		}
		r := m.Render()
		if strings.Contains(r, ManyAttemptsWarning+"\n") != tc.many {
			t.Errorf("%d ok, %d failed: MANY ATTEMPTS line does not match the flag:\n%s", tc.oks, tc.fails, r)
		}
		if tc.many && tc.high && strings.Index(r, HighErrorRateWarning) > strings.Index(r, ManyAttemptsWarning) {
			t.Errorf("the high error rate line should come first:\n%s", r)
		}
	}
}

// longHistory builds n iterations with long reasoning and tool outputs;
// iteration 2 hits a distinctive error.
func longHistory(n int) []Iteration {
	its := make([]Iteration, n)
	for i := range its {
		it := Iteration{
			N: i + 1,
			Planner: Output{
				UserTask:            "order toothpaste",
				CurrentState:        strings.Repeat(fmt.Sprintf("state %d ", i+1), 40),
				StepByStepReasoning: strings.Repeat("because reasons ", 60),
				ProposedActions:     []string{fmt.Sprintf("action-%d", i+1)},
			},
			Tools: []ToolExecution{ok("extract", `"`+strings.Repeat("x", 400)+`"`)},
		}
		if i == 1 {
			it.Tools = append(it.Tools, fail("visual_click", "Vision API key not provided."))
		}
		its[i] = it
	}
	return its
}

func TestBudgetSummarisesOldIterationsInsteadOfCutting(t *testing.T) {
	its := longHistory(30)
	fullText, fullRep := Render(its, 0)
	if fullRep.Full != 30 {
		t.Fatalf("unbounded render: %+v", fullRep)
	}
	prev := Tokens(fullText)
	for _, budget := range []int{prev / 2, prev / 4, 1500, 700, 400} {
		text, rep := Render(its, budget)
		if !rep.Fits || Tokens(text) > budget || rep.Tokens != Tokens(text) {
			t.Fatalf("budget %d: report %+v, %d tokens", budget, rep, Tokens(text))
		}
		if rep.Full+rep.Summarised+rep.Merged != 30 {
			t.Fatalf("budget %d: report does not account for every iteration: %+v", budget, rep)
		}
		// The newest iteration stays in full while budgets allow.
		if !strings.Contains(text, "=== ITERATION 30 ===\nPLANNER OUTPUT:") {
			t.Fatalf("budget %d: newest iteration not in full:\n%s", budget, text)
		}
		// Every older iteration is still represented, by itself or in a block.
		for i := 1; i < 30; i++ {
			if !strings.Contains(text, fmt.Sprintf("=== ITERATION %d ", i)) && !strings.Contains(text, fmt.Sprintf("=== ITERATION %d (", i)) && rep.Merged < i {
				t.Fatalf("budget %d: iteration %d vanished (report %+v)", budget, i, rep)
			}
		}
		if rep.Merged > 0 && !strings.Contains(text, fmt.Sprintf("=== ITERATIONS 1-%d (summarised) ===", rep.Merged)) {
			t.Fatalf("budget %d: no folded block for %d iterations:\n%s", budget, rep.Merged, text)
		}
		// The error of iteration 2 survives summarising.
		if !strings.Contains(text, "Vision API key not provided.") {
			t.Fatalf("budget %d: an old error was lost:\n%s", budget, text)
		}
		if len(text) >= len(fullText) {
			t.Fatalf("budget %d did not shrink the text", budget)
		}
	}
	// Summarising goes oldest first: with a budget that needs only a few
	// summaries, the first ones are summarised and the later ones are not.
	text, rep := Render(its, Tokens(fullText)-1000)
	if rep.Summarised == 0 || rep.Merged != 0 || !strings.Contains(text, "=== ITERATION 1 (summarised) ===") ||
		!strings.Contains(text, "=== ITERATION 29 ===\nPLANNER") {
		t.Fatalf("light budget: report %+v", rep)
	}
	if !strings.Contains(text, "- Tools: extract ok; visual_click FAILED: Vision API key not provided.") {
		t.Fatalf("summary of iteration 2 lost its tool results:\n%s", text[:2000])
	}
	// A budget too small for anything still represents the whole history.
	text, rep = Render(its, 20)
	if rep.Fits || rep.Merged != 30 || !strings.HasPrefix(text, "=== ITERATIONS 1-30 (summarised) ===\n- 31 tool calls, 1 failed") {
		t.Fatalf("tiny budget: %+v\n%s", rep, text)
	}
}

func TestValidation(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	for _, tc := range []struct {
		it   Iteration
		want string
	}{
		{Iteration{Tools: []ToolExecution{{OK: true}}}, "tools[0]: the tool name is empty"},
		{Iteration{Tools: []ToolExecution{{Tool: "click"}}}, "tools[0] (click): a failed tool execution needs its error"},
		{Iteration{Tools: []ToolExecution{{Tool: "click", OK: true, Error: "x"}}}, "ok but has an error"},
		{Iteration{Tools: []ToolExecution{{Tool: "x", OK: true, Output: json.RawMessage("{nope")}}}, "output is not JSON"},
		{Iteration{Observations: -1}, "observations -1 is negative"},
		{Iteration{StartedAt: t0.Add(time.Hour), EndedAt: t0}, "ended_at is before started_at"},
	} {
		if _, err := s.Add(ctx, "r", tc.it); !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%+v) = %v, want %q", tc.it, err, tc.want)
		}
	}
	if _, err := s.Add(ctx, " ", Iteration{}); !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("empty run id = %v", err)
	}
}

func TestConcurrentAddsNumberEachOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := s.Add(ctx, "r", Iteration{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	its, err := s.Get(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range its {
		if it.N != i+1 {
			t.Fatalf("iteration %d numbered %d", i, it.N)
		}
	}
	if len(its) != 20 {
		t.Fatalf("%d iterations, want 20", len(its))
	}
}

func TestExportImportAndDelete(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	for _, run := range []string{"run_b", "run/a"} {
		for range 3 {
			if _, err := s.Add(ctx, run, seedIteration()); err != nil {
				t.Fatal(err)
			}
		}
	}
	all, err := s.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].RunID != "run/a" || len(all[0].Iterations) != 3 {
		t.Fatalf("All = %+v", all)
	}
	s2, _ := newStore(t)
	p, err := s2.Prepare(all)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Import(ctx, p); err != nil {
		t.Fatal(err)
	}
	back, _ := s2.All(ctx)
	if !reflect.DeepEqual(back, all) {
		t.Fatalf("round trip differs")
	}
	bad := []History{{RunID: "x", Iterations: []Iteration{{N: 1}, {N: 3}}}}
	if _, err := s2.Prepare(bad); !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "plans[0] (x) iterations[1]") {
		t.Fatalf("bad numbering = %v", err)
	}
	if _, err := s2.Prepare([]History{{RunID: "x"}}); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("empty history = %v", err)
	}
	if err := s2.Delete(ctx, "run/a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Get(ctx, "run/a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if its, _ := s2.Get(ctx, "run_b"); len(its) != 3 {
		t.Fatal("delete removed another run's history")
	}
}
