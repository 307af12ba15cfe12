package agentcmd

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/agent"
	"github.com/engine-dev/engine/engine/agent/demosite"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/engine/server/service"
	"github.com/engine-dev/engine/plugins/loader"
	"github.com/engine-dev/engine/plugins/scripted"
)

// contextQueries notes the context requests a run sends (those naming
// their run), the last one first to hand.
type contextQueries struct {
	mu   sync.Mutex
	last map[string][]string
}

func (q *contextQueries) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/context" && r.Header.Get(api.HeaderRun) != "" {
			q.mu.Lock()
			q.last = r.URL.Query()
			q.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func (q *contextQueries) take() map[string][]string {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := q.last
	q.last = nil
	return l
}

// flags turns a run's context request into engine query context's flags.
func flags(q map[string][]string) []string {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	args := []string{"--url", get("url"), "--goal", get("goal"), "--step", get("step")}
	if b := get("budget"); b != "" {
		args = append(args, "--budget", b)
	}
	if e := get("last_error"); e != "" {
		args = append(args, "--last-command", get("last_command"), "--last-error", e)
	}
	if get("domain_tips") == "false" {
		args = append(args, "--same-site")
	} else {
		args = append(args, "--entered")
	}
	if get("weighted") == "true" {
		args = append(args, "--weighted")
	}
	return args
}

// compared is one step of a run checked against engine query context.
type compared struct {
	run              string
	step             int
	block, errorTips string
	domainTips       bool
}

// parityModel answers as the demo's scripted model does and, before each
// answer, checks the memory in the step's message against what engine
// query context prints for the same step state, in this process, on the
// data dir the run holds (served on its socket).
type parityModel struct {
	t       *testing.T
	inner   engine.Model
	q       *contextQueries
	dir     string
	run     string
	checked []compared
}

var stepRE = regexp.MustCompile(`\nProgress: step (\d+) of`)

// headings are every heading memory's text may carry.
var headings = []string{memctx.SessionsHeading, memctx.TrajectoryHeading, memctx.KnowledgeHeading, memctx.SelectorsHeading,
	lesson.DomainTipsHeading, lesson.ErrorTipsHeading}

func (m *parityModel) Complete(ctx context.Context, req engine.ModelRequest) (*engine.ModelResponse, error) {
	t := m.t
	msg := req.Messages[len(req.Messages)-1].Content
	sm := stepRE.FindStringSubmatch(msg)
	q := m.q.take()
	if sm == nil || q == nil {
		t.Errorf("%s: a model call without a step or a context request:\n%s", m.run, msg)
		return m.inner.Complete(ctx, req)
	}
	var out, errb strings.Builder
	args := append([]string{"--data-dir", m.dir, "query", "context"}, flags(q)...)
	if code := agentMain(args, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("%s step %s: engine %q: exit %d: %s", m.run, sm[1], args, code, errb.String())
	}
	printed := strings.TrimSuffix(out.String(), "\n")
	block, tips := printed, ""
	if i := strings.Index(printed, lesson.ErrorTipsHeading); i >= 0 {
		block, tips = strings.TrimSuffix(printed[:i], "\n\n"), printed[i:]
	}
	where := fmt.Sprintf("%s step %s (engine query context %q)", m.run, sm[1], flags(q))
	// The memory block sits just before the progress line; the error tips
	// just after the error, before the closing instruction.
	if block != "" && !strings.Contains(msg, "\n\n"+block+"\n\nProgress: step "+sm[1]+" of") {
		t.Errorf("%s: the run's message lacks the printed memory block\n--- printed:\n%s\n--- message:\n%s", where, block, msg)
	}
	if tips != "" && !strings.Contains(msg, "\n\n"+tips+"\n\nCall the appropriate tool for the next action.") {
		t.Errorf("%s: the run's message lacks the printed error tips\n--- printed:\n%s\n--- message:\n%s", where, tips, msg)
	}
	// Nothing from memory in the message that was not printed.
	for _, h := range headings {
		if a, b := strings.Count(msg, h), strings.Count(printed, h); a != b {
			t.Errorf("%s: %q %d times in the message, %d times printed\n--- printed:\n%s\n--- message:\n%s", where, h, a, b, printed, msg)
		}
	}
	var step int
	fmt.Sscan(sm[1], &step)
	m.checked = append(m.checked, compared{run: m.run, step: step, block: block, errorTips: tips,
		domainTips: strings.Contains(block, lesson.DomainTipsHeading)})
	return m.inner.Complete(ctx, req)
}

// engine query context prints byte for byte what a run sent from memory:
// on the demo shop, a cold run (errors, Trigger A) and a warm one (session
// history, a reference trajectory, the site's tips on entering it, known
// selectors), every step compared, steps 1 and 3 and a step after an error
// among them.
func TestQueryContextIsWhatTheRunSent(t *testing.T) {
	if !haveChromium() {
		t.Skip("no chromium")
	}
	ctx := context.Background()
	site, err := demosite.Start(demosite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	dir := t.TempDir()
	mem, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q := &contextQueries{}
	h := q.wrap(api.Handler(mem, api.Options{}))
	local := api.Local(h, api.ClientOptions{})
	sctx, stop := context.WithCancel(ctx)
	srv, err := service.Open(sctx, dir, h, service.Options{})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Error(err)
		}
		local.Close()
		mem.Close()
	}()
	rules, err := scripted.Parse(demosite.Rules)
	if err != nil {
		t.Fatal(err)
	}
	var all []compared
	for _, name := range []string{"cold", "warm"} {
		b, err := loader.OpenBrowser(ctx, "chromedp", loader.BrowserOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := &parityModel{t: t, inner: scripted.New(rules), q: q, dir: dir, run: name}
		res, err := agent.Run(ctx, agent.Config{Goal: demosite.Goal, StartURL: site.URL, Browser: b, Model: m, Memory: local.Client,
			Approve: agent.ApproveAuto, RunsDir: filepath.Join(dir, "runs")})
		b.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !res.Success || len(m.checked) != res.LLMCalls {
			t.Fatalf("%s run: %+v; %d of %d model calls compared", name, res, len(m.checked), res.LLMCalls)
		}
		all = append(all, m.checked...)
	}
	// What was compared covers the three cases.
	var afterError, warm1, warm3 bool
	for _, c := range all {
		switch {
		case c.errorTips != "":
			afterError = true
		}
		if c.run == "warm" && c.step == 1 && c.domainTips && strings.Contains(c.block, memctx.TrajectoryHeading) && strings.Contains(c.block, memctx.SelectorsHeading) {
			warm1 = true
		}
		if c.run == "warm" && c.step == 3 && !c.domainTips && c.block != "" {
			warm3 = true
		}
	}
	if !afterError || !warm1 || !warm3 {
		t.Fatalf("compared: a step after an error with tips %v, warm step 1 with the site's tips, a trajectory and selectors %v, warm step 3 without the site's tips %v\n%+v",
			afterError, warm1, warm3, all)
	}
}
