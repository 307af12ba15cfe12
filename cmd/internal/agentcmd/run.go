package agentcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/engine-dev/engine/cmd/internal/cli"
	"github.com/engine-dev/engine/cmd/internal/suite"
	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/agent"
	"github.com/engine-dev/engine/engine/agent/navpolicy"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/server/attach"
	"github.com/engine-dev/engine/engine/trust/redact"
	llmplugin "github.com/engine-dev/engine/plugins/llm"
	"github.com/engine-dev/engine/plugins/loader"
	"github.com/engine-dev/engine/plugins/scripted"
)

func init() {
	commandSets = append(commandSets, func(a *app) []*cobra.Command { return []*cobra.Command{a.runCommand()} })
}

// runFlags are the flags of `engine run` (and the defaults a suite's cases
// inherit).
type runFlags struct {
	goal, url, browser, llm, rules, sessionID string
	runID                                     string
	noMemory                                  bool
	maxSteps, maxErrors                       int
	approve, mode                             string
	replay                                    bool
	resumeRun, forkRun                        string
	cases, isolation                          string
	asJSON, quiet                             bool
	headed                                    bool
	allowDomains                              string
	allowPrivate                              bool
	llmTimeout                                time.Duration
	llmRetries, llmMaxTokens                  int
	keepContacts                              bool
	traceScoring                              bool
	traceTTLDays                              int
}

// addLLMFlags registers the flags that bound model calls (run and demo).
func addLLMFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.DurationVar(&f.llmTimeout, "llm-timeout", agent.DefaultLLMTimeout, "give up on one LLM call after this long")
	fl.IntVar(&f.llmRetries, "llm-retries", agent.DefaultLLMRetries, "retry an LLM call this many times on HTTP 429, 5xx or a dropped connection (0: never)")
	fl.IntVar(&f.llmMaxTokens, "llm-max-tokens", llmplugin.DefaultMaxTokens, "cap on the tokens of one LLM answer (max_tokens)")
}

// llmPolicy is the agent's LLM call policy from the flags.
func (f *runFlags) llmPolicy() agent.LLMPolicy {
	p := agent.LLMPolicy{Timeout: f.llmTimeout, Retries: f.llmRetries}
	if f.llmRetries == 0 {
		p.Retries = -1
	}
	return p
}

// defaultLLM is the provider when neither --llm nor ENGINE_LLM says.
const defaultLLM = "openai:gpt-4o-mini"

func (a *app) runCommand() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run",
		Short: cli.AgentShort("run"),
		Long: `Run the browser agent: it opens URL in the browser plugin, and each step
shows the LLM the page and what memory holds for the site, runs the tool
the LLM calls, and after the run learns lessons, the trajectory, selectors,
facts and the session. Artifacts go to <data-dir>/runs/<run-id>/.

The data dir is held only while memory is read or written, never during a
browser action or an LLM call: engine runs / engine query work from another
terminal while a run goes, and show its progress.

Environment:
  ENGINE_LLM        provider when --llm is not given (default ` + defaultLLM + `)
  ENGINE_LLM_RULES  the scripted provider's rules file when --rules is not given
  ENGINE_KEEP_CONTACTS=1  as --keep-contacts
  ENGINE_TRACE_SCORING=1  as --trace-scoring`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cli.TraceFlags(cmd.Flags(), "trace-scoring", &f.traceScoring, f.traceTTLDays); err != nil {
				return err
			}
			if f.cases != "" {
				return a.runSuite(cmd.Context(), f)
			}
			res, err := a.runOnce(cmd.Context(), f, a.DataDir)
			if err != nil {
				return err
			}
			if f.asJSON {
				if err := cli.PrintJSON(a.Stdout, res); err != nil {
					return err
				}
			} else {
				a.printResult(res)
			}
			if !res.Success {
				return fmt.Errorf("run %s failed: %s", res.RunID, res.Reason)
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.goal, "goal", "", "what the agent should do")
	fl.StringVar(&f.url, "url", "", "where it starts")
	fl.StringVar(&f.browser, "browser", "chromedp", "browser plugin")
	fl.StringVar(&f.llm, "llm", "", "LLM as PROVIDER[:MODEL] (env ENGINE_LLM; default "+defaultLLM+", or scripted with --rules)")
	fl.StringVar(&f.rules, "rules", "", "rules `FILE` for the scripted LLM provider")
	fl.StringVar(&f.runID, "run-id", "", "the run's id (default: generated), for orchestrators that name runs: "+run.IDPattern+", no \"..\"")
	fl.StringVar(&f.sessionID, "session-id", "", "tag the run with a session id (groups related runs)")
	fl.BoolVar(&f.noMemory, "no-memory", false, "run without reading or teaching memory (a clean baseline)")
	fl.IntVar(&f.maxSteps, "max-steps", agent.DefaultMaxSteps, "stop after N steps (max_steps)")
	fl.IntVar(&f.maxErrors, "max-errors", agent.DefaultMaxErrors, "stop after N errors (max_errors)")
	fl.StringVar(&f.approve, "approve", "ask", "actions that buy, pay, delete or submit personal data: auto, ask or never")
	fl.StringVar(&f.mode, "mode", "step", "step (one tool call a step) or planner (planner/executor iterations)")
	fl.BoolVar(&f.replay, "replay", false, "replay a closely matching trajectory without the LLM, handing over at the first step that does not hold")
	fl.StringVar(&f.resumeRun, "resume-run", "", "continue run `ID` where it ended, in its session")
	fl.StringVar(&f.forkRun, "fork-run", "", "branch off run `ID` in a new session")
	fl.StringVar(&f.cases, "cases", "", "run a suite of cases from `FILE` (JSON), one after another")
	fl.StringVar(&f.isolation, "memory-isolation", "shared", "for --cases: shared (one memory) or per-run (each case its own)")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	fl.BoolVar(&f.quiet, "quiet", false, "do not print each step")
	fl.BoolVar(&f.headed, "headed", false, "show the browser window")
	fl.StringVar(&f.allowDomains, "allow-domains", "", "navigate only to these `DOMAINS` (comma-separated) and their subdomains")
	fl.BoolVar(&f.allowPrivate, "allow-private", false, "allow private, loopback and link-local addresses (allowed anyway when --url is one)")
	fl.BoolVar(&f.traceScoring, "trace-scoring", false, "pick the reference trajectory by the weighted rank: similarity 60%, recency 20%, speed 10%, verification 10% (env ENGINE_TRACE_SCORING=1)")
	cli.TraceTTLFlag(fl, &f.traceTTLDays)
	fl.BoolVar(&f.keepContacts, "keep-contacts", os.Getenv("ENGINE_KEEP_CONTACTS") == "1", "keep email addresses and phone numbers in what the run stores (redacted by default; env ENGINE_KEEP_CONTACTS=1)")
	addLLMFlags(fl, &f)
	return c
}

// check validates the flags of one run.
func (f *runFlags) check() error {
	if f.resumeRun != "" && f.forkRun != "" {
		return cli.Usagef("--resume-run and --fork-run cannot be used together")
	}
	if f.resumeRun == "" && f.forkRun == "" {
		if strings.TrimSpace(f.goal) == "" {
			return cli.Usagef("the goal is empty: give --goal TEXT")
		}
		if strings.TrimSpace(f.url) == "" {
			return cli.Usagef("no start URL: give --url URL")
		}
	}
	for _, id := range []struct{ flag, v string }{{"--run-id", f.runID}, {"--resume-run", f.resumeRun}, {"--fork-run", f.forkRun}} {
		if id.v != "" {
			if err := run.CheckID(id.v); err != nil {
				return cli.Usagef("%s: %v", id.flag, err)
			}
		}
	}
	if f.maxSteps <= 0 {
		return cli.Usagef("--max-steps must be positive, not %d", f.maxSteps)
	}
	if f.maxErrors <= 0 {
		return cli.Usagef("--max-errors must be positive, not %d", f.maxErrors)
	}
	if f.llmTimeout <= 0 {
		return cli.Usagef("--llm-timeout must be positive, not %v", f.llmTimeout)
	}
	if f.llmRetries < 0 {
		return cli.Usagef("--llm-retries must be 0 or more, not %d", f.llmRetries)
	}
	if f.llmMaxTokens <= 0 {
		return cli.Usagef("--llm-max-tokens must be positive, not %d", f.llmMaxTokens)
	}
	switch agent.Approval(f.approve) {
	case agent.ApproveAuto, agent.ApproveAsk, agent.ApproveNever:
	default:
		return cli.Usagef("--approve %q: use auto, ask or never", f.approve)
	}
	switch agent.Mode(f.mode) {
	case agent.StepMode, agent.PlannerMode:
	default:
		return cli.Usagef("--mode %q: use step or planner", f.mode)
	}
	nav, err := f.navigation()
	if err != nil {
		return err
	}
	if f.url != "" {
		if err := checkURL(f.url); err != nil {
			return err
		}
		nav.Resolver = nil // names are resolved by the run, not to check flags
		if _, err := nav.ForStart(context.Background(), f.url); err != nil {
			return cli.Usagef("--url %s", strings.TrimPrefix(err.Error(), "start URL "))
		}
	}
	if f.rules != "" {
		// The scripted plugin reads it in another process; a missing,
		// empty or malformed file is the caller's mistake, said here
		// (exit 2, before a run is registered) rather than as a plugin
		// failure.
		if _, err := scripted.Load(f.rules); err != nil {
			return cli.Usagef("--rules %s: %v", f.rules, strings.TrimPrefix(err.Error(), "scripted rules: "))
		}
	}
	return nil
}

// navigation is the navigation policy of --allow-domains and
// --allow-private; host names are resolved to check their addresses unless
// private addresses are allowed anyway.
func (f *runFlags) navigation() (*navpolicy.Policy, error) {
	allow, err := navpolicy.ParseDomains(f.allowDomains)
	if err != nil {
		return nil, cli.Usagef("--allow-domains: %v", err)
	}
	p := &navpolicy.Policy{Allow: allow, AllowPrivate: f.allowPrivate}
	if !f.allowPrivate {
		p.Resolver = navpolicy.NewDNSResolver(2 * time.Second)
	}
	return p, nil
}

func checkURL(u string) error {
	if !strings.Contains(u, "://") {
		// "javascript:..." is left to the navigation policy to refuse;
		// "example.com" and "localhost:3000" lack a scheme.
		scheme, rest, ok := strings.Cut(u, ":")
		if !ok || scheme == "" || strings.ContainsAny(scheme, "./") || (rest != "" && rest[0] >= '0' && rest[0] <= '9') {
			return cli.Usagef("--url %q: give a full URL, such as https://%s", u, u)
		}
	}
	if pu, err := url.Parse(u); err == nil && pu.Port() != "" {
		if n, err := strconv.Atoi(pu.Port()); err != nil || n < 1 || n > 65535 {
			return cli.Usagef("--url %s: port %s is not a port (1 to 65535)", u, pu.Port())
		}
	}
	return nil
}

func (f *runFlags) llmSpec() string {
	switch {
	case f.llm != "":
		return f.llm
	case f.rules != "":
		return "scripted"
	case os.Getenv("ENGINE_LLM") != "":
		return os.Getenv("ENGINE_LLM")
	}
	return defaultLLM
}

// runLockWait is how long a run waits for another engine process to
// release the data dir when it has to hold the data dir itself: longer
// than a command's, since giving up ends the run.
const runLockWait = 30 * time.Second

// runOnce runs one task with the plugins, against the memory in dataDir
// ("" for the usual data dir).
func (a *app) runOnce(ctx context.Context, f runFlags, dataDir string) (_ *agent.Result, err error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	now, err := a.Now()
	if err != nil {
		return nil, err
	}
	if dataDir == "" {
		if dataDir, err = a.ResolveDataDir(); err != nil {
			return nil, err
		}
	}
	// The run holds memory for its whole length: it attaches to the
	// server that holds the data dir, or holds it itself and serves it on
	// the data dir's socket, so other commands and runs go through it.
	aopts, dir, err := a.AttachOptions(dataDir)
	if err != nil {
		return nil, err
	}
	aopts.Serve, aopts.LockWait = true, runLockWait
	// --keep-contacts holds for the memory this run serves too (a memory
	// server's own setting decides for the memory it serves).
	aopts.Redact.KeepContacts = aopts.Redact.KeepContacts || f.keepContacts
	aopts.Logger = slog.New(slog.NewTextHandler(a.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	mem, err := attach.Open(ctx, dir, aopts)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, mem.Close()) }()
	goal, url, sessionID, parent := f.goal, f.url, f.sessionID, ""
	if id := f.resumeRun + f.forkRun; id != "" {
		var sc *run.Scenario
		var err error
		if f.resumeRun != "" {
			sc, err = mem.ResumeRun(ctx, id, goal)
		} else {
			sc, err = mem.ForkRun(ctx, id, goal)
		}
		if errors.Is(err, engine.ErrNotFound) {
			return nil, engine.NotFound(fmt.Sprintf("no run %q (see engine runs)", id))
		}
		if err != nil {
			return nil, err
		}
		goal, url, parent = sc.Goal, sc.StartURL, sc.ParentRunID
		if sessionID == "" {
			sessionID = sc.SessionID
		}
	}
	emit, closeEvents, err := a.Events()
	if err != nil {
		return nil, err
	}
	defer closeEvents()

	// The model first: a missing key fails before a browser starts.
	opts := loader.Options{Logger: pluginLogger(a.Stderr)}
	var model engine.Model
	spec := f.llmSpec()
	mopts := opts
	mopts.CallTimeout = f.llmTimeout + 10*time.Second // a backstop: the loop's own deadline comes first
	m, err := loader.OpenModel(ctx, spec, loader.ModelOptions{Options: mopts, RulesFile: f.rules, RequestTimeout: f.llmTimeout, MaxTokens: f.llmMaxTokens})
	if err != nil {
		return nil, fmt.Errorf("llm %s: %w", spec, err)
	}
	defer m.Close()
	model = m
	browser, err := loader.OpenBrowser(ctx, f.browser, loader.BrowserOptions{Options: opts, Headed: f.headed})
	if err != nil {
		return nil, fmt.Errorf("browser %s: %w", f.browser, err)
	}
	defer browser.Close()

	provider, name, _ := loader.ParseSpec(spec)
	cfg := agent.Config{
		Goal: goal, StartURL: url, RunID: f.runID, SessionID: sessionID, ParentRunID: parent,
		Browser: browser, Model: model, ModelName: strings.TrimSuffix(provider+"/"+name, "/"), Memory: mem.Client, NoMemory: f.noMemory,
		Now: now, Events: emit, MaxSteps: f.maxSteps, MaxErrors: f.maxErrors,
		Approve: agent.Approval(f.approve), Approver: a.approver(), Mode: agent.Mode(f.mode),
		Replay: f.replay, RunsDir: cli.RunsDir(dataDir, aopts.Namespace), LLM: f.llmPolicy(),
		Redact:       redact.Options{KeepContacts: f.keepContacts},
		TraceScoring: f.traceScoring, TraceTTLDays: f.traceTTLDays,
	}
	if cfg.Navigation, err = f.navigation(); err != nil {
		return nil, err
	}
	if !f.quiet {
		cfg.OnStep = a.printStep
	}
	res, err := agent.Run(ctx, cfg)
	if errors.Is(err, run.ErrExists) {
		return nil, engine.MarkInvalid(err)
	}
	return res, err
}

// printStep prints one step as it ends, on stderr.
func (a *app) printStep(si agent.StepInfo) {
	tag := ""
	if si.Replayed {
		tag = " (replayed)"
	}
	switch {
	case si.Skipped:
		fmt.Fprintf(a.Stderr, "step %d: %s → skipped (not approved)\n", si.Step, si.Action)
	case si.Action == "":
		fmt.Fprintf(a.Stderr, "step %d: invalid answer → %s\n", si.Step, si.Error)
	case si.OK:
		fmt.Fprintf(a.Stderr, "step %d: %s → ok%s\n", si.Step, si.Action, tag)
	case si.Error == "":
		fmt.Fprintf(a.Stderr, "step %d: %s → failed (no reason given)%s\n", si.Step, si.Action, tag)
	case si.Action == "finish":
		fmt.Fprintf(a.Stderr, "step %d: finish → %s\n", si.Step, si.Error)
	default:
		fmt.Fprintf(a.Stderr, "step %d: %s → error: %s%s\n", si.Step, si.Action, si.Error, tag)
	}
}

func (a *app) printResult(res *agent.Result) {
	out := a.Stdout
	fmt.Fprintf(out, "run %s %s: %s\n", res.RunID, res.Status, res.Reason)
	if res.Answer != "" {
		fmt.Fprintf(out, "  answer: %s\n", res.Answer)
	}
	fmt.Fprintf(out, "  steps %d, errors %d, LLM calls %d, tokens %d\n", res.Steps, res.Errors, res.LLMCalls, res.Usage.Total())
	if res.Replayed > 0 {
		fmt.Fprintf(out, "  replayed %s: saved %s, ~%s\n", cli.Plural(res.Replayed, "step", "steps"), cli.Plural(res.LLMCallsSaved, "LLM call", "LLM calls"), cli.Plural(res.TokensSaved, "token", "tokens"))
	}
	fmt.Fprintf(out, "  learned %s, reused %d; lessons helped %s", cli.Plural(res.LessonsLearned, "new lesson", "new lessons"), res.LessonsUsed, cli.Plural(res.Helped, "time", "times"))
	if res.TrajectoryID != "" {
		fmt.Fprintf(out, "; trajectory %s", res.TrajectoryID)
	}
	fmt.Fprintln(out)
	for _, w := range res.Warnings {
		fmt.Fprintf(out, "  warning: %s\n", w)
	}
	if res.Dir != "" {
		fmt.Fprintf(out, "  artifacts: %s\n", res.Dir)
	}
}

// approver asks on stdin under --approve ask; no answer (EOF) rejects.
func (a *app) approver() agent.Approver {
	var (
		once sync.Once
		rd   *bufio.Reader
	)
	return func(ctx context.Context, r agent.ApprovalRequest) (bool, error) {
		once.Do(func() { rd = bufio.NewReader(a.Stdin) })
		fmt.Fprintf(a.Stderr, "approve step %d: %s (it %s) on %s? [y/N] ", r.Step, r.Action, r.Why, r.URL)
		line, err := rd.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return false, err
		}
		ans := strings.ToLower(strings.TrimSpace(line))
		ok := ans == "y" || ans == "yes"
		if ok {
			fmt.Fprintln(a.Stderr, "approved")
		} else {
			fmt.Fprintln(a.Stderr, "rejected")
		}
		return ok, ctx.Err()
	}
}

// suiteCase is one case of a --cases file.
type suiteCase = suite.Case

// forCase is the run flags of case c: its goal, url, rules and max_steps
// over the command's.
func (f runFlags) forCase(c suiteCase) runFlags {
	cf := f
	cf.cases, cf.goal, cf.url = "", c.Goal, c.URL
	if c.Rules != "" {
		cf.rules = c.Rules
	}
	if c.MaxSteps > 0 {
		cf.maxSteps = c.MaxSteps
	}
	return cf
}

func readCases(path string) ([]suiteCase, error) {
	b, err := engine.ReadInputFile(path, engine.MaxInputFile)
	if err != nil {
		return nil, cli.Usagef("--cases: %v", err)
	}
	cases, err := suite.Parse(b, path)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	return cases, nil
}

// runSuite runs the cases one after another, with memory shared or
// isolated per case.
func (a *app) runSuite(ctx context.Context, f runFlags) error {
	if f.isolation != "shared" && f.isolation != "per-run" {
		return cli.Usagef("--memory-isolation %q: use shared or per-run", f.isolation)
	}
	if f.resumeRun != "" || f.forkRun != "" {
		return cli.Usagef("--cases cannot be combined with --resume-run or --fork-run")
	}
	cases, err := readCases(f.cases)
	if err != nil {
		return err
	}
	base, err := a.ResolveDataDir()
	if err != nil {
		return err
	}
	suiteID := time.Now().UTC().Format("20060102T150405")
	tty := cli.IsTerminal(a.Stdout)
	type row struct {
		c   suiteCase
		res *agent.Result
		err error
		dir string
	}
	// Every case is checked before the first runs: a bad rules file or
	// start URL in the tenth case is exit 2 with nothing run.
	for _, c := range cases {
		cf := f.forCase(c)
		if err := cf.check(); err != nil {
			return fmt.Errorf("--cases %s: case %s: %w", f.cases, c.Name, err)
		}
	}
	var rows []row
	failed := 0
	for i, c := range cases {
		cf := f.forCase(c)
		cf.quiet = true
		dir := base
		if f.isolation == "per-run" {
			dir = filepath.Join(base, "isolated", suiteID, fmt.Sprintf("%02d-%s", i+1, c.Name))
		}
		if tty {
			fmt.Fprintf(a.Stdout, "\r%s %d/%d %s", cli.Bar(i, len(cases), 20), i, len(cases), cli.Truncate(c.Name, 30))
		}
		res, err := a.runOnce(ctx, cf, dir)
		rows = append(rows, row{c, res, err, dir})
		status := ""
		switch {
		case err != nil:
			status = "error: " + err.Error()
			failed++
		case !res.Success:
			status = fmt.Sprintf("failed: %s (%s)", res.Reason, tally(res.Steps, res.Errors, res.LLMCalls))
			failed++
		default:
			status = fmt.Sprintf("completed (%s)", tally(res.Steps, res.Errors, res.LLMCalls))
		}
		if tty {
			fmt.Fprintf(a.Stdout, "\r%s %d/%d %-30s\n", cli.Bar(i+1, len(cases), 20), i+1, len(cases), cli.Truncate(c.Name, 30))
		} else {
			fmt.Fprintf(a.Stdout, "case %d/%d %s: %s\n", i+1, len(cases), c.Name, status)
		}
		if ctx.Err() != nil {
			break
		}
	}
	if f.asJSON {
		out := []map[string]any{}
		for _, r := range rows {
			m := map[string]any{"case": r.c.Name, "data_dir": r.dir}
			if r.err != nil {
				m["error"] = r.err.Error()
			} else {
				m["result"] = r.res
			}
			out = append(out, m)
		}
		if err := cli.PrintJSON(a.Stdout, out); err != nil {
			return err
		}
	} else {
		t := cli.NewTable(a.Stdout, "CASE", "RUN", "STATUS", "STEPS", "ERRORS", "LLM CALLS", "TOKENS", "REASON")
		for _, r := range rows {
			if r.err != nil {
				t.Row(r.c.Name, "-", "error", "-", "-", "-", "-", cli.Truncate(r.err.Error(), 60))
				continue
			}
			t.Row(r.c.Name, r.res.RunID, r.res.Status, r.res.Steps, r.res.Errors, r.res.LLMCalls, r.res.Usage.Total(), r.res.Reason)
		}
		if err := t.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(a.Stdout, "memory: %s\n", f.isolation)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d cases failed", failed, len(rows))
	}
	return nil
}

// tally is "<n> steps, <n> errors, <n> LLM calls", each noun fitting its count.
func tally(steps, errs, calls int) string {
	return cli.Plural(steps, "step", "steps") + ", " + cli.Plural(errs, "error", "errors") + ", " + cli.Plural(calls, "LLM call", "LLM calls")
}
