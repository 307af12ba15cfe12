package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

const goal = "search for padel rackets and open the first result"

func openDisk(t testing.TB) kv.Store {
	t.Helper()
	db := badgertest.Open(t)
	return db
}

// memOf serves db's memory (seeded) through the memory API in this
// process, as engine run does when it holds the data dir itself.
func memOf(t testing.TB, db kv.Store) *api.Client {
	t.Helper()
	return memWrapped(t, db, func(h http.Handler) http.Handler { return h })
}

// memWrapped is memOf with the API's handler wrapped (to inject faults).
func memWrapped(t testing.TB, db kv.Store, wrap func(http.Handler) http.Handler) *api.Client {
	t.Helper()
	m := memory.New(db, memory.Options{})
	if err := m.Lessons.Seed(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := api.Local(wrap(api.Handler(m, api.Options{})), api.ClientOptions{})
	t.Cleanup(func() { c.Close() })
	return c.Client
}

func config(t testing.TB, db kv.Store, b *shop, m *fakeModel) Config {
	return Config{Goal: goal, StartURL: "http://shop.test/", Browser: b, Model: m, Memory: memOf(t, db),
		Approve: ApproveAuto, RunsDir: t.TempDir()}
}

func mustRun(t *testing.T, cfg Config) *Result {
	t.Helper()
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestColdRunLearnsAndWarmRunIsShorter(t *testing.T) {
	db := openDisk(t)
	cold := &fakeModel{p: naive}
	res := mustRun(t, config(t, db, newShop(), cold))
	if !res.Success || res.Reason != ReasonFinished {
		t.Fatalf("cold run: %+v", res)
	}
	if res.Errors != 4 || res.LLMCalls != 11 || res.Steps != 11 {
		t.Fatalf("cold run: want 11 steps, 11 calls, 4 errors; got %+v", res)
	}
	if res.Usage.Total() == 0 {
		t.Fatal("token usage not counted")
	}
	// Trigger A: the fill error came back with tips appended.
	var sawTipsOnError bool
	for _, rq := range cold.reqs {
		msg := rq.Messages[0].Content
		if strings.Contains(msg, "IMPORTANT - Last action failed:\nanother element would receive the click") &&
			strings.Contains(msg, lesson.ErrorTipsHeading+"\n- \"If an overlay or popup is blocking an element, press Escape") {
			sawTipsOnError = true
		}
	}
	if !sawTipsOnError {
		t.Fatal("Trigger A: no error message carried the seed tip")
	}
	// The system prompt carries Tier 1.
	if !strings.Contains(cold.reqs[0].System, "## Lessons from experience") {
		t.Fatalf("no Tier 1 in system prompt:\n%s", cold.reqs[0].System)
	}
	if res.LessonsLearned != 1 || res.TrajectoryID == "" {
		t.Fatalf("post-run learning: %+v", res)
	}
	// The action log reads back as engine learn reads it.
	f, err := os.Open(filepath.Join(res.Dir, ActionsFile))
	if err != nil {
		t.Fatal(err)
	}
	acts, err := lesson.ParseActionLog(f, ActionsFile)
	f.Close()
	if err != nil || len(acts) != 10 {
		t.Fatalf("action log: %d actions, %v", len(acts), err)
	}
	for _, name := range []string{EventsFile, ManifestFile, "final.png", "error-step-01.png"} {
		if _, err := os.Stat(filepath.Join(res.Dir, name)); err != nil {
			t.Errorf("artifact %s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(res.Dir, ManifestFile+".tmp")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the manifest's spare is left in the run's folder: %v", err)
	}
	m, err := run.New(db, run.Options{}).Get(context.Background(), res.RunID)
	if err != nil || m.Status != run.Completed || m.TurnCount != 11 {
		t.Fatalf("manifest: %+v %v", m, err)
	}

	warm := &fakeModel{p: naive}
	res2 := mustRun(t, config(t, db, newShop(), warm))
	if !res2.Success || res2.Steps >= res.Steps || res2.Errors != 0 {
		t.Fatalf("warm run not shorter: cold %d steps, warm %+v", res.Steps, res2)
	}
	first := warm.reqs[0].Messages[0].Content
	// Trigger B: the domain's learned tip on the first step, not later,
	// marked unverified (a candidate: learned from one run).
	if !strings.Contains(first, lesson.DomainTipsHeading+"\n- (unverified) \"If fill fails with \\\"element is not an input\\\", try click instead.\"") {
		t.Fatalf("Trigger B: no domain tips on step 1:\n%s", first)
	}
	if strings.Contains(warm.reqs[1].Messages[0].Content, lesson.DomainTipsHeading) {
		t.Fatal("Trigger B fired again on the same domain")
	}
	for _, want := range []string{"REFERENCE TRAJECTORY", "SESSION HISTORY", "KNOWN SELECTORS"} {
		if !strings.Contains(first, want) {
			t.Errorf("warm step 1 lacks %s", want)
		}
	}
	// Attribution: the domain tip was shown at step 1 and step 1 succeeded.
	if res2.Helped == 0 {
		t.Fatal("no attribution recorded")
	}
	ls, err := lesson.New(db, lesson.Options{}).List(context.Background(), lesson.Filter{Domain: "shop.test"})
	if err != nil {
		t.Fatal(err)
	}
	helped := 0
	for _, l := range ls {
		helped += l.Helped
	}
	if helped == 0 {
		t.Fatal("lesson.Helped not stored")
	}
}

func TestReplay(t *testing.T) {
	db := openDisk(t)
	mustRun(t, config(t, db, newShop(), &fakeModel{p: naive}))

	// Replay: no model calls at all.
	m := &fakeModel{p: naive}
	cfg := config(t, db, newShop(), m)
	cfg.Replay = true
	res := mustRun(t, cfg)
	if !res.Success || res.LLMCalls != 0 || res.Replayed != 7 || res.LLMCallsSaved != 7 || res.TokensSaved == 0 {
		t.Fatalf("replay: %+v", res)
	}

	// The site changed: the first result has another name. Replay runs up
	// to it, then the model takes over from there.
	b := newShop()
	b.renamed = true
	m = &fakeModel{p: func(system, msg string) (string, map[string]any) {
		if strings.Contains(msg, "Title: Padel Racket Ultra 4000") {
			return "finish", map[string]any{"answer": "opened", "success": true}
		}
		if strings.Contains(msg, "Replay of the reference trajectory stopped at its step 6") {
			return "click", el("Padel Racket Ultra 4000")
		}
		return "", nil
	}}
	cfg = config(t, db, b, m)
	cfg.Replay = true
	res = mustRun(t, cfg)
	if !res.Success || res.Replayed != 5 || res.LLMCalls != 2 {
		t.Fatalf("replay fallback: %+v", res)
	}
	if !strings.Contains(m.reqs[0].Messages[0].Content, `the expected element is not there: the page has no link "Padel Racket Pro 3000"`) {
		t.Fatalf("hand-over not told:\n%s", m.reqs[0].Messages[0].Content)
	}
}

func TestStopReasons(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		cfg    func(c *Config, b *shop)
		p      policy
		reason string
	}{
		{"max_steps", func(c *Config, b *shop) { c.MaxSteps = 2 }, naive, ReasonMaxSteps},
		{"max_errors", func(c *Config, b *shop) { c.MaxErrors = 2 }, naive, ReasonMaxErrors},
		{"repeated_action", nil, func(string, string) (string, map[string]any) { return "press", map[string]any{"key": "Tab"} }, ReasonRepeatedAction},
		{"unknown tool counted", func(c *Config, b *shop) { c.MaxErrors = 3 }, func(string, string) (string, map[string]any) { return "teleport", nil }, ReasonMaxErrors},
		{"malformed arguments", func(c *Config, b *shop) { c.MaxErrors = 2 },
			func(string, string) (string, map[string]any) { return "click", map[string]any{"_raw": "{ref: e1"} }, ReasonMaxErrors},
		{"unreachable", func(c *Config, b *shop) { c.StartURL = "http://nowhere.test/" }, naive, ReasonUnreachable},
		{"browser died", func(c *Config, b *shop) {
			c.OnStep = func(si StepInfo) {
				if si.Step == 2 {
					b.mu.Lock()
					b.dead = true
					b.mu.Unlock()
				}
			}
		}, naive, ReasonBrowserFailed},
		{"gave up", nil, func(string, string) (string, map[string]any) {
			return "finish", map[string]any{"answer": "cannot", "success": false}
		}, ReasonGaveUp},
		{"finish without success", nil, func(string, string) (string, map[string]any) {
			return "finish", map[string]any{"answer": "I could not find anything"}
		}, ReasonUnconfirmed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := openDisk(t)
			b := newShop()
			m := &fakeModel{p: tc.p}
			cfg := config(t, db, b, m)
			if tc.cfg != nil {
				tc.cfg(&cfg, b)
			}
			res := mustRun(t, cfg)
			if res.Success || !strings.HasPrefix(res.Reason, tc.reason) {
				t.Fatalf("want %s, got %+v", tc.reason, res)
			}
			man, err := run.New(db, run.Options{}).Get(ctx, res.RunID)
			if err != nil || man.Status != run.Failed || man.Reason != res.Reason {
				t.Fatalf("manifest: %+v %v", man, err)
			}
			if tc.name == "unknown tool counted" {
				if res.Errors != 3 || !strings.Contains(m.last(), `unknown tool "teleport"`) {
					t.Fatalf("unknown tool not told: %+v\n%s", res, m.last())
				}
			}
			if tc.name == "malformed arguments" && !strings.Contains(m.last(), "malformed arguments for click") {
				t.Fatalf("malformed arguments not told:\n%s", m.last())
			}
		})
	}
}

func TestInterruptedIsRecorded(t *testing.T) {
	db := openDisk(t)
	ctx, cancel := context.WithCancel(context.Background())
	b := newShop()
	cfg := config(t, db, b, &fakeModel{p: naive})
	cfg.OnStep = func(si StepInfo) {
		if si.Step == 3 {
			cancel()
		}
	}
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != ReasonInterrupted {
		t.Fatalf("%+v", res)
	}
	m, err := run.New(db, run.Options{}).Get(context.Background(), res.RunID)
	if err != nil || m.Status != run.Failed || m.Reason != ReasonInterrupted {
		t.Fatalf("manifest: %+v %v", m, err)
	}
}

func TestApproval(t *testing.T) {
	buy := func(system, msg string) (string, map[string]any) {
		switch {
		case strings.Contains(msg, "was not approved"):
			return "finish", map[string]any{"answer": "stopped before buying", "success": false}
		case strings.Contains(msg, "Title: Padel Racket Pro 3000"):
			return "click", el("Buy now")
		}
		return naive(system, msg)
	}
	for _, mode := range []Approval{ApproveNever, ApproveAsk, ApproveAuto} {
		t.Run(string(mode), func(t *testing.T) {
			db := openDisk(t)
			b := newShop()
			m := &fakeModel{p: func(s, msg string) (string, map[string]any) {
				if strings.Contains(msg, `Last action: click "Buy now" → ok`) {
					return "finish", map[string]any{"answer": "bought", "success": true}
				}
				return buy(s, msg)
			}}
			cfg := config(t, db, b, m)
			cfg.Approve = mode
			var asked []ApprovalRequest
			cfg.Approver = func(_ context.Context, r ApprovalRequest) (bool, error) { asked = append(asked, r); return false, nil }
			res := mustRun(t, cfg)
			bought := false
			for _, a := range b.acts {
				if a.Ref == "e20" {
					bought = true
				}
			}
			if (mode == ApproveAuto) != bought {
				t.Fatalf("%s: bought=%v %+v", mode, bought, res)
			}
			if mode == ApproveAsk && (len(asked) != 1 || asked[0].Why != "buys or pays") {
				t.Fatalf("ask: %+v", asked)
			}
			if mode != ApproveAuto && res.Answer != "stopped before buying" {
				t.Fatalf("rejection not told: %+v", res)
			}
		})
	}
}

// While a run is going, another client of the same memory sees its
// progress: the loop holds no lock of its own between requests.
func TestMemoryFreeDuringModelCalls(t *testing.T) {
	ctx := context.Background()
	mem := memOf(t, openDisk(t))
	m := &fakeModel{p: naive, block: make(chan struct{}), in: make(chan struct{})}
	cfg := Config{Goal: goal, StartURL: "http://shop.test/", Browser: newShop(), Model: m, Memory: mem, Approve: ApproveAuto}
	done := make(chan *Result)
	go func() {
		res, err := Run(ctx, cfg)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for i := 0; i < 3; i++ {
		<-m.in // the loop is waiting for the model
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		p, err := mem.Runs(rctx, run.Filter{}, listing.Request{})
		cancel()
		runs := p.Runs
		if err != nil || len(runs) != 1 || runs[0].Status != run.Running || runs[0].TurnCount != i {
			t.Fatalf("call %d: runs %+v %v", i+1, runs, err)
		}
		m.block <- struct{}{}
	}
	go func() {
		for range m.in {
			m.block <- struct{}{}
		}
	}()
	res := <-done
	close(m.in)
	if !res.Success {
		t.Fatalf("%+v", res)
	}
}

func TestPlannerMode(t *testing.T) {
	db := openDisk(t)
	iter := 0
	m := &fakeModel{p: func(system, msg string) (string, map[string]any) {
		iter++
		switch iter {
		case 1:
			if !strings.Contains(msg, "No iterations yet.") || !strings.Contains(msg, "BROWSER STATE:") {
				return "", nil
			}
			return "plan", map[string]any{"current_state": "home", "proposed_actions": []string{`click "Accept cookies"`, `fill "Search products" "padel rackets"`}, "task_complete": false}
		case 2:
			if !strings.Contains(msg, "=== ITERATION 1 ===") || !strings.Contains(msg, "IMPORTANT - Last action failed:\nelement is not an input") {
				return "", nil
			}
			return "plan", map[string]any{"proposed_actions": []string{`click "Search products"`, `type "Search products" "padel rackets"`, `press Enter`, `press Escape`, `click "Padel Racket Pro 3000"`}, "task_complete": false}
		case 3:
			return "plan", map[string]any{"proposed_actions": []string{}, "task_complete": true, "final_answer": "opened"}
		}
		return "", nil
	}}
	cfg := config(t, db, newShop(), m)
	cfg.Mode = PlannerMode
	res := mustRun(t, cfg)
	if !res.Success || res.LLMCalls != 3 || res.Errors != 1 || res.Steps != 7 {
		t.Fatalf("%+v", res)
	}
}

func TestActionLogLines(t *testing.T) {
	db := openDisk(t)
	res := mustRun(t, config(t, db, newShop(), &fakeModel{p: naive}))
	f, err := os.Open(filepath.Join(res.Dir, ActionsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	if !strings.HasPrefix(sc.Text(), `{"step":1,"action":"click","ref":"e2","ok":false,"error":"another element would receive the click: div#cookie-banner","url":"http://shop.test/"`) {
		t.Fatalf("first line: %s", sc.Text())
	}
}

func TestInterpretPageTypes(t *testing.T) {
	el := func(role, name string) engine.Element { return engine.Element{Ref: "e1", Role: role, Name: name} }
	cases := []struct {
		url  string
		els  []engine.Element
		want string
	}{
		{"https://shop.test/", []engine.Element{el("searchbox", "Search"), el("button", "Go")}, "search"},
		{"https://shop.test/search?q=padel", []engine.Element{el("link", "Padel Racket")}, "search_results"},
		{"https://shop.test/login", []engine.Element{el("textbox", "Password")}, "login"},
		{"https://shop.test/item/1", []engine.Element{el("button", "Buy now")}, "page"},
		// The word is no login: a help page about passwords, a search for them.
		{"https://help.test/search?q=reset+password", []engine.Element{el("link", "Reset your password"), el("searchbox", "Search")}, "search_results"},
		{"https://bank.test/", []engine.Element{{Ref: "e1", Role: "textbox", Name: "PIN", States: []string{engine.StateSecret}}}, "login"},
	}
	for _, c := range cases {
		p := Interpret(&engine.Snapshot{URL: c.url, Title: "T", Elements: c.els, Tree: c.els[0].Role + " " + c.els[0].Name})
		if p.Type != c.want {
			t.Errorf("%s: type %s, want %s", c.url, p.Type, c.want)
		}
	}
	p := Interpret(&engine.Snapshot{URL: "https://shop.test/item/1", Title: "Racket", Elements: []engine.Element{el("button", "Buy now"), el("link", "Home")}})
	if p.Summary != `"Racket", a page with 1 link, 1 button.` {
		t.Errorf("summary %q", p.Summary)
	}
	if e, ok := p.FindByName("", "buy"); !ok || e.Name != "Buy now" {
		t.Errorf("prefix match: %+v %v", e, ok)
	}
	if _, ok := p.FindByName("link", "Buy now"); ok {
		t.Error("role not pinned")
	}
	if r, n, ok := parseSelector(SelectorOf("button", `Say "hi"`)); !ok || r != "button" || n != `Say "hi"` {
		t.Errorf("selector round trip: %q %q %v", r, n, ok)
	}
}

func TestFindPrefersAnElementTheActionSuits(t *testing.T) {
	p := Interpret(&engine.Snapshot{URL: "https://shop.test/", Elements: []engine.Element{
		{Ref: "e1", Role: "textbox", Name: "Search"}, {Ref: "e2", Role: "button", Name: "Search"}}})
	if e, _ := p.Find(engine.ActClick, "", "Search"); e.Ref != "e2" {
		t.Errorf("click Search → %s", e.Ref)
	}
	if e, _ := p.Find(engine.ActFill, "", "Search"); e.Ref != "e1" {
		t.Errorf("fill Search → %s", e.Ref)
	}
	if e, _ := p.Find(engine.ActClick, "", "textbox Search"); e.Ref != "e1" {
		t.Errorf("click textbox Search → %s", e.Ref)
	}
	if e, ok := p.Find(engine.ActClick, "e9", ""); !ok || e.Ref != "e9" {
		t.Errorf("unknown ref passes through to the browser: %+v", e)
	}
}

// A secret typed into a password field stays out of the action log and
// the trajectory.
func TestSecretsStayOutOfArtifacts(t *testing.T) {
	db := openDisk(t)
	b := &loginSite{}
	m := &fakeModel{p: logIn("hunter2-secret")}
	cfg := Config{Goal: "log in with password hunter2-secret", StartURL: "http://login.test/", Browser: b, Model: m,
		Memory: memOf(t, db), Approve: ApproveAuto, RunsDir: t.TempDir()}
	res := mustRun(t, cfg)
	if !res.Success {
		t.Fatalf("%+v", res)
	}
	log, err := os.ReadFile(filepath.Join(res.Dir, ActionsFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), "hunter2") || !strings.Contains(string(log), Redacted) {
		t.Fatalf("action log:\n%s", log)
	}
	tr, err := trajectory.New(db, trajectory.Options{}).List(context.Background(), "login.test")
	if err != nil || len(tr) != 1 {
		t.Fatalf("%v %v", tr, err)
	}
	if raw, _ := json.Marshal(tr[0]); strings.Contains(string(raw), "hunter2") {
		t.Fatalf("trajectory keeps the secret: %s", raw)
	}
	// llm.jsonl: not in the answer that typed it, not in later requests,
	// not in the goal of earlier ones.
	recs, llm := readLLMLog(t, res.Dir)
	if strings.Contains(llm, "hunter2") || !strings.Contains(llm, Redacted) || len(recs) != 3 {
		t.Fatalf("llm.jsonl:\n%s", llm)
	}
}

// logIn types password into loginSite's Password field and presses Enter.
func logIn(password string) policy {
	return func(_, msg string) (string, map[string]any) {
		switch {
		case strings.Contains(msg, "Title: Welcome"):
			return "finish", map[string]any{"answer": "logged in", "success": true}
		case strings.Contains(msg, "Last action: (none)"):
			return "type", map[string]any{"element": "Password", "text": password}
		}
		return "press", map[string]any{"key": "Enter"}
	}
}

type loginSite struct{ typed, in bool }

func (l *loginSite) Navigate(context.Context, string) error { return nil }
func (l *loginSite) Snapshot(context.Context) (*engine.Snapshot, error) {
	if l.in {
		return &engine.Snapshot{URL: "http://login.test/home", Title: "Welcome", Tree: "welcome"}, nil
	}
	return &engine.Snapshot{URL: "http://login.test/", Title: "Log in", Tree: fmt.Sprint(l.typed),
		Elements: []engine.Element{{Ref: "e1", Role: "textbox", Name: "Password"}}}, nil
}
func (l *loginSite) Act(_ context.Context, a engine.Action) error {
	if a.Kind == engine.ActType {
		l.typed = true
	}
	if a.Kind == engine.ActPress && l.typed {
		l.in = true
	}
	return nil
}
func (l *loginSite) Screenshot(context.Context) ([]byte, error) { return nil, nil }
func (l *loginSite) Close() error                               { return nil }

// Trigger B fires on the step the domain changes, mid-run too, and not on
// the steps after it on the same domain.
func TestTriggerBOnDomainChange(t *testing.T) {
	db := openDisk(t)
	ls := lesson.New(db, lesson.Options{})
	if _, _, err := ls.Record(context.Background(), lesson.Lesson{Lesson: "On b.test, accept the banner first.", Category: lesson.SiteSpecific, Domain: "b.test"}, "b.test"); err != nil {
		t.Fatal(err)
	}
	b := &twoSites{}
	m := &fakeModel{p: func(_, msg string) (string, map[string]any) {
		switch {
		case strings.Contains(msg, "Title: B page 2"):
			return "finish", map[string]any{"answer": "done", "success": true}
		case strings.Contains(msg, "Title: B"):
			return "click", el("More")
		}
		return "click", el("Go to B")
	}}
	cfg := Config{Goal: "go to b and read more", StartURL: "http://a.test/", Browser: b, Model: m, Memory: memOf(t, db), Approve: ApproveAuto}
	res := mustRun(t, cfg)
	if !res.Success || len(m.reqs) != 3 {
		t.Fatalf("%+v", res)
	}
	tips := lesson.DomainTipsHeading + "\n- (unverified) \"On b.test, accept the banner first.\"" // recorded over the API: a candidate
	for i, want := range []bool{false, true, false} {
		if got := strings.Contains(m.reqs[i].Messages[0].Content, tips); got != want {
			t.Errorf("step %d: domain tips shown %v, want %v", i+1, got, want)
		}
	}
}

type twoSites struct{ page int }

func (s *twoSites) Navigate(context.Context, string) error { return nil }
func (s *twoSites) Snapshot(context.Context) (*engine.Snapshot, error) {
	switch s.page {
	case 0:
		return &engine.Snapshot{URL: "http://a.test/", Title: "A", Tree: "a", Elements: []engine.Element{{Ref: "e1", Role: "link", Name: "Go to B"}}}, nil
	case 1:
		return &engine.Snapshot{URL: "http://www.b.test/", Title: "B", Tree: "b", Elements: []engine.Element{{Ref: "e2", Role: "link", Name: "More"}}}, nil
	}
	return &engine.Snapshot{URL: "http://www.b.test/2", Title: "B page 2", Tree: "b2"}, nil
}
func (s *twoSites) Act(context.Context, engine.Action) error   { s.page++; return nil }
func (s *twoSites) Screenshot(context.Context) ([]byte, error) { return nil, nil }
func (s *twoSites) Close() error                               { return nil }
