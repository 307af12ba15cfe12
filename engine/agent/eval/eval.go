// Package eval measures what memory changes in an agent's runs: it runs a
// set of cases under arms (no memory, the first run on empty memory, the
// runs after it, and those replayed), each in memory of its own, keeps a
// log of every run so an interrupted evaluation continues where it
// stopped, and reports each arm's means with confidence intervals and
// each arm against no memory with a paired test. It runs the agent
// through a function the caller gives, so it knows no browser or model.
package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Arm is one way of running the cases.
type Arm string

// The arms.
const (
	// NoMemory runs every case on empty memory with learning off.
	NoMemory Arm = "no-memory"
	// Cold is a sequence's first run, on empty memory; it learns.
	Cold Arm = "cold"
	// Warm runs after cold, on the memory cold (and earlier warm runs)
	// left.
	Warm Arm = "warm"
	// Replay is warm with replay on: a matching trajectory is replayed
	// without the model.
	Replay Arm = "replay"
)

// AllArms are the arms in the order a sequence runs them.
var AllArms = []Arm{NoMemory, Cold, Warm, Replay}

// ParseArms parses a comma-separated list of arm names; the result keeps
// AllArms' order, each arm once.
func ParseArms(s string) ([]Arm, error) {
	want := map[Arm]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		known := false
		for _, a := range AllArms {
			if Arm(p) == a {
				known = true
			}
		}
		if !known {
			return nil, fmt.Errorf("unknown arm %q: use %s", p, armList(AllArms))
		}
		want[Arm(p)] = true
	}
	var out []Arm
	for _, a := range AllArms {
		if want[a] {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no arms: use %s", armList(AllArms))
	}
	return out, nil
}

func armList(arms []Arm) string {
	s := make([]string, len(arms))
	for i, a := range arms {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}

// Case is one task: a goal at a start URL, with the scripted model's
// rules file when the model is scripted.
type Case struct {
	Name string `json:"name"`
	Goal string `json:"goal"`
	URL  string `json:"url"`
	// ChangedURL is where the same task starts on the site's changed
	// variant (elements moved or renamed), for --change-after.
	ChangedURL string `json:"changed_url,omitempty"`
	Rules      string `json:"rules,omitempty"`
	MaxSteps   int    `json:"max_steps,omitempty"`
	// Key, when set, stands for URL and ChangedURL in the case's
	// fingerprint: the gym serves its sites on other ports each time, and
	// a resumed evaluation of the same tasks is the same evaluation.
	Key string `json:"-"`
}

// fingerprint identifies what a case asks (its rules by their content,
// not their path), so a resumed evaluation never counts a run of a case
// that has since changed.
func (c Case) fingerprint() (string, error) {
	h := sha256.New()
	// A case with only a url hashes as it did before changed variants, so
	// older logs of it still resume.
	var where any = c.URL
	switch {
	case c.Key != "":
		where = []string{c.Key}
	case c.ChangedURL != "":
		where = []string{c.URL, c.ChangedURL}
	}
	b, _ := json.Marshal([]any{c.Name, c.Goal, where, c.MaxSteps})
	h.Write(b)
	if c.Rules != "" {
		rules, err := os.ReadFile(c.Rules)
		if err != nil {
			return "", fmt.Errorf("case %s: rules: %w", c.Name, err)
		}
		h.Write(rules)
	}
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// Run is one run to make: a case, in an arm, in memory at DataDir.
type Run struct {
	Case   Case
	Arm    Arm
	Repeat int // the sequence, from 1
	Index  int // the warm run's place after cold, from 1 (1 for the other arms)
	// DataDir is the run's memory: a data dir of its own.
	DataDir string
	// NoMemory runs without reading or teaching memory; Replay replays a
	// matching trajectory.
	NoMemory, Replay bool
	// Changed runs on the case's changed variant (ChangedURL).
	Changed bool
}

// URL is where the run starts: the case's URL, or its changed variant's.
func (r Run) URL() string {
	if r.Changed {
		return r.Case.ChangedURL
	}
	return r.Case.URL
}

// The variants a run is made on.
const (
	Original = "original"
	Changed  = "changed"
)

// ChangedSuffix marks a reported arm's runs on the changed variant
// ("warm@changed").
const ChangedSuffix = "@changed"

func variant(changed bool) string {
	if changed {
		return Changed
	}
	return Original
}

// reportArm is the name the report gives an arm's runs on a variant.
func reportArm(a Arm, changed bool) Arm {
	if changed {
		return a + ChangedSuffix
	}
	return a
}

// baseArm is the arm a reported arm's runs were made in.
func baseArm(a Arm) Arm { return Arm(strings.TrimSuffix(string(a), ChangedSuffix)) }

// Outcome is what a run did.
type Outcome struct {
	RunID    string
	Status   string // completed or failed
	Success  bool
	Reason   string
	Steps    int
	Errors   int
	LLMCalls int
	Tokens   int
}

// RunFunc makes one run. An error means the run could not be made (a
// plugin that does not start, a data dir that cannot be opened), not that
// the agent failed, which is an Outcome.
type RunFunc func(ctx context.Context, r Run) (Outcome, error)

// Record is one run in the log of record (runs.jsonl): the run as the
// report shows it, its arm, and what it was made with.
type Record struct {
	Arm Arm `json:"arm"`
	RunReport
	// What the run was made with, so a resumed evaluation uses only runs
	// of the same cases, model and browser.
	CaseSHA string `json:"case_sha"`
	LLM     string `json:"llm"`
	Browser string `json:"browser"`
	// ChangeAfter is the --change-after a run on the changed variant was
	// made with: a warm run's memory depends on it.
	ChangeAfter int `json:"change_after,omitempty"`
}

// logKey is a record holding only what keys it in the log: case, arm,
// repeat, index and variant.
func logKey(cs string, arm Arm, repeat, index int, changed bool) Record {
	return Record{Arm: arm, RunReport: RunReport{Case: cs, Repeat: repeat, Index: index, Variant: variant(changed)}}
}

func (r Record) key() string {
	v := r.Variant
	if v == "" {
		v = Original // a log from before variants
	}
	return fmt.Sprintf("%s\x00%s\x00%d\x00%d\x00%s", r.Case, r.Arm, r.Repeat, r.Index, v)
}

// Config is one evaluation.
type Config struct {
	Cases   []Case
	Arms    []Arm
	Repeats int // sequences per case
	// WarmRuns is the number of warm runs in a sequence after cold, each
	// on the memory the runs before it left.
	WarmRuns int
	// ChangeAfter, when above 0, runs the runs after a sequence's Nth
	// memory-making run (cold the 1st, warm-1 the 2nd, …) on the cases'
	// changed variants, and no-memory on both variants as their baselines.
	ChangeAfter int
	// Parallel is how many cases' sequences run at once (at least 1); a
	// sequence's runs stay in order.
	Parallel int
	// Out is the output dir: runs.jsonl, the arms' data dirs under
	// memory/, report.json and junit.xml.
	Out string
	// LLM, Browser and EngineVersion describe the runs in the report.
	LLM, Browser, EngineVersion string
	// Scripted says the model is scripted: the report then says that its
	// numbers show the mechanism, not a model's behaviour.
	Scripted bool
	Run      RunFunc
	// Progress, when set, is told before each run and after it, one call
	// at a time.
	Progress func(Progress)
	// Clock measures wall time (default time.Now).
	Clock func() time.Time
}

// Progress is where an evaluation is: Done of Total runs made or found in
// the log; Run is the run about to start (Outcome nil) or just ended.
type Progress struct {
	Done, Total int
	Run         Run
	Outcome     *Outcome
	// Logged says the run was in the log of record, not made again.
	Logged bool
}

// LogFile is the log of record in the output dir: one JSON line a run.
const LogFile = "runs.jsonl"

// step is one run of a sequence's plan: its arm, its variant, and the
// data dir stage it copies its memory from ("" for empty memory).
type step struct {
	arm     Arm
	index   int
	changed bool
	stage   string // the data dir's name in the sequence
	from    string // the stage whose memory it starts from, "" for none
	report  bool   // an arm asked for (cold runs anyway when warm or replay need it)
}

// plan is a sequence's runs in order: no-memory on empty memory (and on
// the changed variant too under ChangeAfter); cold on empty memory; warm
// 1..W, each on a copy of the memory the run before it left; replay on a
// copy of the memory cold left (what warm 1 starts from, on warm 1's
// variant). Under ChangeAfter N the memory-making runs after the Nth run
// on the changed variant.
func (c *Config) plan() []step {
	want := map[Arm]bool{}
	for _, a := range c.Arms {
		want[a] = true
	}
	// made is a memory-making run's place: cold 1, warm-k k+1.
	after := func(made int) bool { return c.ChangeAfter > 0 && made > c.ChangeAfter }
	var out []step
	if want[NoMemory] {
		out = append(out, step{arm: NoMemory, index: 1, stage: string(NoMemory), report: true})
		if c.ChangeAfter > 0 {
			out = append(out, step{arm: NoMemory, index: 1, changed: true, stage: string(NoMemory) + "-changed", report: true})
		}
	}
	if want[Cold] || want[Warm] || want[Replay] {
		out = append(out, step{arm: Cold, index: 1, changed: after(1), stage: string(Cold), report: want[Cold]})
	}
	if want[Warm] {
		from := string(Cold)
		for i := 1; i <= c.warmRuns(); i++ {
			st := fmt.Sprintf("%s-%d", Warm, i)
			out = append(out, step{arm: Warm, index: i, changed: after(i + 1), stage: st, from: from, report: true})
			from = st
		}
	}
	if want[Replay] {
		out = append(out, step{arm: Replay, index: 1, changed: after(2), stage: string(Replay), from: string(Cold), report: true})
	}
	return out
}

// ReportArms are the arms the report holds, in plan order: each arm asked
// for on each variant it runs on ("warm", "warm@changed").
func (c *Config) ReportArms() []Arm {
	var out []Arm
	for _, a := range AllArms {
		for _, changed := range []bool{false, true} {
			for _, st := range c.plan() {
				if st.arm == a && st.changed == changed && st.report {
					out = append(out, reportArm(a, changed))
					break
				}
			}
		}
	}
	return out
}

func (c *Config) warmRuns() int {
	if c.WarmRuns < 1 {
		return 1
	}
	return c.WarmRuns
}

// Check says what is wrong with the configuration, or nil.
func (c *Config) Check() error {
	if len(c.Cases) == 0 {
		return errors.New("no cases")
	}
	seen := map[string]bool{}
	for _, cs := range c.Cases {
		if seen[cs.Name] {
			return fmt.Errorf("two cases are named %q: each case needs a name of its own", cs.Name)
		}
		seen[cs.Name] = true
	}
	if len(c.Arms) == 0 {
		return errors.New("no arms")
	}
	if c.Repeats < 1 {
		return fmt.Errorf("repeats must be 1 or more, not %d", c.Repeats)
	}
	if c.WarmRuns < 0 {
		return fmt.Errorf("warm runs must be 1 or more, not %d", c.WarmRuns)
	}
	if c.Parallel < 0 {
		return fmt.Errorf("parallel must be 1 or more, not %d", c.Parallel)
	}
	if c.ChangeAfter < 0 {
		return fmt.Errorf("change-after must be 0 (off) or more, not %d", c.ChangeAfter)
	}
	if c.ChangeAfter > 0 {
		for _, cs := range c.Cases {
			if cs.ChangedURL == "" {
				return fmt.Errorf("case %s has no changed_url, which --change-after needs", cs.Name)
			}
		}
	}
	if c.Out == "" {
		return errors.New("no output dir")
	}
	if c.Run == nil {
		return errors.New("no run function")
	}
	return c.CheckPlan()
}

// CheckPlan says what is wrong with the arms, warm runs and ChangeAfter,
// whatever the cases, or nil.
func (c *Config) CheckPlan() error {
	if c.ChangeAfter > 0 {
		changes := false
		for _, st := range c.plan() {
			changes = changes || (st.changed && st.arm != NoMemory)
		}
		if !changes {
			return fmt.Errorf("change-after %d: no warm or replay run comes after the %s memory-making run of a sequence (cold is the 1st, warm-1 the 2nd, …): lower it, or raise --warm-runs", c.ChangeAfter, ordinal(c.ChangeAfter))
		}
	}
	return nil
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

// ErrMismatch marks a log of record made with other cases, another model
// or another browser than the evaluation resuming it.
var ErrMismatch = errors.New("the output dir holds another evaluation")

// Eval runs every run of the plan that the output dir's log does not
// already hold, appending each to the log as it ends, and returns the
// report of every run of the plan the log then holds. Up to Parallel
// sequences run at once. It starts no run after the first that could not
// be made (runs under way end and are logged; the report so far is
// returned with the error), and stops when ctx ends.
func Eval(ctx context.Context, c Config) (*Report, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return nil, err
	}
	done, err := ReadLog(filepath.Join(c.Out, LogFile))
	if err != nil {
		return nil, err
	}
	shas := map[string]string{}
	for _, cs := range c.Cases {
		if shas[cs.Name], err = cs.fingerprint(); err != nil {
			return nil, err
		}
	}
	// Every logged run this evaluation would use, in plan order (so the
	// error names the first).
	if err := c.checkLog(done, shas); err != nil {
		return nil, err
	}
	lf, err := os.OpenFile(filepath.Join(c.Out, LogFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer lf.Close()

	e := &evaluation{c: &c, plan: c.plan(), shas: shas, done: done, log: lf}
	e.total = c.Repeats * len(c.Cases) * len(e.plan)
	// Repeats outermost: an evaluation stopped part-way holds whole
	// rounds of every case, so its report stays balanced. Up to Parallel
	// sequences run at once, taken in that order.
	type seq struct {
		rep int
		cs  Case
	}
	seqs := make(chan seq)
	var wg sync.WaitGroup
	for range max(1, min(c.Parallel, c.Repeats*len(c.Cases))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range seqs {
				e.sequence(ctx, s.rep, s.cs)
			}
		}()
	}
feed:
	for rep := 1; rep <= c.Repeats; rep++ {
		for _, cs := range c.Cases {
			if e.stopped() {
				break feed
			}
			seqs <- seq{rep, cs}
		}
	}
	close(seqs)
	wg.Wait()
	return c.report(done), e.err
}

// evaluation is an evaluation under way. Its sequences may run at once;
// mu guards the log of record (one writer), what it holds, the count of
// runs done, the progress calls and the first error.
type evaluation struct {
	c     *Config
	plan  []step
	shas  map[string]string
	total int

	mu    sync.Mutex
	done  map[string]Record
	log   *os.File
	count int
	err   error
}

func (e *evaluation) stopped() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err != nil
}

// fail keeps the first error: the evaluation starts no run after it (runs
// under way end and are logged).
func (e *evaluation) fail(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.err = err
	}
}

// sequence makes one case's runs of the plan for one repeat, in order,
// skipping those the log holds; it stops at the first run that cannot be
// made, and when the evaluation stops.
func (e *evaluation) sequence(ctx context.Context, rep int, cs Case) {
	c := e.c
	for _, st := range e.plan {
		r := Run{Case: cs, Arm: st.arm, Repeat: rep, Index: st.index, Changed: st.changed,
			DataDir:  filepath.Join(c.Out, seqDir(cs.Name, rep), st.stage),
			NoMemory: st.arm == NoMemory, Replay: st.arm == Replay}
		rec := logKey(cs.Name, st.arm, rep, st.index, st.changed)
		e.mu.Lock()
		old, logged := e.done[rec.key()]
		if logged {
			e.count++
			if c.Progress != nil {
				o := old.outcome()
				c.Progress(Progress{Done: e.count, Total: e.total, Run: r, Outcome: &o, Logged: true})
			}
		}
		stop := e.err != nil
		e.mu.Unlock()
		if logged {
			continue
		}
		if stop {
			return
		}
		if err := ctx.Err(); err != nil {
			e.fail(err)
			return
		}
		if err := e.prepare(r, st); err != nil {
			e.fail(fmt.Errorf("case %s, repeat %d, %s: %w", cs.Name, rep, st.stage, err))
			return
		}
		e.mu.Lock()
		if c.Progress != nil {
			c.Progress(Progress{Done: e.count, Total: e.total, Run: r})
		}
		e.mu.Unlock()
		start := c.Clock()
		o, err := c.Run(ctx, r)
		wall := c.Clock().Sub(start)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err() // a run cut short by Ctrl-C is not a result: it is made again
		}
		if err != nil {
			e.fail(fmt.Errorf("case %s, repeat %d, %s run: %w", cs.Name, rep, stageName(st), err))
			return
		}
		rec = recordOf(rec, o, wall)
		rec.DataDir = filepath.ToSlash(filepath.Join(seqDir(cs.Name, rep), st.stage))
		rec.CaseSHA, rec.LLM, rec.Browser = e.shas[cs.Name], c.LLM, c.Browser
		if st.changed {
			rec.ChangeAfter = c.ChangeAfter
		}
		e.mu.Lock()
		err = appendRecord(e.log, rec)
		if err == nil {
			e.done[rec.key()] = rec
			e.count++
			if c.Progress != nil {
				c.Progress(Progress{Done: e.count, Total: e.total, Run: r, Outcome: &o})
			}
		}
		e.mu.Unlock()
		if err != nil {
			e.fail(err)
			return
		}
	}
}

// stageName names a step in errors: its stage, with the variant.
func stageName(st step) string {
	if st.changed {
		return st.stage + " (changed variant)"
	}
	return st.stage
}

// prepare makes a run's data dir: a stage not in the log may hold what an
// interrupted run left, so it starts again from the memory it copies.
func (e *evaluation) prepare(r Run, st step) error {
	if err := os.RemoveAll(r.DataDir); err != nil {
		return err
	}
	if st.from == "" {
		return os.MkdirAll(r.DataDir, 0o700)
	}
	if err := copyDataDir(filepath.Join(e.c.Out, seqDir(r.Case.Name, r.Repeat), st.from), r.DataDir); err != nil {
		return fmt.Errorf("copying the memory of %s: %w", st.from, err)
	}
	return nil
}

// checkLog says which logged run of the plan was made with another model
// or browser, or of a case since changed.
func (c *Config) checkLog(done map[string]Record, shas map[string]string) error {
	for rep := 1; ; rep++ {
		found := false
		for _, cs := range c.Cases {
			for _, st := range c.plan() {
				r, ok := done[logKey(cs.Name, st.arm, rep, st.index, st.changed).key()]
				if !ok {
					continue
				}
				found = true
				var what string
				switch {
				case r.LLM != c.LLM:
					what = fmt.Sprintf("with llm %q, not %q", r.LLM, c.LLM)
				case r.Browser != c.Browser:
					what = fmt.Sprintf("with browser %q, not %q", r.Browser, c.Browser)
				case r.CaseSHA != shas[cs.Name]:
					what = "as it was before its goal, url, changed_url, max_steps or rules changed"
				case st.arm == Warm && st.changed && r.ChangeAfter != c.ChangeAfter:
					what = fmt.Sprintf("on the changed variant with --change-after %d, not %d", r.ChangeAfter, c.ChangeAfter)
				default:
					continue
				}
				return fmt.Errorf("%w: %s holds runs of case %q %s: use another --out, or remove it to start again",
					ErrMismatch, filepath.Join(c.Out, LogFile), r.Case, what)
			}
		}
		if !found && rep > c.Repeats {
			return nil
		}
	}
}

// seqDir is the dir of one sequence's data dirs in the output dir.
func seqDir(caseName string, repeat int) string {
	return filepath.Join("memory", caseName, fmt.Sprintf("r%d", repeat))
}

func recordOf(rec Record, o Outcome, wall time.Duration) Record {
	rec.Status, rec.Success, rec.Reason, rec.RunID = o.Status, o.Success, o.Reason, o.RunID
	rec.Steps, rec.Errors, rec.LLMCalls, rec.Tokens = o.Steps, o.Errors, o.LLMCalls, o.Tokens
	rec.WallMS = wall.Milliseconds()
	return rec
}

func (r Record) outcome() Outcome {
	return Outcome{RunID: r.RunID, Status: r.Status, Success: r.Success, Reason: r.Reason,
		Steps: r.Steps, Errors: r.Errors, LLMCalls: r.LLMCalls, Tokens: r.Tokens}
}

// appendRecord writes one line and syncs it: a run in the log is a run
// done, whatever happens next.
func appendRecord(f *os.File, r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		return err
	}
	return f.Sync()
}

// ReadLog reads a log of record by run (the last line of a run wins). A
// missing file is an empty log; a last line cut short by a crash is
// ignored; any other bad line is an error naming it.
func ReadLog(path string) (map[string]Record, error) {
	out := map[string]Record{}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Case == "" || r.Repeat < 1 {
			if i == len(lines)-1 {
				break // the unfinished last line of a crash: that run is not done
			}
			if err == nil {
				err = errors.New("not a run record")
			}
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		out[r.key()] = r
	}
	return out, nil
}

// copyDataDir copies the data dir src (not held by any process) to dst,
// leaving out the runs' artifact folders: a stage starts from the memory
// of the one before, not its artifacts.
func copyDataDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir() && d.Name() == "runs" && path != src:
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return nil // a socket or a link: not memory
		}
		return copyFile(path, target)
	})
}

func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	_, err = io.Copy(out, in)
	return err
}
