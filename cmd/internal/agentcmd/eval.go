package agentcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/cmd/internal/cli"
	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/agent"
	"github.com/engine-dev/engine/engine/agent/eval"
	"github.com/engine-dev/engine/engine/agent/gym"
	"github.com/engine-dev/engine/plugins/loader"
)

func init() {
	commandSets = append(commandSets, func(a *app) []*cobra.Command { return []*cobra.Command{a.evalCommand()} })
}

// evalFlags are eval's own flags; the run flags that shape each run are in
// runFlags.
type evalFlags struct {
	arms, out   string
	suite, only string
	list, json  bool
	repeats     int
	warmRuns    int
	changeAfter int
	parallel    int
	failIf      []string
}

func (a *app) evalCommand() *cobra.Command {
	var (
		f  runFlags
		ef evalFlags
	)
	c := &cobra.Command{
		Use:   "eval",
		Short: cli.AgentShort("eval"),
		Long: `engine eval runs each case of a --cases file (the format engine run --cases
reads), or each task of the bundled gym of trap sites (--suite gym), under
arms, and reports what memory changed:

  no-memory  every run on empty memory, learning off (the baseline)
  cold       a sequence's first run, on empty memory
  warm       the runs after it, each on the memory the runs before it left
             (--warm-runs, default 1)
  replay     warm with --replay, on the memory cold left

A sequence is one case run under the arms in that order; --repeats gives
each case that many sequences. Every run has a data dir of its own under
--out (memory/CASE/rN/ARM): warm and replay start from a copy of the memory
the run before them left, so arms never share memory.

--out DIR gets runs.jsonl (the log of record, one line a run), report.json
(each arm's runs, means with 95 % bootstrap intervals, each arm against
no-memory paired by case with a sign-flip test's p-value), report.html
(the same as a page readable offline: charts and tables) and junit.xml
(a test case per case and arm). Run it again with the same --out to
continue: runs in the log are not made again.

--change-after N runs the runs after a sequence's Nth memory-making run
(cold is the 1st, warm-1 the 2nd, …) on each case's changed_url, and
no-memory on both variants; the report names those arms ARM@changed
(warm@changed against no-memory@changed). --parallel N runs N cases'
sequences at once.

--fail-if COND (repeatable) exits 4 when COND holds on the arms' means:
ARM.METRIC OP ARM.METRIC|NUMBER, OP one of < <= > >= == !=, METRIC one of
` + strings.Join(eval.Metrics, ", ") + `. For example, fail CI unless warm
makes fewer errors than no memory:
  --fail-if 'warm.errors>=no-memory.errors'

--suite gym serves the gym's sites on 127.0.0.1 for the evaluation and
runs their tasks with their scripted rules (written under --out/rules);
--suite gym --list [--json] lists the tasks, each with its site, goal and
the traps it sets. --only PATTERNS (comma-separated globs on case names,
such as 'shop.*,news.latest') keeps the cases that match one.

Exit status: 0 it ran (whatever the results), 1 runs could not be made,
2 bad input, 4 a --fail-if condition holds.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.eval(cmd.Context(), f, ef)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.cases, "cases", "", "the cases, from `FILE` (JSON: [{name, goal, url, changed_url?, rules?, max_steps?}], rules relative to FILE)")
	fl.StringVar(&ef.suite, "suite", "", "a bundled suite instead of --cases: gym (its trap sites, served on 127.0.0.1)")
	fl.StringVar(&ef.only, "only", "", "run only the cases whose names match one of these comma-separated glob `PATTERNS`")
	fl.BoolVar(&ef.list, "list", false, "with --suite: list its tasks and exit")
	fl.BoolVar(&ef.json, "json", false, "with --list: as JSON")
	fl.StringVar(&ef.arms, "arms", "no-memory,cold,warm,replay", "the arms to run, comma-separated")
	fl.IntVar(&ef.repeats, "repeats", 3, "sequences per case")
	fl.IntVar(&ef.warmRuns, "warm-runs", 1, "warm runs in a sequence, each after the one before")
	fl.IntVar(&ef.changeAfter, "change-after", 0, "run the runs after a sequence's `N`th memory-making run (cold 1st, warm-1 2nd, …) on the cases' changed variants (changed_url), and no-memory on both")
	fl.IntVar(&ef.parallel, "parallel", 1, "run up to `N` cases' sequences at once")
	fl.StringVar(&ef.out, "out", "", "output `DIR`: runs.jsonl, report.json, report.html, junit.xml and the arms' memory (again to resume)")
	fl.StringArrayVar(&ef.failIf, "fail-if", nil, "exit 4 when `COND` holds, such as warm.errors>=no-memory.errors (repeatable)")
	fl.StringVar(&f.browser, "browser", "chromedp", "browser plugin")
	fl.StringVar(&f.llm, "llm", "", "LLM as PROVIDER[:MODEL] (env ENGINE_LLM; default "+defaultLLM+"); scripted: each case's rules drive it")
	fl.IntVar(&f.maxSteps, "max-steps", agent.DefaultMaxSteps, "stop a run after N steps (a case's max_steps wins)")
	fl.IntVar(&f.maxErrors, "max-errors", agent.DefaultMaxErrors, "stop a run after N errors")
	fl.StringVar(&f.approve, "approve", "never", "actions that buy, pay, delete or submit personal data: auto or never (nobody is there to ask)")
	fl.StringVar(&f.mode, "mode", "step", "step or planner")
	fl.StringVar(&f.allowDomains, "allow-domains", "", "navigate only to these `DOMAINS` (comma-separated) and their subdomains")
	fl.BoolVar(&f.allowPrivate, "allow-private", false, "allow private, loopback and link-local addresses (allowed anyway when a case's url is one)")
	addLLMFlags(fl, &f)
	return c
}

// eval checks the input, runs the evaluation, writes its report and checks
// the --fail-if conditions.
func (a *app) eval(ctx context.Context, f runFlags, ef evalFlags) error {
	if f.cases != "" && ef.suite != "" {
		return cli.Usagef("--cases and --suite exclude each other: give one")
	}
	if ef.suite != "" && ef.suite != "gym" {
		return cli.Usagef("--suite %q: the bundled suite is gym", ef.suite)
	}
	if ef.list {
		if ef.suite == "" {
			return cli.Usagef("--list lists a suite's tasks: give --suite gym")
		}
		return a.listGym(ef)
	}
	if ef.json {
		return cli.Usagef("--json goes with --list")
	}
	if f.cases == "" && ef.suite == "" {
		return cli.Usagef("no cases: give --cases FILE or --suite gym")
	}
	if ef.out == "" {
		return cli.Usagef("no output dir: give --out DIR (run again with the same DIR to resume)")
	}
	if ef.repeats < 1 {
		return cli.Usagef("--repeats must be 1 or more, not %d", ef.repeats)
	}
	if ef.warmRuns < 1 {
		return cli.Usagef("--warm-runs must be 1 or more, not %d", ef.warmRuns)
	}
	if f.approve == string(agent.ApproveAsk) {
		return cli.Usagef("--approve ask: an evaluation asks nobody; use auto or never")
	}
	arms, err := eval.ParseArms(ef.arms)
	if err != nil {
		return cli.Usagef("--arms: %v", err)
	}
	if ef.changeAfter < 0 {
		return cli.Usagef("--change-after must be 0 (off) or more, not %d", ef.changeAfter)
	}
	if ef.parallel < 1 {
		return cli.Usagef("--parallel must be 1 or more, not %d", ef.parallel)
	}
	// The conditions name the arms the report will hold, known before the
	// cases are.
	plan := eval.Config{Arms: arms, WarmRuns: ef.warmRuns, ChangeAfter: ef.changeAfter}
	if err := plan.CheckPlan(); err != nil {
		return cli.Usagef("%v", err)
	}
	var conds []eval.Condition
	for _, s := range ef.failIf {
		c, err := eval.ParseCondition(s, plan.ReportArms())
		if err != nil {
			return cli.Usagef("--fail-if: %v", err)
		}
		conds = append(conds, c)
	}
	// Each run's memory is a data dir of its own under --out; a memory
	// server or a shared store would put every arm in one memory.
	if os.Getenv("ENGINE_SERVER") != "" {
		return cli.Usagef("eval keeps each run's memory in a data dir of its own under --out: unset ENGINE_SERVER")
	}
	if a.StoreURL() != "" {
		return cli.Usagef("eval keeps each run's memory in a data dir of its own under --out: drop --store / ENGINE_STORE")
	}
	var cases []eval.Case
	if ef.suite == "" {
		if cases, err = readCases(f.cases); err != nil {
			return err
		}
		if ef.only != "" {
			if cases, err = onlyCases(cases, ef.only); err != nil {
				return err
			}
		}
	} else {
		tasks, err := gymTasks(ef.only)
		if err != nil {
			return err
		}
		if len(tasks) == 0 {
			return cli.Usagef("--suite gym: the gym has no tasks")
		}
		srv, err := gym.Start()
		if err != nil {
			return err
		}
		defer srv.Close()
		if cases, err = gymCases(ef.out, srv, tasks); err != nil {
			return err
		}
		f.cases = "gym" // names the suite in errors
	}
	// The model is decided once, for every case: --llm; else, as engine
	// run decides, the scripted model when every case has rules; else
	// ENGINE_LLM or the default.
	spec := f.llm
	if spec == "" {
		spec = "scripted"
		for _, c := range cases {
			if c.Rules == "" {
				rf := f
				rf.rules = ""
				spec = rf.llmSpec()
				break
			}
		}
	}
	f.llm = spec
	provider, _, _ := loader.ParseSpec(spec)
	scripted := provider == "scripted"
	for _, c := range cases {
		cf := f.forCase(c)
		if scripted && cf.rules == "" && os.Getenv("ENGINE_LLM_RULES") == "" {
			return cli.Usagef("--cases %s: case %s has no rules, which the scripted model needs", f.cases, c.Name)
		}
		if err := cf.check(); err != nil {
			return fmt.Errorf("--cases %s: case %s: %w", f.cases, c.Name, err)
		}
	}
	cfg := eval.Config{
		Cases: cases, Arms: arms, Repeats: ef.repeats, WarmRuns: ef.warmRuns, ChangeAfter: ef.changeAfter,
		Parallel: ef.parallel, Out: ef.out,
		LLM: spec, Browser: f.browser, EngineVersion: strings.TrimPrefix(cli.ReadBuildInfo().String(), "engine "),
		Scripted: scripted,
		Run: func(ctx context.Context, r eval.Run) (eval.Outcome, error) {
			rf := f.forCase(r.Case)
			rf.url, rf.noMemory, rf.replay, rf.quiet = r.URL(), r.NoMemory, r.Replay, true
			res, err := a.runOnce(ctx, rf, r.DataDir)
			if err != nil {
				return eval.Outcome{}, err
			}
			return eval.Outcome{RunID: res.RunID, Status: string(res.Status), Success: res.Success, Reason: res.Reason,
				Steps: res.Steps, Errors: res.Errors, LLMCalls: res.LLMCalls, Tokens: res.Usage.Total()}, nil
		},
		Progress: a.evalProgress(),
	}
	if err := cfg.Check(); err != nil {
		return cli.Usagef("%s: %v", caseSource(f, ef), err)
	}
	if scripted {
		fmt.Fprintln(a.Stdout, eval.ScriptedNote)
	}
	rep, runErr := eval.Eval(ctx, cfg)
	if errors.Is(runErr, eval.ErrMismatch) {
		return engine.MarkInvalid(runErr)
	}
	if rep == nil || rep.Runs() == 0 {
		return runErr // nothing to report
	}
	if err := rep.Write(ef.out); err != nil {
		return errors.Join(runErr, err)
	}
	a.printEval(rep)
	fmt.Fprintf(a.Stdout, "report: %s/report.json, %s/report.html, %s/junit.xml; runs: %s/%s\n", ef.out, ef.out, ef.out, ef.out, eval.LogFile)
	if runErr != nil {
		return runErr
	}
	var held []string
	for _, c := range conds {
		ok, shown, err := c.Holds(rep)
		if err != nil {
			return fmt.Errorf("--fail-if %s: %w", c.Text, err)
		}
		if ok {
			held = append(held, shown)
		}
	}
	if len(held) > 0 {
		return fmt.Errorf("%w: --fail-if holds: %s", cli.ErrCheck, strings.Join(held, "; "))
	}
	return nil
}

// caseSource names where the cases come from, in errors.
func caseSource(f runFlags, ef evalFlags) string {
	if ef.suite != "" {
		return "--suite " + ef.suite
	}
	return "--cases " + f.cases
}

// onlyCases keeps the cases --only names.
func onlyCases(cases []eval.Case, only string) ([]eval.Case, error) {
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.Name
	}
	keep, err := eval.Only(names, only)
	if err != nil {
		return nil, cli.Usagef("--only: %v", err)
	}
	var out []eval.Case
	for _, c := range cases {
		if slices.Contains(keep, c.Name) {
			out = append(out, c)
		}
	}
	return out, nil
}

// gymTasks are the gym's tasks --only names (all without it).
func gymTasks(only string) ([]gym.Task, error) {
	tasks := gym.Tasks()
	if only == "" {
		return tasks, nil
	}
	names := make([]string, len(tasks))
	for i, t := range tasks {
		names[i] = t.Name
	}
	keep, err := eval.Only(names, only)
	if err != nil {
		return nil, cli.Usagef("--only: %v", err)
	}
	var out []gym.Task
	for _, t := range tasks {
		if slices.Contains(keep, t.Name) {
			out = append(out, t)
		}
	}
	return out, nil
}

// gymCases writes the tasks' rules under out and returns them as cases on
// the server srv. A case's fingerprint names its site and path, not the
// server's ports, which change each time the gym starts: the same tasks
// on another start are the same evaluation, and it resumes.
func gymCases(out string, srv *gym.Server, tasks []gym.Task) ([]eval.Case, error) {
	gcs, err := gym.WriteCases(out, srv, tasks)
	if err != nil {
		return nil, err
	}
	cases := make([]eval.Case, len(gcs))
	for i, g := range gcs {
		cases[i] = eval.Case{Name: g.Name, Goal: g.Goal, URL: g.URL, ChangedURL: g.ChangedURL, Rules: g.Rules,
			MaxSteps: g.MaxSteps, Key: "gym:" + tasks[i].Site + tasks[i].Path}
	}
	return cases, nil
}

// listGym prints the gym's tasks (those --only names): a table, or JSON.
func (a *app) listGym(ef evalFlags) error {
	tasks, err := gymTasks(ef.only)
	if err != nil {
		return err
	}
	if ef.json {
		return cli.PrintJSON(a.Stdout, tasks)
	}
	t := cli.NewTable(a.Stdout, "TASK", "SITE", "TRAPS", "GOAL")
	for _, task := range tasks {
		t.Row(task.Name, task.Site, strings.Join(task.Traps, ","), task.Goal)
	}
	t.Flush()
	return nil
}

// evalProgress shows each run on stdout: a bar with the ETA on a
// terminal, a line a run otherwise.
func (a *app) evalProgress() func(eval.Progress) {
	return evalProgress(a.Stdout, cli.IsTerminal(a.Stdout), time.Now)
}

// evalProgress shows each run on w: with tty, a bar with done/total and
// the ETA (the time per run made so far times the runs left), redrawn in
// place as a run starts and left with the run's result as it ends;
// without, a line a run as it ends. now is the clock.
func evalProgress(w io.Writer, tty bool, now func() time.Time) func(eval.Progress) {
	start := now()
	made := 0
	return func(p eval.Progress) {
		r := p.Run
		what := fmt.Sprintf("%s r%d %s", r.Case.Name, r.Repeat, r.Arm)
		if r.Arm == eval.Warm {
			what += fmt.Sprintf("-%d", r.Index)
		}
		if r.Changed {
			what += eval.ChangedSuffix
		}
		if p.Outcome == nil {
			if tty {
				eta := "ETA -"
				if made > 0 {
					left := time.Duration(int64(now().Sub(start)) / int64(made) * int64(p.Total-p.Done))
					eta = "ETA " + left.Round(time.Second).String()
				}
				fmt.Fprintf(w, "\r%s %d/%d %-40s %s ", cli.Bar(p.Done, p.Total, 20), p.Done, p.Total, cli.Truncate(what, 40), eta)
			}
			return
		}
		if !p.Logged {
			made++
		}
		o := p.Outcome
		line := fmt.Sprintf("%s (%s)", o.Status, tally(o.Steps, o.Errors, o.LLMCalls))
		if p.Logged {
			line = "in the log: " + line
		}
		if tty {
			fmt.Fprintf(w, "\r%s %d/%d %-40s %s\n", cli.Bar(p.Done, p.Total, 20), p.Done, p.Total, cli.Truncate(what, 40), line)
			return
		}
		fmt.Fprintf(w, "run %d/%d %s: %s\n", p.Done, p.Total, what, line)
	}
}

// printEval prints each arm's means and each arm against no-memory.
func (a *app) printEval(rep *eval.Report) {
	out := a.Stdout
	fmt.Fprintln(out)
	t := cli.NewTable(out, "ARM", "RUNS", "SUCCESS", "STEPS", "ERRORS", "LLM CALLS", "TOKENS", "WALL MS")
	for _, ar := range rep.Arms {
		row := []any{ar.Name, len(ar.Runs)}
		for _, m := range eval.Metrics {
			row = append(row, num(float64(ar.Summary[m].Mean)))
		}
		t.Row(row...)
	}
	t.Flush()
	if len(rep.Comparisons) == 0 || rep.Comparisons[0].Cases == 0 {
		return
	}
	fmt.Fprintf(out, "\nAgainst %s on the same variant (paired by case; change with its 95 %% bootstrap interval, sign-flip p):\n", eval.NoMemory)
	t = cli.NewTable(out, "ARM", "METRIC", "MEAN", "NO-MEMORY", "CHANGE", "CI95", "P")
	for _, c := range rep.Comparisons {
		if c.Cases == 0 {
			continue
		}
		for _, m := range eval.Metrics {
			d := c.Metrics[m]
			t.Row(c.Arm, m, num(float64(d.Mean)), num(float64(d.BaselineMean)), pct(float64(d.RelativeChange)),
				"["+pct(float64(d.RelativeChangeCI95[0]))+", "+pct(float64(d.RelativeChangeCI95[1]))+"]", eval.FormatP(float64(d.P)))
		}
	}
	t.Flush()
}

func num(f float64) string {
	if f != f {
		return "-"
	}
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

func pct(f float64) string {
	if f != f {
		return "-"
	}
	return fmt.Sprintf("%+.0f%%", f*100)
}
