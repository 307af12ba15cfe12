package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/engine/memory/run"
)

func sessionOn(t *testing.T, cfgRun Config, b engine.Browser) *Session {
	t.Helper()
	s, err := NewSession(SessionConfig{Open: func(context.Context) (engine.Browser, error) { return b, nil },
		Memory: cfgRun.Memory, RunsDir: cfgRun.RunsDir, ModelName: "test/host"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// After a cold run of the loop, a session driven from outside gets the
// reference trajectory at its task's start, the site's memory on entering
// it, and tips in a failed action's error; its end ends the run failed.
func TestSessionShowsMemory(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t)
	cfg := config(t, db, newShop(), &fakeModel{p: naive})
	mustRun(t, cfg)

	s := sessionOn(t, cfg, newShop())
	ts, err := s.StartTask(ctx, goal, "http://shop.test/")
	if err != nil {
		t.Fatal(err)
	}
	if ts.Match == nil || !strings.HasPrefix(ts.Reference, memctx.TrajectoryHeading) || !strings.Contains(ts.Reference, `click button "Accept cookies"`) {
		t.Fatalf("task start: %+v", ts)
	}
	a, err := s.Act(ctx, Step{Kind: engine.ActNavigate, Value: "http://shop.test/"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Page, "Title: Demo Shop") || !strings.Contains(a.Memory, memctx.SelectorsHeading) {
		t.Fatalf("navigate: %+v", a)
	}
	a, err = s.Act(ctx, Step{Kind: engine.ActClick, Element: "Search products"})
	var failed *ActionFailed
	if !errors.As(err, &failed) || !strings.Contains(failed.Message, "div#cookie-banner") ||
		!strings.HasPrefix(failed.Tips, lesson.ErrorTipsHeading) || a == nil || a.Memory != "" {
		t.Fatalf("covered click: %v, %+v", err, a)
	}
	if !strings.Contains(err.Error(), "IMPORTANT - Last action failed:\n"+failed.Message+"\n\n"+lesson.ErrorTipsHeading) {
		t.Fatalf("the failure as the loop shows it:\n%s", err)
	}
	// A later failure on an element memory knows a selector for (shown on
	// entering the site, still in the model's context) marks it failed.
	if _, err := s.Act(ctx, Step{Kind: engine.ActClick, Element: "Accept cookies"}); err != nil {
		t.Fatal(err)
	}
	if _, err = s.Act(ctx, Step{Kind: engine.ActFill, Element: "Search products", Value: "padel rackets"}); !errors.As(err, &failed) || !strings.Contains(failed.Message, "not an input") {
		t.Fatalf("fill on the widget: %v", err)
	}
	sels, err := cfg.Memory.Selectors(ctx, api.SelectorFilter{Domain: "shop.test"})
	if err != nil {
		t.Fatal(err)
	}
	var failures int
	for _, sel := range sels.Selectors {
		if sel.Name == "Search products" {
			failures += sel.Failures
		}
	}
	if failures != 2 { // the covered click just after entering the site, and this one
		t.Fatalf("the failures of the known selector of \"Search products\" are not both recorded: %+v", sels.Selectors)
	}
	// A name the page lacks is the model's mistake: no tips.
	_, err = s.Act(ctx, Step{Kind: engine.ActClick, Element: "No such button"})
	if !errors.As(err, &failed) || failed.Tips != "" || !strings.Contains(failed.Message, `no element named "No such button"`) {
		t.Fatalf("unknown name: %v", err)
	}
	res, err := s.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cfg.Memory.Run(ctx, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != run.Failed || !strings.HasPrefix(m.Reason, ReasonSessionEnded+": the session ended before memory_task_end") {
		t.Fatalf("the run after the session ended: %s %q", m.Status, m.Reason)
	}
	if _, err := s.Act(ctx, Step{Kind: engine.ActBack}); err == nil {
		t.Fatal("an action after Close ran")
	}
}

// Replay stops at the first step that does not hold (the first result was
// renamed), says where and why, and the outside model goes on from there;
// the run records where replay fell back.
func TestSessionReplayStops(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t)
	cfg := config(t, db, newShop(), &fakeModel{p: naive})
	mustRun(t, cfg)

	b := newShop()
	b.renamed = true
	s := sessionOn(t, cfg, b)
	rp, err := s.Replay(ctx, goal, "http://shop.test/")
	if err != nil {
		t.Fatal(err)
	}
	if rp.Finished || rp.Steps != 5 || !strings.Contains(rp.Stopped, "stopped at its step 6") ||
		!strings.Contains(rp.Stopped, `the page has no link "Padel Racket Pro 3000"`) || !strings.Contains(rp.Page.Page, "Padel Racket Ultra 4000") {
		t.Fatalf("replay: %+v", rp)
	}
	if _, err := s.Act(ctx, Step{Kind: engine.ActClick, Element: "Padel Racket Ultra 4000"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.EndTask(ctx, true, "opened")
	if err != nil {
		t.Fatal(err)
	}
	m, err := cfg.Memory.Run(ctx, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != run.Completed || m.Replay == nil || m.Replay.FellBackAt != 6 || m.Replay.Replayed != 5 {
		t.Fatalf("the run: %s %+v", m.Status, m.Replay)
	}
	if _, err := s.EndTask(ctx, true, "again"); err == nil {
		t.Fatal("a second EndTask ended something")
	}
}

// BenchmarkSessionAct is one browser tool call's engine work in a session
// (the browser free): the loop's perform, the page read and rendered, the
// memory phase (the run's progress; no context request, since the page
// stays on its site and the action worked), on a site with memory.
func BenchmarkSessionAct(b *testing.B) {
	ctx := context.Background()
	mem := memOf(b, openDisk(b))
	seedSite(b, mem)
	p := newPager()
	s, err := NewSession(SessionConfig{Open: func(context.Context) (engine.Browser, error) { return p, nil }, Memory: mem, RunsDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.StartTask(ctx, goal, "http://shop.test/"); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Act(ctx, Step{Kind: engine.ActNavigate, Value: "http://shop.test/"}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Act(ctx, Step{Kind: engine.ActClick, Element: "Next"}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if _, err := s.EndTask(ctx, true, "done"); err != nil {
		b.Fatal(err)
	}
}

// StartTask and Replay open with the same checks and say the same thing,
// each naming itself: a closed session, an empty goal, no page to start
// from, a start URL that is no web address or that the navigation policy
// refuses.
func TestSessionTaskAndReplayCheckAlike(t *testing.T) {
	ctx := context.Background()
	cfg := config(t, openDisk(t), newShop(), &fakeModel{p: naive})
	s := sessionOn(t, cfg, newShop())
	calls := map[string]func(goal, url string) error{
		"task": func(goal, url string) error {
			_, err := s.StartTask(ctx, goal, url)
			return err
		},
		"replay": func(goal, url string) error {
			_, err := s.Replay(ctx, goal, url)
			return err
		},
	}
	cases := []struct{ goal, url, want string }{
		{" ", "http://shop.test/", "invalid %s: the goal is empty"},
		{goal, "", "invalid %s: give the task's url: the browser shows no site yet"},
		{goal, "file:///etc/passwd", "invalid %s: url: "},
		{goal, "ftp://shop.test/", "invalid %s: navigation to ftp://shop.test/ blocked: ftp:// URLs are never allowed (only http and https)"},
		{goal, "http://127.0.0.1:8080/", "invalid %s: navigation to http://127.0.0.1:8080/ blocked: "},
	}
	for what, call := range calls {
		for _, c := range cases {
			err := call(c.goal, c.url)
			if want := fmt.Sprintf(c.want, what); err == nil || !errors.Is(err, engine.ErrInvalid) || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s(%q, %q): %v, want %q…", what, c.goal, c.url, err, want)
			}
		}
	}
	if _, err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for what, call := range calls {
		if err := call(goal, "http://shop.test/"); !errors.Is(err, errClosed) {
			t.Errorf("%s after Close: %v", what, err)
		}
	}
	// The calls that need a browser start none once the session is closed.
	if _, err := s.Snapshot(ctx); !errors.Is(err, errClosed) {
		t.Errorf("Snapshot after Close: %v", err)
	}
	if _, err := s.Screenshot(ctx); !errors.Is(err, errClosed) {
		t.Errorf("Screenshot after Close: %v", err)
	}
	if _, err := s.WaitGone(ctx, "x", time.Second); !errors.Is(err, errClosed) {
		t.Errorf("WaitGone after Close: %v", err)
	}
}
