package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/fingerprint"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/run"
)

// On a changed site a replay falls back at the first divergent step: the
// manifest says where and why, the trajectory and the selector of the
// element that is gone are marked stale, and a stale trajectory is not
// replayed. A later successful run re-validates the trajectory, and
// replay works again.
func TestReplayOnChangedSiteMarksStale(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t)
	mustRun(t, config(t, db, newShop(), &fakeModel{p: naive}))
	mem := memOf(t, db)
	// What the run recorded it was checked against: each step's page path
	// and fingerprints, each selector's last success.
	recorded, err := mem.Trajectories(ctx, "shop.test")
	if err != nil || len(recorded.Trajectories) != 1 {
		t.Fatalf("trajectories: %+v, %v", recorded, err)
	}
	step6 := recorded.Trajectories[0].Steps[5]
	if step6.Path != "/search" || len(step6.Page) != 8 || len(step6.Fingerprint) != 8 {
		t.Fatalf("step 6 checked against %q %q %q", step6.Path, step6.Page, step6.Fingerprint)
	}
	sels, err := mem.Selectors(ctx, api.SelectorFilter{Domain: "shop.test"})
	if err != nil || len(sels.Selectors) == 0 {
		t.Fatalf("selectors: %+v, %v", sels, err)
	}
	for _, sl := range sels.Selectors {
		if sl.Checked == nil || sl.Checked.Path == "" || sl.Checked.Page == "" || sl.Checked.Fingerprint == "" || sl.Checked.At.IsZero() {
			t.Fatalf("selector %s %q checked %+v", sl.Role, sl.Name, sl.Checked)
		}
	}
	// The changed results page: another first product.
	changedPage := fingerprint.Page([]engine.Element{{Role: "link", Name: "Padel Racket Ultra 4000"}, {Role: "link", Name: "Padel Racket Lite"}})

	// Replay only (no model) on the changed site: it fails at step 6.
	b := newShop()
	b.renamed = true
	cfg := config(t, db, b, nil)
	cfg.Model, cfg.Replay = nil, true
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Success || res.Replayed != 5 {
		t.Fatalf("replay on the changed site: %+v", res)
	}
	why := `the expected element is not there: the page has no link "Padel Racket Pro 3000"; the page changed: fingerprint ` +
		step6.Page + " → " + changedPage
	m, err := mem.Run(ctx, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if rp := m.Replay; rp == nil || rp.FellBackAt != 6 || rp.Replayed != 5 || rp.Reason != why || rp.Trajectory == "" {
		t.Fatalf("manifest replay: %+v", m.Replay)
	}
	var file run.Manifest
	raw, err := os.ReadFile(filepath.Join(cfg.RunsDir, res.RunID, ManifestFile))
	if err != nil || json.Unmarshal(raw, &file) != nil || file.Replay == nil || file.Replay.FellBackAt != 6 {
		t.Fatalf("manifest.json replay: %s, %v", raw, err)
	}
	ts, err := mem.StaleTrajectoryList(ctx, "shop.test")
	if err != nil || len(ts.Trajectories) != 1 {
		t.Fatalf("stale trajectories: %+v, %v", ts, err)
	}
	if st := ts.Trajectories[0].Stale; st.Step != 6 || st.Reason != why || st.Run != res.RunID {
		t.Fatalf("stale mark: %+v", st)
	}
	ss, err := mem.Selectors(ctx, api.SelectorFilter{Domain: "shop.test", Stale: true})
	if err != nil || len(ss.Selectors) != 1 || ss.Selectors[0].Name != "Padel Racket Pro 3000" ||
		ss.Selectors[0].Stale.Reason != "the element is gone from /search; the page changed: fingerprint "+step6.Page+" → "+changedPage {
		t.Fatalf("stale selectors: %+v, %v", ss, err)
	}

	// Stale: not replayed, not shown; the model runs the task.
	model := &fakeModel{p: func(system, msg string) (string, map[string]any) {
		if strings.Contains(msg, "REFERENCE TRAJECTORY") {
			t.Error("a stale trajectory reached the prompt")
		}
		if strings.Contains(msg, "Title: Padel Racket Ultra 4000") {
			return "finish", map[string]any{"answer": "Opened Padel Racket Ultra 4000", "success": true}
		}
		tool, args := naive(system, msg)
		if args["element"] == "Padel Racket Pro 3000" {
			args["element"] = "Padel Racket Ultra 4000"
		}
		return tool, args
	}}
	b = newShop()
	b.renamed = true
	cfg = config(t, db, b, model)
	cfg.Replay = true
	res = mustRun(t, cfg)
	if !res.Success || res.Replayed != 0 {
		t.Fatalf("model run on the changed site: %+v", res)
	}
	// That successful run re-validated the template: replay works again.
	if ts, _ := mem.StaleTrajectoryList(ctx, "shop.test"); len(ts.Trajectories) != 0 {
		t.Fatalf("still stale after a successful run: %+v", ts.Trajectories)
	}
	b = newShop()
	b.renamed = true
	cfg = config(t, db, b, nil)
	cfg.Model, cfg.Replay = nil, true
	res = mustRun(t, cfg)
	if !res.Success || res.LLMCalls != 0 || res.Replayed != 7 {
		t.Fatalf("replay after re-validation: %+v", res)
	}
	if m, _ := mem.Run(ctx, res.RunID); m.Replay == nil || m.Replay.FellBackAt != 0 || m.Replay.Replayed != 7 {
		t.Fatalf("manifest replay after re-validation: %+v", m.Replay)
	}
}

// A model-driven run shown a reference trajectory whose step at the same
// position fails on the page marks the trajectory stale.
func TestReferenceStepFailureMarksStale(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t)
	mustRun(t, config(t, db, newShop(), &fakeModel{p: naive}))
	mem := memOf(t, db)
	// An overlay now covers the cookie button: the reference's first step
	// fails on the page's side, and the model gives up.
	b := newShop()
	b.coverCookies = true
	model := &fakeModel{p: func(system, msg string) (string, map[string]any) {
		if strings.Contains(msg, "Last action: (none)") && strings.Contains(msg, "REFERENCE TRAJECTORY") {
			return "click", el("Accept cookies")
		}
		return "finish", map[string]any{"answer": "blocked", "success": false}
	}}
	res := mustRun(t, config(t, db, b, model))
	if res.Success {
		t.Fatalf("run: %+v", res)
	}
	ts, err := mem.StaleTrajectoryList(ctx, "shop.test")
	if err != nil || len(ts.Trajectories) != 1 {
		t.Fatalf("stale trajectories: %+v, %v", ts, err)
	}
	if st := ts.Trajectories[0].Stale; st.Step != 1 || !strings.HasPrefix(st.Reason, "step 1 failed: another element would receive the click: div#promo; the element moved: its surroundings changed (fingerprint ") {
		t.Fatalf("stale mark: %+v", st)
	}
}

// A site-bound lesson learned on the home page goes stale when the page
// changed (a promo now sits before the cookie banner) and the action it
// recommends fails there; it is then left out of the tips, and a run that
// learns it again on the page re-validates it.
func TestSiteLessonGoesStale(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t)
	mustRun(t, config(t, db, newShop(), &fakeModel{p: naive}))
	mem := memOf(t, db)
	ls, err := mem.Lessons(ctx, api.LessonFilter{Domain: "shop.test"})
	if err != nil {
		t.Fatal(err)
	}
	var learned *lesson.Lesson
	for i, l := range ls.Lessons {
		if l.Domain != "" && l.FailedCommand == "fill" {
			learned = &ls.Lessons[i]
		}
	}
	if learned == nil || learned.Checked == nil || learned.Checked.Path != "/" || len(learned.Checked.Page) != 8 {
		t.Fatalf("the fill lesson and its page: %+v", ls.Lessons)
	}

	// A promo now sits on the home page: fill fails, the tip says click,
	// and the click fails on the page.
	tipShown := false
	model := &fakeModel{p: func(system, msg string) (string, map[string]any) {
		switch {
		case strings.Contains(msg, "Last action: (none)"):
			return "fill", map[string]any{"element": "Search products", "text": "padel rackets"}
		case strings.Contains(msg, "element is not an input"):
			tipShown = tipShown || strings.Contains(msg, `try click instead.`)
			return "click", el("Search products")
		}
		return "finish", map[string]any{"answer": "blocked", "success": false}
	}}
	b := newShop()
	b.coverCookies = true
	if res := mustRun(t, config(t, db, b, model)); res.Success {
		t.Fatalf("run on the changed page: %+v", res)
	}
	if !tipShown {
		t.Fatal("the lesson was not shown as a tip")
	}
	stale, err := mem.StaleLessons(ctx, "shop.test")
	if err != nil || len(stale.Lessons) != 1 || stale.Lessons[0].ID != learned.ID {
		t.Fatalf("stale lessons: %+v, %v", stale, err)
	}
	st := stale.Lessons[0].Stale
	if !strings.HasPrefix(st.Reason, `click "Search products" failed on /; the page changed: fingerprint `+learned.Checked.Page+" → ") || st.Run == "" {
		t.Fatalf("stale mark %+v", st)
	}
	tips, err := mem.RecallError(ctx, "fill", "element is not an input", "shop.test")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range tips {
		if l.ID == learned.ID {
			t.Fatal("a stale lesson was recalled")
		}
	}

	// On the original page a run fails to fill and recovers by a click:
	// the lesson is learned there again, and holds again.
	again := &fakeModel{p: func(system, msg string) (string, map[string]any) {
		switch {
		case strings.Contains(msg, "Last action: (none)"):
			return "click", el("Accept cookies")
		case strings.Contains(msg, `Last action: click "Accept cookies" → ok`):
			return "fill", map[string]any{"element": "Search products", "text": "padel rackets"}
		case strings.Contains(msg, "element is not an input"):
			if strings.Contains(msg, `try click instead.`) {
				t.Error("a stale lesson was shown as a tip")
			}
			return "click", el("Search products")
		}
		return "finish", map[string]any{"answer": "focused", "success": true}
	}}
	mustRun(t, config(t, db, newShop(), again))
	if stale, _ := mem.StaleLessons(ctx, "shop.test"); len(stale.Lessons) != 0 {
		t.Fatalf("still stale after it was learned again: %+v", stale.Lessons[0].Stale)
	}
}
