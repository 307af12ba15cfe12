package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/agent/navpolicy"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/engine/trust/redact"
)

// ReasonSessionEnded ends a session's run that was still open when the
// session ended (the host closed it, or went away) without saying how the
// task went: the run is failed.
const ReasonSessionEnded = "session_ended"

// SessionConfig configures a Session.
type SessionConfig struct {
	// Open starts the session's browser, at its first browser call (and
	// again after CloseBrowser). Required.
	Open func(ctx context.Context) (engine.Browser, error)
	// Memory is the memory API the session reads and teaches. Required.
	Memory *api.Client
	// ModelName names the outside model (its MCP client) in the
	// provenance of what the session's runs write.
	ModelName string
	// Navigation is where the browser may go; nil for http(s) only,
	// public addresses only. A URL the outside model gives never lifts it
	// (unlike engine run's start URL, which its operator gives).
	Navigation *navpolicy.Policy
	// RunsDir is where each run's artifact folder goes; "" for none.
	RunsDir string
	Now     func() time.Time
	Events  event.Func
	// Redact is how what the session writes is redacted, as Config.Redact.
	Redact redact.Options
	// Budget is the memory context's token budget (0: memctx's default).
	Budget int
	// TraceScoring and TraceTTLDays pick the reference trajectory as
	// Config's do (engine run's --trace-scoring and --trace-ttl-days).
	TraceScoring bool
	TraceTTLDays int
}

// Session is a browser driven by a model outside the loop (an MCP host's)
// with the loop's memory in it: each action goes through the loop's own
// perform (guardrails of the navigation policy, secrets noted before
// anything is written, the action log, selectors), the page after it is
// read as the loop reads it, and its memory phase adds the site's memory
// when the page enters a site and the tips for a failure on the page
// (Trigger A). Each task is a registered run: StartTask opens one
// (answering with the reference trajectory), EndTask ends it with the
// stated outcome and learns through the same post-run learning as
// engine run. An action with no task open opens a run of its own, ended
// failed (its action log learned from) when a task starts or the session
// closes. A Session is safe for concurrent use; calls run one at a time.
type Session struct {
	mu      sync.Mutex
	cfg     SessionConfig
	red     *redact.Redactor // one for the whole session: a secret typed in one task stays redacted in the next
	browser engine.Browser   // nil until the first browser call, and after CloseBrowser
	r       *runner          // the open run; nil when none is
	stated  bool             // r was opened by StartTask, not by an action
	page    Page             // the page last seen, kept across runs
	closed  bool
}

// NewSession returns a session; its browser starts at its first browser
// call.
func NewSession(cfg SessionConfig) (*Session, error) {
	if cfg.Open == nil || cfg.Memory == nil {
		return nil, engine.Invalid("session", "a browser opener and a memory are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Session{cfg: cfg, red: redact.New(cfg.Redact)}, nil
}

// Step is one action the outside model asks for: its kind, its target (a
// snapshot ref, else an accessible name as engine run's actions name
// elements) and its value (text, key, option, URL), or a wait's bound.
type Step struct {
	Kind    engine.ActionKind
	Ref     string
	Element string
	Value   string
	Millis  int
}

// Answer is what a browser call tells the outside model: the page after it
// as the loop renders it (with the loop's bounds), the site's memory when
// the call entered a site, and notes (a page that moved by itself and was
// brought back).
type Answer struct {
	URL    string
	Page   string
	Memory string
	Notes  []string
}

// ActionFailed is a failed action: Message is the browser's (or the
// navigation policy's) reason, Tips the lessons memory recalled for that
// command and error on that site, and Answer the page after it.
type ActionFailed struct {
	Message string
	Tips    string
	Answer  *Answer
}

// Error is the failure as the loop shows it to its own model: the error,
// then the tips beside it.
func (e *ActionFailed) Error() string {
	var b strings.Builder
	writeFailure(&b, e.Message, e.Tips)
	return strings.TrimSpace(b.String())
}

// TaskStart is StartTask's answer.
type TaskStart struct {
	RunID string
	// Reference is the reference trajectory's section as the loop shows it
	// (its steps bound to the goal's parameters); "" when none matched.
	Reference string
	Match     *trajectory.Match
}

// errClosed is the answer of every call after Close.
var errClosed = errors.New("the session has ended")

// ErrNoPage is an action asked for before the browser shows any page.
var ErrNoPage = engine.Invalid("browser", "the browser shows no page yet: navigate to a URL first")

// taskURL runs the checks StartTask and Replay open with, what naming the
// call in their errors: the session is open, the goal is stated, and the
// start URL — the page the browser shows when startURL is "" — is a web
// address the navigation policy allows. It returns the start URL.
func (s *Session) taskURL(ctx context.Context, what, goal, startURL string) (string, error) {
	if s.closed {
		return "", errClosed
	}
	if strings.TrimSpace(goal) == "" {
		return "", engine.Invalid(what, "the goal is empty")
	}
	if startURL == "" {
		startURL = s.page.URL
		if !run.WebURL(startURL) {
			return "", engine.Invalid(what, "give the task's url: the browser shows no site yet")
		}
	} else if _, err := domain.Host(startURL); err != nil {
		return "", engine.Invalidf(what, "url: %v", err)
	}
	if err := s.cfg.Navigation.Check(ctx, startURL); err != nil {
		return "", engine.Invalidf(what, "%v", err)
	}
	return startURL, nil
}

// StartTask opens a task: a registered run with goal on the site of
// startURL ("" for the page the browser shows), and the reference
// trajectory memory holds for it there. A run still open is ended first
// (failed: the task it was for was not ended).
func (s *Session) StartTask(ctx context.Context, goal, startURL string) (*TaskStart, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	startURL, err := s.taskURL(ctx, "task", goal, startURL)
	if err != nil {
		return nil, err
	}
	if s.r != nil {
		reason := ReasonUnconfirmed + ": a new task started before memory_task_end"
		if !s.stated {
			reason = ReasonSessionEnded + ": no task was stated"
		}
		s.end(ctx, false, "", reason)
	}
	r, err := s.open(ctx, goal, startURL, true)
	if err != nil {
		return nil, err
	}
	ts := &TaskStart{RunID: r.res.RunID}
	if r.cfg.NoMemory {
		return ts, nil
	}
	mc, err := r.mem.Context(ctx, r.traced(memctx.Request{URL: r.red.String(startURL), Goal: r.goal, Step: 1, Budget: r.cfg.Budget, SkipDomainTips: true}))
	if err != nil {
		return nil, err
	}
	if mc.Match != nil {
		for _, sec := range mc.Sections {
			if sec.Name == memctx.Trajectory {
				ts.Reference, ts.Match = sec.Text, mc.Match
				// Shown for the whole task: the host keeps it in its context.
				r.shownTrajectory, r.shownSteps = mc.Match.Trajectory.ID, mc.Match.Steps
			}
		}
	}
	return ts, nil
}

// EndTask ends the open task with its stated outcome, as engine run's
// finish tool does: the run completed (success) or failed (gave up), its
// trajectory, selectors and facts recorded on success, lessons learned
// from its action log, memory shown credited, its session recorded.
func (s *Session) EndTask(ctx context.Context, success bool, answer string) (*Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if s.r == nil || !s.stated {
		return nil, engine.Invalid("task", "no task is open: memory_task_start opens one")
	}
	reason := ReasonFinished
	if !success {
		reason = ReasonGaveUp + ": " + answer
	}
	return s.end(ctx, success, answer, reason), nil
}

// Act runs one action and answers with the page after it; a failed action
// is an *ActionFailed (with the page after it and its tips).
func (s *Session) Act(ctx context.Context, st Step) (*Answer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	start := s.page.URL
	if st.Kind == engine.ActNavigate {
		if s.r == nil {
			// Refused before it starts a browser or opens a run that starts
			// there.
			if err := s.cfg.Navigation.Check(ctx, st.Value); err != nil {
				return nil, err
			}
		}
		start = st.Value
	}
	if err := s.openBrowser(ctx); err != nil {
		return nil, err
	}
	r := s.r
	if r == nil {
		if !run.WebURL(start) {
			return nil, ErrNoPage
		}
		var err error
		if r, err = s.open(ctx, "(no task stated) browse "+hostOf(start), start, false); err != nil {
			return nil, err
		}
	}
	step := r.res.Steps + 1
	r.res.Steps = step
	ok := r.perform(ctx, step, call{Kind: st.Kind, Ref: st.Ref, Element: st.Element, Value: st.Value, Millis: st.Millis}, false)
	stopped := s.unstop(r)
	if !ok && r.lastErr == "" && stopped == "" {
		stopped = "the action was not run"
	}
	a, err := s.look(ctx, r, step)
	if err != nil {
		if stopped != "" {
			return nil, fmt.Errorf("%s; then %w", stopped, err)
		}
		return nil, err
	}
	switch {
	case stopped != "":
		return a, &ActionFailed{Message: stopped, Answer: a}
	case !ok:
		return a, &ActionFailed{Message: r.lastErr, Tips: r.lastTips, Answer: a}
	}
	return a, nil
}

// WaitGone waits until text is no longer on the page, d at most.
func (s *Session) WaitGone(ctx context.Context, text string, d time.Duration) (*Answer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.openBrowser(ctx); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(d)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		snap, err := s.browser.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		if !strings.Contains(snap.Text, text) {
			break
		}
		if time.Now().After(deadline) {
			return nil, &engine.ActionError{Code: engine.CodeTimeout, Message: fmt.Sprintf("timed out after %v waiting for the text %q to go", d, text)}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.snapshotLocked(ctx)
}

// Snapshot answers with the page the browser shows now.
func (s *Session) Snapshot(ctx context.Context) (*Answer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.openBrowser(ctx); err != nil {
		return nil, err
	}
	return s.snapshotLocked(ctx)
}

func (s *Session) snapshotLocked(ctx context.Context) (*Answer, error) {
	if r := s.r; r != nil {
		ok := r.snapshot(ctx)
		stopped := s.unstop(r)
		if !ok {
			return nil, errors.New(cmpOr(stopped, "the page could not be read"))
		}
		s.page = r.page
		a := &Answer{URL: r.page.URL, Page: r.page.Render(), Notes: r.notes}
		r.notes = nil
		return a, nil
	}
	snap, err := s.browser.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	s.page = Interpret(snap)
	return &Answer{URL: s.page.URL, Page: s.page.Render()}, nil
}

// Screenshot is a PNG of the viewport (secret fields masked by the
// browser).
func (s *Session) Screenshot(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.openBrowser(ctx); err != nil {
		return nil, err
	}
	return s.browser.Screenshot(ctx)
}

// CloseBrowser ends the browser (its plugin process with it); the next
// browser call starts another. The open task stays open.
func (s *Session) CloseBrowser() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeBrowser()
}

func (s *Session) closeBrowser() error {
	if s.browser == nil {
		return nil
	}
	err := s.browser.Close()
	s.browser, s.page = nil, Page{}
	if s.r != nil {
		s.r.cfg.Browser, s.r.page = goneBrowser{}, Page{}
	}
	return err
}

// Close ends the session: the open run ends failed (the session ended
// before its task was ended; its action log is learned from) and the
// browser is closed. Later calls fail; Close again returns nil.
func (s *Session) Close(ctx context.Context) (*Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil
	}
	s.closed = true
	var res *Result
	if s.r != nil {
		why := ": the session ended before memory_task_end"
		if !s.stated {
			why = ": no task was stated"
		}
		res = s.end(ctx, false, "", ReasonSessionEnded+why)
	}
	return res, s.closeBrowser()
}

// RunID is the open run's id, "" when none is open.
func (s *Session) RunID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.r == nil {
		return ""
	}
	return s.r.res.RunID
}

// open registers a run for goal starting at start and makes it the
// session's.
func (s *Session) open(ctx context.Context, goal, start string, stated bool) (*runner, error) {
	b := s.browser
	if b == nil {
		b = goneBrowser{}
	}
	cfg := Config{Goal: goal, StartURL: start, Browser: b, Memory: s.cfg.Memory, ModelName: s.cfg.ModelName,
		Now: s.cfg.Now, Events: s.cfg.Events, MaxSteps: math.MaxInt, MaxErrors: math.MaxInt, MaxRepeats: math.MaxInt,
		Approve: ApproveAuto, Mode: StepMode, RunsDir: s.cfg.RunsDir, Budget: s.cfg.Budget, Navigation: s.cfg.Navigation,
		Redact: s.cfg.Redact, TraceScoring: s.cfg.TraceScoring, TraceTTLDays: s.cfg.TraceTTLDays}
	r := &runner{cfg: cfg, res: &Result{}, started: cfg.Now(), nav: navGuard{policy: s.cfg.Navigation}, red: s.red,
		goal: s.red.String(goal), external: true, page: s.page}
	r.mem = cfg.Memory.WithEvents(r.events())
	if err := r.start(ctx); err != nil {
		r.closeArtifacts()
		return nil, err
	}
	if r.stopped {
		// Registered, but memory or the run's folder failed: it ends failed.
		reason := r.res.Reason
		r.finish(ctx)
		return nil, errors.New(reason)
	}
	s.r, s.stated = r, stated
	return r, nil
}

// end ends the open run with an outcome, through the loop's own finish.
func (s *Session) end(ctx context.Context, success bool, answer, reason string) *Result {
	r := s.r
	s.r, s.stated = nil, false
	r.stopped = false
	r.res.Answer = answer
	r.stop(success, reason)
	r.finish(ctx)
	return r.res
}

// unstop takes back a stop the loop's guards made during one call (the
// browser failing, a page that could not be left, the call cancelled):
// the outside model decides what comes next, and the run goes on until
// its task ends. It returns the reason, "" when the run was not stopped.
func (s *Session) unstop(r *runner) string {
	if !r.stopped {
		return ""
	}
	reason := r.res.Reason
	r.stopped, r.res.Success, r.res.Reason = false, false, ""
	return reason
}

// look reads the page after step and runs the step's memory phase.
func (s *Session) look(ctx context.Context, r *runner, step int) (*Answer, error) {
	ok := r.snapshot(ctx)
	if stopped := s.unstop(r); !ok {
		return nil, errors.New(cmpOr(stopped, "the page could not be read"))
	}
	s.page = r.page
	mem, err := r.hostPhase(ctx, step)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	a := &Answer{URL: r.page.URL, Page: r.page.Render(), Memory: mem, Notes: r.notes}
	r.notes = nil
	return a, nil
}

// hostPhase is the memory phase after an action the outside model chose:
// the run's progress, attribution of the action, and a context request
// only when there is something to show: the site's memory when the page
// entered a site (Trigger B, with the facts, selectors and a matching
// trajectory), the tips for a failure on the page's side (Trigger A). It
// returns the site's memory block ("" when the page did not enter a site);
// the tips are kept in r.lastTips. What was shown is what the next action
// is attributed with: the site's memory for as long as the page stays on
// the site (the model keeps it in its context, as the loop's model sees it
// at every step), and a failure's tips for the action after it.
func (r *runner) hostPhase(ctx context.Context, step int) (string, error) {
	host, _ := domain.Host(r.page.URL)
	entered := host != "" && host != r.lastHost
	r.lastHost = host
	m, err := r.mem.UpdateRun(ctx, r.res.RunID, api.RunProgress{CurrentURL: r.red.String(r.page.URL), TurnCount: step})
	if err != nil {
		return "", err
	}
	r.art.writeManifest(m, r.red)
	r.lastTips = ""
	if host == "" || entered {
		r.siteShown = siteShown{}
	}
	r.shownLessons, r.shownSelectors, r.shownFacts = r.siteShown.lessons, r.siteShown.selectors, r.siteShown.facts
	if r.cfg.NoMemory || host == "" {
		return "", nil
	}
	r.attribute()
	failed := r.lastErr != "" && r.lastCommand != ""
	if !entered && !failed {
		return "", nil
	}
	mc, err := r.mem.Context(ctx, r.traced(r.contextRequest(step+1, entered)))
	if err != nil {
		return "", err
	}
	traj, steps := r.shownTrajectory, r.shownSteps
	r.keepShown(mc)
	if entered {
		r.siteShown = siteShown{lessons: mc.Lessons, selectors: mc.Selectors, facts: mc.Facts}
	} else {
		// The failure's tips, beside what the site's memory showed.
		r.shownSelectors, r.shownFacts = r.siteShown.selectors, r.siteShown.facts
		for _, id := range r.siteShown.lessons {
			if !slices.Contains(r.shownLessons, id) {
				r.shownLessons = append(r.shownLessons, id)
			}
		}
	}
	if !entered || mc.Match == nil {
		// The task's reference trajectory stays the one the model was shown.
		r.shownTrajectory, r.shownSteps = traj, steps
	}
	if !entered {
		return "", nil
	}
	return mc.Text, nil
}

// siteShown is what a site's memory showed the outside model when its
// page entered the site.
type siteShown struct {
	lessons   []string
	selectors []memctx.Shown
	facts     []memctx.ShownFact
}

// openBrowser starts the session's browser when it has none; on a closed
// session it fails (errClosed), so the calls that need a browser open
// with it alone.
func (s *Session) openBrowser(ctx context.Context) error {
	if s.closed {
		return errClosed
	}
	if s.browser != nil {
		return nil
	}
	b, err := s.cfg.Open(ctx)
	if err != nil {
		return fmt.Errorf("starting the browser: %w", err)
	}
	s.browser = b
	if s.r != nil {
		s.r.cfg.Browser = b
	}
	return nil
}

func hostOf(u string) string {
	h, err := domain.Host(u)
	if err != nil {
		return u
	}
	return h
}

// goneBrowser stands for a session's browser while it has none: the
// run's end (its final screenshot) finds no page.
type goneBrowser struct{}

var errNoBrowser = errors.New("the browser is closed")

func (goneBrowser) Navigate(context.Context, string) error             { return errNoBrowser }
func (goneBrowser) Snapshot(context.Context) (*engine.Snapshot, error) { return nil, errNoBrowser }
func (goneBrowser) Act(context.Context, engine.Action) error           { return errNoBrowser }
func (goneBrowser) Screenshot(context.Context) ([]byte, error)         { return nil, errNoBrowser }
func (goneBrowser) Close() error                                       { return nil }

// Replayed is Replay's answer.
type Replayed struct {
	RunID      string
	Trajectory string // the trajectory replayed, "" when none could be
	Steps      int    // its steps that ran
	Total      int    // its steps, the finish included
	// Finished says every step ran, the finish included: Answer is the
	// recorded run's answer, for memory_task_end to confirm.
	Finished bool
	Answer   string
	// Stopped says where and why replay stopped short ("" when Finished):
	// the outside model takes over from there.
	Stopped string
	Tips    string // memory's tips when a step failed on the page
	Page    *Answer
}

// Replay replays the trajectory memory holds for goal on the site of
// startURL ("" for the page the browser shows) with no model: each step's
// element is found by the selectors memory holds, else by its recorded
// role and name; replay stops at the first step whose page, element or
// action does not hold, marks the trajectory stale where the site
// diverged, and answers with where it stopped and the page, for the
// outside model to go on from. It runs in the open task, or opens one for
// goal.
func (s *Session) Replay(ctx context.Context, goal, startURL string) (*Replayed, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	startURL, err := s.taskURL(ctx, "replay", goal, startURL)
	if err != nil {
		return nil, err
	}
	if err := s.openBrowser(ctx); err != nil {
		return nil, err
	}
	r := s.r
	if r == nil || !s.stated {
		if r != nil {
			s.end(ctx, false, "", ReasonSessionEnded+": no task was stated")
		}
		if r, err = s.open(ctx, goal, startURL, true); err != nil {
			return nil, err
		}
	}
	out := &Replayed{RunID: r.res.RunID}
	mc, err := r.mem.Context(ctx, r.traced(memctx.Request{URL: r.red.String(startURL), Goal: r.red.String(goal), Step: r.res.Steps + 1, SkipDomainTips: true}))
	if err != nil {
		return nil, err
	}
	if mc.Match == nil {
		out.Stopped = "memory holds no recorded run of this task on this site"
		return out, nil
	}
	out.Trajectory, out.Total = mc.Match.Trajectory.ID, len(mc.Match.Steps)
	if why := r.startReplay(mc.Match); why != "" {
		out.Stopped = "not replayed: " + why
		return out, nil
	}
	r.shownTrajectory, r.shownSteps = mc.Match.Trajectory.ID, mc.Match.Steps
	if !run.WebURL(r.page.URL) && mc.Match.Steps[0].Action != string(engine.ActNavigate) {
		// The recorded run started on its start page: load it.
		if err := r.cfg.Browser.Navigate(ctx, startURL); err != nil {
			return nil, err
		}
	}
	before := r.res.Replayed
	for r.replay != nil {
		ok := r.snapshot(ctx)
		if stopped := s.unstop(r); !ok {
			return nil, errors.New(cmpOr(stopped, "the page could not be read"))
		}
		s.page = r.page
		if err := r.replayLookup(ctx); err != nil {
			return nil, fmt.Errorf("memory: %w", err)
		}
		step := r.res.Steps + 1
		r.res.Steps = step
		logged := len(r.logged)
		r.replayStep(ctx, step, nil)
		finished := r.stopped && r.res.Success
		s.unstop(r) // a replay with no model stops the run at a hand-over; the outside model goes on
		if len(r.logged) == logged {
			r.res.Steps-- // no action ran: the finish (the outside model's to confirm) or a hand-over before acting
		}
		if finished {
			out.Finished, out.Answer = true, r.res.Answer
			break
		}
		if _, err := r.hostPhase(ctx, step); err != nil {
			return nil, fmt.Errorf("memory: %w", err)
		}
	}
	out.Steps = r.res.Replayed - before
	if !out.Finished {
		for _, n := range r.notes {
			if strings.HasPrefix(n, "Replay of the reference trajectory stopped") {
				out.Stopped = n
			}
		}
		if r.lastErr != "" && r.lastCommand != "" {
			out.Tips = r.lastTips
		}
	}
	r.notes = nil
	a, err := s.snapshotLocked(ctx)
	if err != nil {
		return nil, err
	}
	out.Page = a
	return out, nil
}
