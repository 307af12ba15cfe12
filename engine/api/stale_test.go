package api_test

import (
	"context"
	"errors"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// The stale routes: a run's stale marks in one request (the run from its
// Engine-Run), listed by ?stale=true, and a selector failure with a
// reason marking the selector stale.
func TestStaleRoutes(t *testing.T) {
	ctx := context.Background()
	c, _ := local(t, march12)
	run := c.WithProvenance(engine.Provenance{Run: "r-changed"})
	got, err := c.RecordTrajectory(ctx, trajectory.Trajectory{Domain: "https://www.shop.example/", Goal: "search padel rackets", Steps: searchSteps})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.MarkTrajectoriesStale(ctx, api.StaleTrajectories{Trajectories: []trajectory.StaleMark{
		{Domain: "www.shop.example", ID: got.ID, Step: 3, Reason: "the expected element is not there"}}})
	if err != nil || res.Marked != 1 {
		t.Fatalf("mark: %+v, %v", res, err)
	}
	if m, err := c.MatchTrajectory(ctx, api.MatchRequest{Domain: "shop.example", Goal: "search tennis balls"}); err != nil || m.Match != nil {
		t.Fatalf("a stale trajectory matched: %+v, %v", m, err)
	}
	list, err := c.StaleTrajectoryList(ctx, "")
	if err != nil || len(list.Trajectories) != 1 || list.Trajectories[0].Stale.Run != "r-changed" || list.Trajectories[0].Stale.Step != 3 {
		t.Fatalf("stale list: %+v, %v", list, err)
	}
	if _, err := run.MarkTrajectoriesStale(ctx, api.StaleTrajectories{Trajectories: []trajectory.StaleMark{{Domain: "shop.example", ID: got.ID}}}); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("a mark without step and reason: %v", err)
	}

	obs := api.SelectorObservation{Domain: "https://www.shop.example/", Path: "/", Role: "button", Name: "Search", Selector: "button:Search"}
	if _, err := run.RecordSelector(ctx, obs); err != nil {
		t.Fatal(err)
	}
	obs.Failed, obs.Reason = true, `the page has no button "Search"`
	sel, err := run.RecordSelector(ctx, obs)
	if err != nil || sel.Stale == nil || sel.Stale.Reason != obs.Reason || sel.Stale.Run != "r-changed" {
		t.Fatalf("failed selector: %+v, %v", sel, err)
	}
	ss, err := c.Selectors(ctx, api.SelectorFilter{Domain: "shop.example", Stale: true})
	if err != nil || len(ss.Selectors) != 1 {
		t.Fatalf("stale selectors: %+v, %v", ss, err)
	}
	if _, err := c.Selectors(ctx, api.SelectorFilter{URL: "https://www.shop.example/", Stale: true}); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("stale with url: %v", err)
	}
}

// Site-bound lessons over the API: a run's page marks in one request,
// stale lessons listed by ?stale=true and left out of recall and context;
// a selector's success records what it was checked against.
func TestStaleLessonRoutes(t *testing.T) {
	ctx := context.Background()
	c, _ := local(t, march12)
	run := c.WithProvenance(engine.Provenance{Run: "r-changed"})
	rec, err := c.RecordLesson(ctx, lesson.Lesson{Lesson: `On this shop click "Accept cookies" before searching.`,
		Category: lesson.SiteSpecific, Domain: "shop.example"})
	if err != nil {
		t.Fatal(err)
	}
	id := rec.Lesson.ID
	if got, err := c.MarkLessonPages(ctx, lesson.PageMarks{Checked: []lesson.PageCheck{{ID: id, Path: "/", Page: "aaaaaaaa"}}}); err != nil || got.Checked != 1 {
		t.Fatalf("checked: %+v, %v", got, err)
	}
	creq := api.ContextRequest{Request: memctx.Request{URL: "https://shop.example/", Goal: "search"}}
	if mc, err := c.Context(ctx, creq); err != nil || len(mc.Lessons) != 1 {
		t.Fatalf("context before the mark: %+v, %v", mc.Lessons, err)
	}
	got, err := run.MarkLessonPages(ctx, lesson.PageMarks{Failed: []lesson.PageFailure{{ID: id, Action: "click", Element: "Accept cookies", Path: "/", Page: "bbbbbbbb"}}})
	if err != nil || len(got.Stale) != 1 {
		t.Fatalf("failed: %+v, %v", got, err)
	}
	list, err := c.StaleLessons(ctx, "www.shop.example")
	if err != nil || len(list.Lessons) != 1 || list.Lessons[0].Stale.Run != "r-changed" ||
		list.Lessons[0].Stale.Reason != `click "Accept cookies" failed on /; the page changed: fingerprint aaaaaaaa → bbbbbbbb` {
		t.Fatalf("stale lessons: %+v, %v", list, err)
	}
	if ls, err := c.RecallDomain(ctx, "shop.example"); err != nil || len(ls) != 0 {
		t.Fatalf("recall showed a stale lesson: %+v, %v", ls, err)
	}
	mc, err := c.Context(ctx, creq)
	if err != nil || len(mc.Lessons) != 0 {
		t.Fatalf("context showed a stale lesson: %+v, %v", mc.Lessons, err)
	}
	if _, err := c.MarkLessonPages(ctx, lesson.PageMarks{Checked: []lesson.PageCheck{{ID: id, Path: "/", Page: "xyz"}}}); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("bad fingerprint: %v", err)
	}

	sel, err := c.RecordSelector(ctx, api.SelectorObservation{Domain: "https://www.shop.example/search?q=x", Role: "button", Name: "Search",
		Selector: "button:Search", Fingerprint: "12345678", Page: "9abcdef0"})
	if err != nil || sel.Checked == nil || sel.Checked.Path != "/search" || sel.Checked.Fingerprint != "12345678" || sel.Checked.Page != "9abcdef0" {
		t.Fatalf("selector checked: %+v, %v", sel, err)
	}
}
