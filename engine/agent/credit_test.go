package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/runfiles"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// A run that finishes without success: true credits no lesson, records no
// trajectory, and says why in its attribution events; the lessons and the
// trajectory a successful run left are unchanged.
func TestUnconfirmedRunCreditsAndRecordsNothing(t *testing.T) {
	db := openDisk(t)
	ctx := context.Background()
	cold := mustRun(t, config(t, db, newShop(), &fakeModel{p: naive}))
	if !cold.Success || cold.TrajectoryID == "" || cold.Helped == 0 {
		t.Fatalf("cold run: %+v", cold)
	}
	helped := func() int {
		ls, err := lesson.New(db, lesson.Options{}).List(ctx, lesson.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, l := range ls {
			n += l.Helped
		}
		return n
	}
	before := helped()
	trajs, err := trajectory.New(db, trajectory.Options{}).List(ctx, "")
	if err != nil || len(trajs) != 1 {
		t.Fatalf("trajectories after the cold run: %d %v", len(trajs), err)
	}
	// The warm run, its answer without success: the domain tip shown at
	// step 1 was followed by an action that worked, but the run is not a
	// success.
	unstated := func(system, msg string) (string, map[string]any) {
		name, args := naive(system, msg)
		if name == "finish" {
			delete(args, "success")
		}
		return name, args
	}
	var events []event.Event
	cfg := config(t, db, newShop(), &fakeModel{p: unstated})
	cfg.Events = func(e event.Event) { events = append(events, e) }
	res := mustRun(t, cfg)
	if res.Success || !strings.HasPrefix(res.Reason, ReasonUnconfirmed+": ") || res.Helped != 0 || res.TrajectoryID != "" {
		t.Fatalf("unconfirmed run: %+v", res)
	}
	if got := helped(); got != before {
		t.Fatalf("helped %d after an unconfirmed run, was %d", got, before)
	}
	trajs, err = trajectory.New(db, trajectory.Options{}).List(ctx, "")
	if err != nil || len(trajs) != 1 || trajs[0].RunID != cold.RunID {
		t.Fatalf("trajectories after the unconfirmed run: %+v %v", trajs, err)
	}
	saw := false
	for _, e := range events {
		if e.Name == "attribution" {
			saw = true
			if e.Fields["why"] != "the run did not succeed" || len(e.Fields["helped"].([]string)) != 0 {
				t.Fatalf("attribution in an unconfirmed run: %+v", e.Fields)
			}
		}
	}
	if !saw {
		t.Fatal("no attribution event")
	}
}

// The attribution rule: a lesson shown before an action is credited when
// the action followed it (lesson.UsedBy: here, pressed the key it names),
// worked, was not the model's recovery from a failure of engine origin,
// and the run succeeded. An action that worked but did not follow it
// (a click on "Accept cookies" after "press Escape") credits nothing.
func TestAttributionRule(t *testing.T) {
	db := openDisk(t)
	ctx := context.Background()
	store := lesson.New(db, lesson.Options{})
	l, _, err := store.Record(ctx, lesson.Lesson{Lesson: "Close the menu: press Escape first.", Category: lesson.ErrorRecovery,
		FailedCommand: "click", ErrorPattern: "element is not visible"}, "")
	if err != nil {
		t.Fatal(err)
	}
	shown := []string{l.ID}
	for _, c := range []struct {
		name    string
		recs    []record
		success bool
		want    int
		why     string
		used    int // steps that followed the lesson
	}{
		{"browser failure, shown, recovery worked, run succeeded",
			[]record{{Record: runfiles.Record{Step: 1, Origin: lesson.OriginBrowser, Error: "element is not visible"}}, {Record: runfiles.Record{Step: 2, OK: true, Lessons: shown, Action: "press", Value: "Escape"}}}, true, 1, "", 1},
		{"browser failure, shown, another action worked, run succeeded",
			[]record{{Record: runfiles.Record{Step: 1, Origin: lesson.OriginBrowser, Error: "element is not visible"}}, {Record: runfiles.Record{Step: 2, OK: true, Lessons: shown, Action: "click", Role: "button", Name: "Accept cookies"}}}, true, 0, "", 0},
		{"engine failure, shown, recovery worked, run succeeded",
			[]record{{Record: runfiles.Record{Step: 1, Origin: lesson.OriginEngine, Error: "\"x\" is not a snapshot ref"}}, {Record: runfiles.Record{Step: 2, OK: true, Lessons: shown, Action: "press", Value: "Escape"}}}, true, 0,
			"the action recovered from an engine-side failure", 1},
		{"browser failure, shown, recovery failed",
			[]record{{Record: runfiles.Record{Step: 1, Origin: lesson.OriginBrowser, Error: "element is not visible"}}, {Record: runfiles.Record{Step: 2, Origin: lesson.OriginBrowser, Error: "element is not visible", Lessons: shown, Action: "press", Value: "Escape"}}}, true, 0,
			"the action failed", 1},
		{"browser failure, shown, recovery worked, run failed",
			[]record{{Record: runfiles.Record{Step: 1, Origin: lesson.OriginBrowser, Error: "element is not visible"}}, {Record: runfiles.Record{Step: 2, OK: true, Lessons: shown, Action: "press", Value: "Escape"}}}, false, 0,
			"the run did not succeed", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var events []event.Event
			r := &runner{mem: memOf(t, db), res: &Result{Success: c.success}, recovery: map[string]lesson.Recovery{l.ID: lesson.RecoveryOf(l.Lesson)}}
			before, err := store.Get(ctx, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			r.cfg.Events = func(e event.Event) { events = append(events, e) }
			for _, rec := range c.recs {
				rec.URL = "http://shop.test/"
				rec.afterEngine = r.lastOrigin == lesson.OriginEngine
				r.log(rec)
				r.actions = append(r.actions, rec)
				r.attribute()
			}
			if err := r.credit(ctx); err != nil {
				t.Fatal(err)
			}
			if r.res.Helped != c.want || len(events) != 1 || events[0].Name != "attribution" {
				t.Fatalf("helped %d (want %d), events %+v", r.res.Helped, c.want, events)
			}
			if why, _ := events[0].Fields["why"].(string); why != c.why {
				t.Fatalf("why %q, want %q", why, c.why)
			}
			after, err := store.Get(ctx, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			if d := (engine.Counts{Shown: after.Shown - before.Shown, Used: after.Used - before.Used, Helped: after.Helped - before.Helped}); d != (engine.Counts{Shown: 1, Used: c.used, Helped: c.want}) {
				t.Fatalf("lesson counts added %+v, want 1/%d/%d", d, c.used, c.want)
			}
		})
	}
}
