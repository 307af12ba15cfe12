package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Tokens estimates the tokens of s: one per four characters, rounded up.
func Tokens(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }

// Metrics are the execution metrics of the planner's user prompt.
type Metrics struct {
	ToolCalls    int     `json:"tool_calls"`
	Errors       int     `json:"errors"`
	ErrorRate    float64 `json:"error_rate"` // percent of tool calls that failed
	Observations int     `json:"observations"`
	ElapsedMS    int64   `json:"elapsed_ms"` // first iteration's start to last one's end
	// HighErrorRate is set when the integer failure rate (the rate as
	// printed, to one decimal, with the decimals dropped) is above 30 and
	// more than 3 tool calls failed: 13 failures in 43 calls (30.2 %) do
	// not warn.
	HighErrorRate bool `json:"high_error_rate"`
	// ManyAttempts is set when more than 10 tool calls were made and more
	// than 5 of them failed: the planner may be stuck in a loop.
	ManyAttempts bool `json:"many_attempts"`
}

// HighErrorRateWarning is the line the planner's prompt carries when
// Metrics.HighErrorRate is set.
const HighErrorRateWarning = "⚠️ HIGH ERROR RATE - Current approach may be failing. Learn from the past execution history and adapt your approach"

// ManyAttemptsWarning is the line the planner's prompt carries when
// Metrics.ManyAttempts is set.
const ManyAttemptsWarning = "⚠️ MANY ATTEMPTS - May be stuck in a loop"

// The warning thresholds of the planner-history design.
const (
	highErrorRatePercent = 30 // integer failure rate above this warns...
	highErrorRateErrors  = 3  // ...when more tool calls than this failed
	manyAttemptsCalls    = 10 // more tool calls than this...
	manyAttemptsErrors   = 5  // ...with more failures than this
)

// rateTenths is the failure rate in tenths of a percent, rounded half up
// as the design prints it (toFixed(1)), from the exact counts.
func rateTenths(errors, calls int) int {
	if calls <= 0 {
		return 0
	}
	return (errors*2000 + calls) / (2 * calls)
}

// RateText is the failure rate as the prompt prints it: one decimal, or
// "0" before any tool call.
func (m Metrics) RateText() string {
	if m.ToolCalls <= 0 {
		return "0"
	}
	t := rateTenths(m.Errors, m.ToolCalls)
	return fmt.Sprintf("%d.%d", t/10, t%10)
}

// ComputeMetrics sums a history's tool calls, errors and observations and
// measures its elapsed time.
func ComputeMetrics(its []Iteration) Metrics {
	var m Metrics
	var first, last time.Time
	for _, it := range its {
		m.ToolCalls += len(it.Tools)
		m.Errors += errorsIn(it.Tools)
		m.Observations += it.Observations
		if !it.StartedAt.IsZero() && (first.IsZero() || it.StartedAt.Before(first)) {
			first = it.StartedAt
		}
		if it.EndedAt.After(last) {
			last = it.EndedAt
		}
	}
	if m.ToolCalls > 0 {
		m.ErrorRate = float64(m.Errors) * 100 / float64(m.ToolCalls)
	}
	if !first.IsZero() && last.After(first) {
		m.ElapsedMS = last.Sub(first).Milliseconds()
	}
	m.HighErrorRate = rateTenths(m.Errors, m.ToolCalls)/10 > highErrorRatePercent && m.Errors > highErrorRateErrors
	m.ManyAttempts = m.ToolCalls > manyAttemptsCalls && m.Errors > manyAttemptsErrors
	return m
}

// Render writes the metrics block of the planner's user prompt.
func (m Metrics) Render() string {
	var b strings.Builder
	b.WriteString("EXECUTION METRICS:\n")
	fmt.Fprintf(&b, "- Tool calls: %d (%d errors, %s%% failure rate)\n", m.ToolCalls, m.Errors, m.RateText())
	fmt.Fprintf(&b, "- Observations taken: %d\n", m.Observations)
	fmt.Fprintf(&b, "- Time elapsed: %.1f seconds\n", float64(m.ElapsedMS)/1000)
	if m.HighErrorRate {
		b.WriteString(HighErrorRateWarning + "\n")
	}
	if m.ManyAttempts {
		b.WriteString(ManyAttemptsWarning + "\n")
	}
	return b.String()
}

// Prompt writes the history part of the planner's user prompt: the task,
// the metrics and the iteration history within maxTokens for the history
// (0 for no limit).
func Prompt(task string, its []Iteration, maxTokens int) string {
	hist, _ := Render(its, maxTokens)
	if hist == "" {
		hist = "No iterations yet."
	}
	return "TASK: " + task + "\n" + ComputeMetrics(its).Render() +
		"\nYOUR PREVIOUS STEPS DONE SO FAR (what you thought would work):\n" + hist + "\n"
}

// Report says how Render fitted a history into its budget.
type Report struct {
	Iterations int `json:"iterations"`
	// Full, Summarised and Merged count the iterations rendered in full,
	// as a short summary each, and folded into one block of totals.
	Full       int  `json:"full"`
	Summarised int  `json:"summarised"`
	Merged     int  `json:"merged"`
	Clipped    bool `json:"clipped"` // the newest iteration's long values were clipped
	Tokens     int  `json:"tokens"`
	Fits       bool `json:"fits"`
}

// Render writes a history as the planner reads it, one "=== ITERATION N ==="
// section per iteration, within maxTokens (0: no limit).
//
// Over budget, it summarises instead of cutting: first the oldest
// iterations become short summaries (their proposed actions and each
// tool's name and ok/error, errors kept because they are what the planner
// learns from), oldest first, the newest staying in full; then the oldest
// summaries fold into one "=== ITERATIONS 1-K ===" block of totals and
// distinct errors; then the newest iteration's long values are clipped;
// last, the newest is summarised too and then folded. Every iteration
// stays represented. The report says what was done and whether it fits.
func Render(its []Iteration, maxTokens int) (string, Report) {
	n := len(its)
	rep := Report{Iterations: n}
	if n == 0 {
		return "", Report{Fits: true}
	}
	full := make([]string, n)
	for i, it := range its {
		full[i] = renderFull(it, 0)
	}
	if maxTokens <= 0 {
		s := strings.Join(full, "\n\n")
		return s, Report{Iterations: n, Full: n, Tokens: Tokens(s), Fits: true}
	}
	short := make([]string, n)
	for i, it := range its {
		short[i] = renderShort(it)
	}
	// compose joins: iterations [0,m) folded, [m,c) short, [c,n) full, with
	// the newest replaced by last when it is not "".
	compose := func(m, c int, last string) string {
		var parts []string
		if m > 0 {
			parts = append(parts, renderBlock(its[:m]))
		}
		parts = append(parts, short[m:c]...)
		parts = append(parts, full[c:]...)
		if last != "" && c < n {
			parts[len(parts)-1] = last
		}
		return strings.Join(parts, "\n\n")
	}
	fits := func(s string) bool { return Tokens(s) <= maxTokens }
	done := func(s string, m, c int, clipped bool) (string, Report) {
		rep.Merged, rep.Summarised, rep.Full = m, c-m, n-c
		rep.Clipped = clipped
		rep.Tokens = Tokens(s)
		rep.Fits = fits(s)
		return s, rep
	}
	// 1. Everything in full; 2. summarise the oldest, newest stays full.
	// Sizes come from prefix sums of the parts' lengths, not re-rendering.
	shortSum := make([]int, n+1) // runes of short[:i], each with its "\n\n"
	fullSum := make([]int, n+1)
	for i := range n {
		shortSum[i+1] = shortSum[i] + utf8.RuneCountInString(short[i]) + 2
		fullSum[i+1] = fullSum[i] + utf8.RuneCountInString(full[i]) + 2
	}
	size := func(m, c int) int {
		t := shortSum[c] - shortSum[m] + fullSum[n] - fullSum[c]
		if m > 0 {
			t += utf8.RuneCountInString(renderBlock(its[:m])) + 2
		}
		return (t - 2 + 3) / 4
	}
	within := func(m, c int) bool { return size(m, c) <= maxTokens }
	for c := 0; c < n; c++ {
		if within(0, c) {
			return done(compose(0, c, ""), 0, c, false)
		}
	}
	// 3. Fold the oldest summaries into one block.
	for m := 1; m < n; m++ {
		if within(m, n-1) {
			return done(compose(m, n-1, ""), m, n-1, false)
		}
	}
	// 4. Clip the newest iteration's long values.
	clipped := renderFull(its[n-1], 300)
	if s := compose(n-1, n-1, clipped); fits(s) {
		return done(s, n-1, n-1, true)
	}
	// 5. Summarise the newest too; 6. fold everything.
	if s := compose(n-1, n, ""); fits(s) {
		return done(s, n-1, n, false)
	}
	return done(compose(n, n, ""), n, n, false)
}

// renderFull renders one iteration as the design's template; clip > 0
// clips each value to that many characters.
func renderFull(it Iteration, clip int) string {
	c := func(s string) string {
		if clip > 0 {
			return clipText(s, clip)
		}
		return s
	}
	p := it.Planner
	var b strings.Builder
	fmt.Fprintf(&b, "=== ITERATION %d ===\n", it.N)
	b.WriteString("PLANNER OUTPUT:\n")
	fmt.Fprintf(&b, "- User Task: %s\n", c(p.UserTask))
	fmt.Fprintf(&b, "- Execution History: %s\n", c(p.ExecutionHistory))
	fmt.Fprintf(&b, "- Current State: %s\n", c(p.CurrentState))
	fmt.Fprintf(&b, "- Challenges Identified: %s\n", c(p.ChallengesIdentified))
	fmt.Fprintf(&b, "- Reasoning: %s\n", c(p.StepByStepReasoning))
	if p.TodoMarkdown != "" {
		fmt.Fprintf(&b, "- TODO Markdown: %s\n", c(p.TodoMarkdown))
	}
	fmt.Fprintf(&b, "- Proposed Actions: %s", c(strings.Join(p.ProposedActions, ", ")))
	if p.TaskComplete {
		fmt.Fprintf(&b, "\n- Task Complete: true\n- Final Answer: %s", c(p.FinalAnswer))
	}
	b.WriteString("\n\n")
	if len(it.Tools) == 0 {
		b.WriteString("No tool executions")
		return b.String()
	}
	b.WriteString("TOOL EXECUTIONS:")
	for _, t := range it.Tools {
		fmt.Fprintf(&b, "\nTool: %s - Result: %s", t.Tool, c(result(t)))
	}
	return b.String()
}

// result renders a tool execution's result as the design does:
// {"ok":true,"output":...} or {"ok":false,"error":"..."}.
func result(t ToolExecution) string {
	if !t.OK {
		return `{"ok":false,"error":` + jsonString(t.Error) + `}`
	}
	if len(t.Output) == 0 {
		return `{"ok":true}`
	}
	return `{"ok":true,"output":` + string(t.Output) + `}`
}

func jsonString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

// renderShort summarises one iteration: what it proposed and how each tool
// call went.
func renderShort(it Iteration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "=== ITERATION %d (summarised) ===\n", it.N)
	fmt.Fprintf(&b, "- Proposed Actions: %s\n", clipText(strings.Join(it.Planner.ProposedActions, ", "), 200))
	if it.Planner.TaskComplete {
		fmt.Fprintf(&b, "- Task Complete: %s\n", clipText(it.Planner.FinalAnswer, 200))
	}
	if len(it.Tools) == 0 {
		b.WriteString("- Tools: none")
		return b.String()
	}
	calls := make([]string, len(it.Tools))
	for i, t := range it.Tools {
		if t.OK {
			calls[i] = t.Tool + " ok"
		} else {
			calls[i] = t.Tool + " FAILED: " + clipText(oneLine(t.Error), 120)
		}
	}
	b.WriteString("- Tools: " + strings.Join(calls, "; "))
	return b.String()
}

// renderBlock folds iterations into one block of totals, tools used and
// distinct errors.
func renderBlock(its []Iteration) string {
	m := ComputeMetrics(its)
	var b strings.Builder
	if len(its) == 1 {
		fmt.Fprintf(&b, "=== ITERATION %d (summarised) ===\n", its[0].N)
	} else {
		fmt.Fprintf(&b, "=== ITERATIONS %d-%d (summarised) ===\n", its[0].N, its[len(its)-1].N)
	}
	fmt.Fprintf(&b, "- %d tool calls, %d failed", m.ToolCalls, m.Errors)
	type count struct {
		what string
		n    int
	}
	tally := func(keys []string) []count {
		idx := map[string]int{}
		var cs []count
		for _, k := range keys {
			if j, ok := idx[k]; ok {
				cs[j].n++
				continue
			}
			idx[k] = len(cs)
			cs = append(cs, count{k, 1})
		}
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].n > cs[j].n })
		return cs
	}
	var tools, errs []string
	for _, it := range its {
		for _, t := range it.Tools {
			tools = append(tools, t.Tool)
			if !t.OK {
				errs = append(errs, t.Tool+": "+clipText(oneLine(t.Error), 80))
			}
		}
	}
	list := func(cs []count, max int) string {
		var parts []string
		for i, c := range cs {
			if i == max {
				parts = append(parts, fmt.Sprintf("and %d more", len(cs)-max))
				break
			}
			if c.n > 1 {
				parts = append(parts, fmt.Sprintf("%s (x%d)", c.what, c.n))
			} else {
				parts = append(parts, c.what)
			}
		}
		return strings.Join(parts, ", ")
	}
	if len(tools) > 0 {
		b.WriteString("\n- Tools used: " + list(tally(tools), 8))
	}
	if len(errs) > 0 {
		b.WriteString("\n- Errors: " + list(tally(errs), 5))
	}
	for i := len(its) - 1; i >= 0; i-- {
		if its[i].Planner.TaskComplete {
			fmt.Fprintf(&b, "\n- Task completed in iteration %d: %s", its[i].N, clipText(its[i].Planner.FinalAnswer, 200))
			break
		}
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
