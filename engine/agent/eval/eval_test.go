package eval

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// memoryRun is a run that treats its data dir as memory: it reads what
// the runs before it left in memory.log and appends its own arm, and makes
// fewer errors the more runs it remembers (none when told not to read).
type memoryRun struct {
	mu    sync.Mutex
	calls []string
	seen  map[string]string // run → memory it found
	fail  int               // the call that cannot be made (from 1), 0 for none
}

func (m *memoryRun) run(_ context.Context, r Run) (Outcome, error) {
	id := r.Case.Name + "/" + string(r.Arm)
	if r.Changed {
		id += ChangedSuffix
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, id)
	if m.fail == len(m.calls) {
		return Outcome{}, errors.New("browser did not start")
	}
	path := filepath.Join(r.DataDir, "memory.log")
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Outcome{}, err
	}
	if m.seen == nil {
		m.seen = map[string]string{}
	}
	m.seen[id+"/"+string(rune('0'+r.Repeat))] = strings.TrimSpace(string(b))
	known := strings.Count(string(b), "\n")
	if r.NoMemory {
		known = 0
	} else if err := os.WriteFile(path, append(b, []byte(string(r.Arm)+"\n")...), 0o644); err != nil {
		return Outcome{}, err
	}
	errs := max(0, 2-known)
	o := Outcome{Status: "completed", Success: true, Steps: 4 + errs, Errors: errs, LLMCalls: 4 + errs, Tokens: 100 * (4 + errs), RunID: "run-" + id}
	if r.Replay {
		o.LLMCalls, o.Tokens = 0, 0
	}
	return o, nil
}

func testConfig(t *testing.T, m *memoryRun) Config {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.json")
	if err := os.WriteFile(rules, []byte(`{"rules": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var clock time.Time
	return Config{
		Cases: []Case{
			{Name: "search", Goal: "search for padel", URL: "http://127.0.0.1:1/", Rules: rules},
			{Name: "checkout", Goal: "buy a racket", URL: "http://127.0.0.1:1/", Rules: rules},
		},
		Arms: AllArms, Repeats: 2, WarmRuns: 2, Out: filepath.Join(dir, "out"),
		LLM: "scripted", Browser: "static", Scripted: true, Run: m.run,
		Clock: func() time.Time { clock = clock.Add(250 * time.Millisecond); return clock },
	}
}

// A sequence runs no-memory, cold, the warm runs and replay, each in a
// data dir of its own: warm starts from what cold (and the warm run
// before) left, replay from what cold left, no-memory and cold from
// nothing; cases and repeats never share memory.
func TestEvalSequencesKeepMemoryApart(t *testing.T) {
	m := &memoryRun{}
	cfg := testConfig(t, m)
	rep, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.calls) != 2*2*5 {
		t.Fatalf("%d runs, want 20: %v", len(m.calls), m.calls)
	}
	if got := strings.Join(m.calls[:5], " "); got != "search/no-memory search/cold search/warm search/warm search/replay" {
		t.Errorf("sequence order: %s", got)
	}
	for _, cs := range []string{"search", "checkout"} {
		for _, r := range "12" {
			want := map[string]string{"no-memory": "", "cold": "", "replay": "cold"}
			for arm, mem := range want {
				if got := m.seen[cs+"/"+arm+"/"+string(r)]; got != mem {
					t.Errorf("%s r%c %s found memory %q, want %q", cs, r, arm, got, mem)
				}
			}
		}
	}
	// The second warm run (the last call of "warm" in a sequence) found
	// cold and the first warm run.
	b, err := os.ReadFile(filepath.Join(cfg.Out, "memory", "search", "r2", "warm-2", "memory.log"))
	if err != nil || string(b) != "cold\nwarm\nwarm\n" {
		t.Errorf("warm-2 memory %q (%v)", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(cfg.Out, "memory", "search", "r1", "cold", "memory.log")); err != nil || string(b) != "cold\n" {
		t.Errorf("cold memory %q (%v): a later run changed it", b, err)
	}

	if rep.Note != ScriptedNote || len(rep.Arms) != 4 || rep.Arms[2].Name != Warm || len(rep.Arms[2].Runs) != 8 {
		t.Fatalf("report: note %q, arms %+v", rep.Note, rep.Arms)
	}
	if e, _ := rep.Mean(NoMemory, "errors"); e != 2 {
		t.Errorf("no-memory errors %v, want 2", e)
	}
	if e, _ := rep.Mean(Warm, "errors"); e != 0.5 { // warm-1 remembers 1 run (1 error), warm-2 two (0)
		t.Errorf("warm errors %v, want 0.5", e)
	}
	if w, _ := rep.Mean(Cold, "wall_ms"); w != 250 {
		t.Errorf("wall_ms %v, want the clock's 250", w)
	}
	var warm Comparison
	for _, c := range rep.Comparisons {
		if c.Arm == Warm {
			warm = c
		}
	}
	d := warm.Metrics["errors"]
	if warm.Cases != 2 || d.RelativeChange != -0.75 || d.P != 0.5 || !d.Exact {
		t.Errorf("warm vs no-memory errors: %+v (cases %d)", d, warm.Cases)
	}
}

// Run again on the same output dir, an evaluation makes only the runs its
// log lacks: none after a whole one; after a run that could not be made,
// that run and those after it.
func TestEvalResumes(t *testing.T) {
	m := &memoryRun{fail: 7}
	cfg := testConfig(t, m)
	rep, err := Eval(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "browser did not start") || !strings.Contains(err.Error(), "case checkout, repeat 1, cold run") {
		t.Fatalf("err = %v", err)
	}
	if n := len(rep.Arms[0].Runs) + len(rep.Arms[1].Runs); n != 3 {
		t.Errorf("the report of a stopped evaluation holds %d no-memory and cold runs, want 3", n)
	}
	m2 := &memoryRun{}
	cfg.Run = m2.run
	if _, err := Eval(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if len(m2.calls) != 20-6 || m2.calls[0] != "checkout/cold" {
		t.Errorf("resumed with %d runs from %v, want 14 from checkout/cold", len(m2.calls), m2.calls)
	}
	m3 := &memoryRun{}
	cfg.Run = m3.run
	rep, err = Eval(context.Background(), cfg)
	if err != nil || len(m3.calls) != 0 {
		t.Fatalf("a whole evaluation again: %d runs (%v)", len(m3.calls), err)
	}
	if len(rep.Arms[2].Runs) != 8 {
		t.Errorf("warm runs in the report: %d", len(rep.Arms[2].Runs))
	}

	// Another model on the same output dir is refused, naming the case.
	cfg.LLM = "openai:gpt-4o-mini"
	if _, err := Eval(context.Background(), cfg); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), `case "search" with llm "scripted", not "openai:gpt-4o-mini"`) {
		t.Errorf("another llm: %v", err)
	}
	cfg.LLM = "scripted"
	if err := os.WriteFile(cfg.Cases[0].Rules, []byte(`{"rules": [{"last_contains": "x"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Eval(context.Background(), cfg); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "rules changed") {
		t.Errorf("changed rules: %v", err)
	}
}

// A run cut short by a crash leaves half a line: that run is not done. A
// bad line before the last is an error naming it.
func TestReadLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LogFile)
	good := `{"case":"a","arm":"cold","repeat":1,"index":1,"status":"completed","success":true}`
	if err := os.WriteFile(path, []byte(good+"\n"+`{"case":"a","arm":"warm","rep`), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadLog(path)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%v, %v", recs, err)
	}
	if err := os.WriteFile(path, []byte("garbage\n"+good+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLog(path); err == nil || !strings.Contains(err.Error(), LogFile+":1:") {
		t.Errorf("bad first line: %v", err)
	}
	if recs, err := ReadLog(filepath.Join(dir, "none.jsonl")); err != nil || len(recs) != 0 {
		t.Errorf("missing log: %v, %v", recs, err)
	}
}

// report.json decodes with the documented fields; junit.xml parses with a
// test case per case and arm, failed when a run did not succeed.
func TestReportFiles(t *testing.T) {
	m := &memoryRun{}
	cfg := testConfig(t, m)
	cfg.Arms = []Arm{NoMemory, Warm}
	cfg.Repeats, cfg.WarmRuns = 1, 1
	cfg.Run = func(ctx context.Context, r Run) (Outcome, error) {
		o, err := m.run(ctx, r)
		if r.Case.Name == "checkout" && r.Arm == NoMemory {
			o.Status, o.Success, o.Reason = "failed", false, "gave up"
		}
		return o, err
	}
	rep, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Write(cfg.Out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(cfg.Out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "{\n  \"note\": \"scripted model:") {
		t.Errorf("report.json does not start with the note: %.80s", b)
	}
	var doc struct {
		LLM, Browser  string
		EngineVersion *string `json:"engine_version"`
		Cases         []Case
		Repeats       int
		Arms          []struct {
			Name string
			Runs []map[string]any
			// cold ran for warm's sake, but only the arms asked for are reported.
			Summary map[string]struct {
				Mean *float64
				CI95 []*float64 `json:"ci95"`
			}
		}
		Comparisons []struct {
			Arm     string
			Metrics map[string]map[string]any
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.LLM != "scripted" || doc.Browser != "static" || doc.EngineVersion == nil || len(doc.Cases) != 2 || doc.Repeats != 1 || len(doc.Arms) != 2 {
		t.Fatalf("report.json: %s", b)
	}
	for _, k := range []string{"case", "repeat", "status", "success", "steps", "errors", "llm_calls", "tokens", "wall_ms"} {
		if _, ok := doc.Arms[1].Runs[0][k]; !ok {
			t.Errorf("a run lacks %q: %v", k, doc.Arms[1].Runs[0])
		}
	}
	for _, mt := range Metrics {
		s := doc.Arms[1].Summary[mt]
		if s.Mean == nil || len(s.CI95) != 2 || s.CI95[0] == nil || *s.CI95[0] > *s.Mean || *s.Mean > *s.CI95[1] {
			t.Errorf("summary %s: %+v", mt, s)
		}
	}
	if len(doc.Comparisons) != 1 || doc.Comparisons[0].Arm != "warm" {
		t.Fatalf("comparisons: %+v", doc.Comparisons)
	}
	for _, k := range []string{"relative_change", "ci95", "p_value"} {
		if _, ok := doc.Comparisons[0].Metrics["errors"][k]; !ok {
			t.Errorf("comparison lacks %q", k)
		}
	}

	x, err := os.ReadFile(filepath.Join(cfg.Out, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var ju junitSuites
	if err := xml.Unmarshal(x, &ju); err != nil {
		t.Fatal(err)
	}
	if ju.Tests != 4 || ju.Failures != 1 || len(ju.Suites) != 2 {
		t.Fatalf("junit: %s", x)
	}
	f := ju.Suites[0].Cases[1]
	if f.Name != "checkout" || f.Failure == nil || !strings.Contains(f.Failure.Text, "gave up") {
		t.Errorf("the failed case: %+v", f)
	}
}

// --fail-if conditions: parsed against the arms run, checked on means.
func TestConditions(t *testing.T) {
	arms := []Arm{NoMemory, Warm}
	rep := &Report{Arms: []ArmReport{
		{Name: NoMemory, Summary: map[string]Stat{"errors": {Mean: 2}, "llm_calls": {Mean: 9}}},
		{Name: Warm, Summary: map[string]Stat{"errors": {Mean: 0.5}, "llm_calls": {Mean: 9}}},
	}}
	for _, tc := range []struct {
		cond string
		want bool
	}{
		{"warm.errors<no-memory.errors", true},
		{"warm.errors >= no-memory.errors", false},
		{"warm.llm_calls<=no-memory.llm_calls", true},
		{"warm.llm_calls!=no-memory.llm_calls", false},
		{"warm.errors==0.5", true},
		{"1>warm.errors", true},
		{"warm.errors>-1", true},
	} {
		c, err := ParseCondition(tc.cond, arms)
		if err != nil {
			t.Errorf("%s: %v", tc.cond, err)
			continue
		}
		got, shown, err := c.Holds(rep)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v (%s, %v), want %v", tc.cond, got, shown, err, tc.want)
		}
	}
	for cond, want := range map[string]string{
		"warm.errors":           "want ARM.METRIC OP",
		"hot.errors<1":          `unknown arm "hot"`,
		"replay.errors<1":       `arm "replay" is not among --arms`,
		"warm.mistakes<1":       `unknown metric "mistakes"`,
		"1<2":                   "compares two numbers",
		"warm.errors<":          "a side is empty",
		"warm<no-memory.errors": `"warm" is neither ARM.METRIC nor a number`,
		"warm.errors<NaN":       "not a finite number",
	} {
		if _, err := ParseCondition(cond, arms); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", cond, err, want)
		}
	}
	c, _ := ParseCondition("warm.errors<1", []Arm{Warm})
	if _, _, err := c.Holds(&Report{}); err == nil {
		t.Error("an arm without runs compared")
	}
}

func TestParseArms(t *testing.T) {
	arms, err := ParseArms("warm, no-memory,warm")
	if err != nil || len(arms) != 2 || arms[0] != NoMemory || arms[1] != Warm {
		t.Errorf("%v, %v", arms, err)
	}
	for s, want := range map[string]string{"warm,hot": `unknown arm "hot"`, " , ": "no arms"} {
		if _, err := ParseArms(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v", s, err)
		}
	}
}

// A run that ends because the evaluation was interrupted is not logged:
// the next evaluation makes it again.
func TestEvalInterruptedRunIsNotLogged(t *testing.T) {
	m := &memoryRun{}
	cfg := testConfig(t, m)
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Run = func(_ context.Context, r Run) (Outcome, error) {
		if r.Arm == Cold {
			cancel() // Ctrl-C while cold runs: the agent ends it as failed
			return Outcome{Status: "failed", Reason: "interrupted"}, nil
		}
		return m.run(ctx, r)
	}
	if _, err := Eval(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	recs, err := ReadLog(filepath.Join(cfg.Out, LogFile))
	if err != nil || len(recs) != 1 {
		t.Fatalf("log %v (%v), want the no-memory run only", recs, err)
	}
	m2 := &memoryRun{}
	cfg.Run = m2.run
	if _, err := Eval(context.Background(), cfg); err != nil || m2.calls[0] != "search/cold" {
		t.Errorf("resumed from %v (%v), want search/cold", m2.calls, err)
	}
}

// Under ChangeAfter 1 the runs after cold (warm and replay) run on the
// changed variant, no-memory runs on both, and the report holds each arm
// on the variants it ran on, compared with no-memory on the same variant.
func TestEvalChangeAfter(t *testing.T) {
	m := &memoryRun{}
	cfg := testConfig(t, m)
	for i := range cfg.Cases {
		cfg.Cases[i].ChangedURL = "http://127.0.0.1:2/"
	}
	cfg.Repeats, cfg.ChangeAfter = 1, 1
	urls := map[string]string{}
	cfg.Run = func(ctx context.Context, r Run) (Outcome, error) {
		o, err := m.run(ctx, r)
		if r.Changed {
			urls[r.Case.Name+"/"+string(r.Arm)+fmt.Sprint(r.Index)] = r.URL()
			if r.Arm == Warm && r.Index == 1 {
				o.Errors++ // the moved element costs the first changed run an error
			}
		}
		return o, err
	}
	rep, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.calls[:6], " "); got != "search/no-memory search/no-memory@changed search/cold search/warm@changed search/warm@changed search/replay@changed" {
		t.Errorf("sequence: %s", got)
	}
	if len(urls) != 8 || urls["search/warm2"] != "http://127.0.0.1:2/" {
		t.Errorf("changed runs' urls: %v", urls)
	}
	var names []string
	for _, a := range rep.Arms {
		names = append(names, string(a.Name)+"="+a.Variant)
		for _, r := range a.Runs {
			if r.Variant != a.Variant {
				t.Errorf("arm %s holds a run on %s", a.Name, r.Variant)
			}
		}
	}
	if got := strings.Join(names, " "); got != "no-memory=original no-memory@changed=changed cold=original warm@changed=changed replay@changed=changed" {
		t.Errorf("arms: %s", got)
	}
	if got := fmt.Sprint(cfg.ReportArms()); got != "[no-memory no-memory@changed cold warm@changed replay@changed]" {
		t.Errorf("ReportArms %s", got)
	}
	var cmps []string
	for _, c := range rep.Comparisons {
		cmps = append(cmps, string(c.Arm)+"/"+string(c.Baseline))
	}
	if got := strings.Join(cmps, " "); got != "cold/no-memory warm@changed/no-memory@changed replay@changed/no-memory@changed" {
		t.Errorf("comparisons: %s", got)
	}
	if e, _ := rep.Mean(Warm+ChangedSuffix, "errors"); e != 1 { // warm-1: 1+1, warm-2: 0
		t.Errorf("warm@changed errors %v, want 1", e)
	}
	recs, err := ReadLog(filepath.Join(cfg.Out, LogFile))
	if err != nil {
		t.Fatal(err)
	}
	variants := map[string]int{}
	for _, r := range recs {
		variants[r.Variant]++
	}
	if variants[Original] != 4 || variants[Changed] != 8 {
		t.Errorf("logged variants %v, want 4 original and 8 changed", variants)
	}

	// Conditions name the arms on their variants.
	for cond, want := range map[string]string{
		"warm@changed.success<1":                        "",
		"warm@changed.errors>=no-memory@changed.errors": "",
		"warm.errors<1":                                 `arm "warm" has no runs in this evaluation`,
		"warm@moved.errors<1":                           `unknown arm "warm@moved"`,
		"cold@changed.errors<1":                         `arm "cold@changed" has no runs`,
		"replay@changed.tokens>0":                       "",
	} {
		_, err := ParseCondition(cond, cfg.ReportArms())
		if (err == nil) != (want == "") || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", cond, err, want)
		}
	}
	c, _ := ParseCondition("warm@changed.errors>=no-memory@changed.errors", cfg.ReportArms())
	if held, shown, err := c.Holds(rep); err != nil || held {
		t.Errorf("warm@changed makes as many errors as no-memory@changed: %s (%v)", shown, err)
	}

	// The same dir with another ChangeAfter: its changed warm runs were
	// made on other memory.
	cfg.ChangeAfter, cfg.WarmRuns = 2, 2
	if _, err := Eval(context.Background(), cfg); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "with --change-after 1, not 2") {
		t.Errorf("another change-after: %v", err)
	}
}

// ChangeAfter needs every case's changed variant, and a warm or replay
// run after the change.
func TestChangeAfterCheck(t *testing.T) {
	cfg := testConfig(t, &memoryRun{})
	cfg.ChangeAfter = 1
	cfg.Cases[0].ChangedURL = "http://127.0.0.1:2/"
	if err := cfg.Check(); err == nil || err.Error() != "case checkout has no changed_url, which --change-after needs" {
		t.Errorf("no changed_url: %v", err)
	}
	cfg.Cases[1].ChangedURL = "http://127.0.0.1:2/"
	cfg.ChangeAfter, cfg.WarmRuns = 3, 1
	if err := cfg.Check(); err == nil || !strings.Contains(err.Error(), "no warm or replay run comes after the 3rd memory-making run") {
		t.Errorf("nothing after the change: %v", err)
	}
	cfg.ChangeAfter, cfg.WarmRuns = 3, 3
	if err := cfg.Check(); err != nil {
		t.Error(err)
	}
}

// Parallel sequences: two cases' sequences run at once (each run waits
// until the other sequence has a run under way), each in its own order;
// the log holds every run once, progress counts up one at a time, and an
// evaluation stopped by a run that could not be made resumes.
func TestEvalParallel(t *testing.T) {
	m := &memoryRun{}
	cfg := testConfig(t, m)
	cfg.Parallel = 2
	var (
		mu       sync.Mutex
		clock    time.Time
		inFlight = map[string]int{}
		both     = make(chan struct{})
		most     int
		order    = map[string][]string{}
		dones    []int
	)
	cfg.Clock = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Millisecond)
		return clock
	}
	cfg.Progress = func(p Progress) {
		if p.Outcome != nil {
			dones = append(dones, p.Done) // unguarded: progress is told one call at a time
		}
	}
	failOnce := true
	cfg.Run = func(ctx context.Context, r Run) (Outcome, error) {
		mu.Lock()
		inFlight[r.Case.Name]++
		n := 0
		for _, v := range inFlight {
			n += v
		}
		most = max(most, n)
		if len(inFlight) == 2 && inFlight["search"] > 0 && inFlight["checkout"] > 0 {
			select {
			case <-both:
			default:
				close(both)
			}
		}
		order[r.Case.Name+fmt.Sprint(r.Repeat)] = append(order[r.Case.Name+fmt.Sprint(r.Repeat)], string(r.Arm))
		fail := failOnce && r.Case.Name == "checkout" && r.Repeat == 2 && r.Arm == Warm
		if fail {
			failOnce = false
		}
		mu.Unlock()
		if r.Repeat == 1 && r.Arm == NoMemory {
			<-both // the other sequence's first run is under way too
		}
		defer func() {
			mu.Lock()
			inFlight[r.Case.Name]--
			if inFlight[r.Case.Name] == 0 {
				delete(inFlight, r.Case.Name)
			}
			mu.Unlock()
		}()
		if fail {
			return Outcome{}, errors.New("browser did not start")
		}
		return m.run(ctx, r)
	}
	_, err := Eval(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "case checkout, repeat 2, warm-1 run: browser did not start") {
		t.Fatalf("err = %v", err)
	}
	if most != 2 {
		t.Errorf("at most %d runs at once, want 2", most)
	}
	// The sequence under way beside the one that failed (whichever the
	// scheduler paired it with: search1 or search2) starts no run after
	// the failure: it ran some of its runs, in order. Every other
	// sequence ran whole.
	made, partial := 0, 0
	for seq, arms := range order {
		want := "no-memory cold warm warm replay"
		if seq == "checkout2" {
			want = "no-memory cold warm"
		}
		got := strings.Join(arms, " ")
		switch {
		case got == want:
		case seq != "checkout2" && strings.HasPrefix(want, got):
			partial++
		default:
			t.Errorf("sequence %s ran %s, want %s", seq, got, want)
		}
		made += len(arms)
	}
	if partial > 1 {
		t.Errorf("%d sequences stopped part way (%v), want at most the one beside the failure", partial, order)
	}
	made-- // the one that could not be made
	for i, d := range dones {
		if d != i+1 {
			t.Fatalf("progress counted %v, want 1, 2, 3, …", dones)
		}
	}
	recs, err := ReadLog(filepath.Join(cfg.Out, LogFile))
	if err != nil || len(recs) != made || len(dones) != made {
		t.Fatalf("%d runs logged, %d told (%v), want %d", len(recs), len(dones), err, made)
	}

	dones = nil
	m2 := &memoryRun{}
	cfg.Run = m2.run
	rep, err := Eval(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(m2.calls) != 20-made || !slices.Contains(m2.calls, "checkout/replay") {
		t.Errorf("resumed with %v, want the %d runs not made", m2.calls, 20-made)
	}
	if rep.Runs() != 20 || len(dones) != 20 {
		t.Errorf("%d runs reported, %d told", rep.Runs(), len(dones))
	}
	b, err := os.ReadFile(filepath.Join(cfg.Out, LogFile))
	if err != nil || strings.Count(string(b), "\n") != 20 {
		t.Errorf("the log holds %d lines (%v), want 20", strings.Count(string(b), "\n"), err)
	}
}
