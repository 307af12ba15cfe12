package api_test

import (
	"context"
	"errors"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/trajectory"
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
