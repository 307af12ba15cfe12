package inspect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/plan"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/runfiles"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/engine/server/inspect"
)

// world is memory in a temp data dir on real badger, its API client, and
// the inspector served over it by httptest.
type world struct {
	c       *api.Client
	runsDir string
	srv     *httptest.Server
	// Filled by fill.
	siteLesson string // a tier 2 lesson on shop.example
	trajID     string
	// clipped makes writeRun's model calls the largest llm.jsonl keeps:
	// a system prompt and a message of agent.LogClip bytes each, the
	// system prompt different at every step.
	clipped bool
}

func newWorld(t testing.TB) *world {
	t.Helper()
	dir := t.TempDir()
	m, err := memory.Open(context.Background(), dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	lc := api.Local(api.Handler(m, api.Options{}), api.ClientOptions{})
	t.Cleanup(func() { lc.Close() })
	w := &world{c: lc.Client, runsDir: filepath.Join(dir, "runs")}
	w.srv = httptest.NewServer(inspect.Handler(lc.Client, inspect.Options{RunsDir: w.runsDir}))
	t.Cleanup(w.srv.Close)
	return w
}

// must returns v, and stops the test binary on a setup error.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// pngOf is a real PNG: w×h, filled with c, with a darker band.
func pngOf(t testing.TB, w, h int, c color.RGBA) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			p := c
			if y > h/3 && y < h/2 {
				p = color.RGBA{c.R / 2, c.G / 2, c.B / 2, 255}
			}
			img.SetRGBA(x, y, p)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// writeRun writes a run folder as the agent leaves it: steps actions
// (every errEvery-th failing with a screenshot; replayed ones marked),
// one model call per step unless replayed, final.png.
func (w *world) writeRun(t testing.TB, id string, steps, errEvery int, replayed bool, lessonIDs []string, trajID string) {
	t.Helper()
	dir := filepath.Join(w.runsDir, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var acts, calls bytes.Buffer
	system := "You are a browser agent. Lessons:\n" + strings.Repeat("- prefer clicking visible buttons over pressing Enter\n", 60)
	for i := 1; i <= steps; i++ {
		s := runfiles.Record{Step: i, Action: "click", Role: "button", Name: fmt.Sprintf("Next %d", i), OK: true,
			URL: "https://shop.example/p/" + fmt.Sprint(i), Replayed: replayed}
		if errEvery > 0 && i%errEvery == 0 {
			s.OK, s.Error = false, "element is covered by another element"
			s.Screenshot = filepath.Join("/elsewhere", fmt.Sprintf("error-step-%02d.png", i))
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(s.Screenshot)), pngOf(t, 64, 40, color.RGBA{200, 60, 60, 255}), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if i == 2 || !s.OK {
			s.Lessons, s.Trajectory = lessonIDs, trajID
		}
		b, _ := json.Marshal(s)
		acts.Write(append(b, '\n'))
		if replayed {
			continue
		}
		sys, msg := system, fmt.Sprintf("Goal: buy a racket\nStep %d. The page shows:\n%s", i, strings.Repeat("[e12] button \"Add to cart\"\n", 40))
		if w.clipped {
			sys = fmt.Sprintf("Step %d. ", i) + strings.Repeat("You are a browser agent & you <click>. ", 110)[:3990]
			msg = fmt.Sprintf("Goal: buy a racket\nStep %d. The page shows:\n%s", i, strings.Repeat("[e12] button \"Add to cart\"\n", 150))[:4000]
		}
		c := runfiles.Call{Step: i, Attempts: 1, LatencyMS: 420,
			Request:   runfiles.Request{System: sys, Messages: []runfiles.Message{{Role: "user", Content: msg}}},
			Text:      fmt.Sprintf("I click Next %d.", i),
			ToolCalls: []runfiles.ToolCall{{ID: fmt.Sprint("call_", i), Name: "click", Arguments: `{"ref":"e12"}`}},
			Usage:     &engine.Usage{PromptTokens: 900, CompletionTokens: 30}}
		b, _ = json.Marshal(c)
		calls.Write(append(b, '\n'))
	}
	for name, b := range map[string][]byte{runfiles.ActionsFile: acts.Bytes(), runfiles.LLMFile: calls.Bytes(),
		runfiles.FinalShot: pngOf(t, 320, 200, color.RGBA{60, 120, 200, 255})} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fill puts a bit of everything in memory: lessons on two sites, facts,
// selectors, a trajectory, three runs of one goal (cold, warm, replay)
// with their folders and sessions, a fork, and a planner history.
func (w *world) fill(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	w.siteLesson = must(w.c.RecordLesson(ctx, lesson.Lesson{Lesson: "The cookie banner covers the Add to cart button: click Accept first, then retry the click. " + strings.Repeat("This text is long and must never be cut. ", 6) + "END-OF-LESSON",
		Category: lesson.SiteSpecific, FailedCommand: "click", ErrorPattern: "covered by another element", Domain: "shop.example"})).Lesson.ID
	must(w.c.RecordLesson(ctx, lesson.Lesson{Lesson: "On the news site, search results load lazily: scroll before reading them.",
		Category: lesson.SiteSpecific, FailedCommand: "read", ErrorPattern: "no results", Domain: "news.example"}))
	must(w.c.RecordLesson(ctx, lesson.Lesson{Lesson: "When fill fails on a search box, type into it instead.",
		Category: lesson.ToolFallback, FailedCommand: "fill", ErrorPattern: "not an input"}))
	for _, f := range []struct {
		key, value string
		n          int
	}{{"checkout needs login", "yes", 3}, {"search is lazy", "scroll first", 1}} {
		for range f.n {
			must(w.c.ObserveFact(ctx, api.ObserveFact{Domain: "shop.example", Type: fact.Quirk, Key: f.key, Value: f.value}))
		}
	}
	must(w.c.RecordSelector(ctx, api.SelectorObservation{Domain: "shop.example", Role: "button", Name: "Add to cart", Selector: "#add"}))
	must(w.c.RecordSelector(ctx, api.SelectorObservation{Domain: "shop.example", Role: "button", Name: "Add to cart", Selector: ".btn-add", Failed: true}))
	tr := must(w.c.RecordTrajectory(ctx, trajectory.Trajectory{Domain: "shop.example", Goal: "add 2 padel rackets to the cart",
		Steps: []trajectory.Step{{Action: "navigate", URL: "https://shop.example/"},
			{Action: "type", Role: "textbox", Name: "Quantity", Value: "2", Selector: "#qty", Verified: true},
			{Action: "click", Role: "button", Name: "Add to cart", Verified: true}}}))
	w.trajID = tr.ID
	yes := true
	base := time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)
	for i, r := range []struct {
		id             string
		steps, errEach int
		replay         bool
	}{{"run_cold", 9, 3, false}, {"run_warm", 6, 6, false}, {"run_replay", 4, 0, true}} {
		must(w.c.CreateRun(ctx, api.CreateRun{RunID: r.id, SessionID: "sess_" + r.id, Goal: "add 2 padel rackets to the cart", StartURL: "https://shop.example/"}))
		w.writeRun(t, r.id, r.steps, r.errEach, r.replay, []string{w.siteLesson, "gone_lesson"}, w.trajID)
		// The finishing turn acts on nothing, as in a real run; a replay
		// replays every action and the finish, as the agent counts them.
		done := api.RunCompletion{Success: &yes, Summary: fmt.Sprintf("done %d", i), TurnCount: r.steps + 1}
		if r.replay {
			done.Replay = &run.Replay{Trajectory: w.trajID, Replayed: r.steps + 1}
		}
		must(w.c.CompleteRun(ctx, r.id, done))
		_ = base
	}
	must(w.c.CreateRun(ctx, api.CreateRun{RunID: "run_fork", SessionID: "sess_fork", ParentRunID: "run_cold", Goal: "add 3 padel rackets to the cart", StartURL: "https://shop.example/"}))
	must(w.c.AddIteration(ctx, "run_fork", plan.Iteration{N: 1, Planner: plan.Output{UserTask: "add 3 padel rackets", CurrentState: "on the home page",
		ProposedActions: []string{"search for padel"}}, Tools: []plan.ToolExecution{{Tool: "click", OK: false, Error: "covered"}}}))
}

func inspectHandlerNoRuns(w *world) http.Handler { return inspect.Handler(w.c, inspect.Options{}) }

type (
	runFilter   = run.Filter
	runManifest = run.Manifest
)
