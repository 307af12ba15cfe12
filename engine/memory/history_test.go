package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

// An id's shape names its kind.
func TestKindOf(t *testing.T) {
	for id, want := range map[string]string{
		"traj_0123": history.Trajectory,
		"fact_0123": history.Fact,
		"sel_0123":  history.Selector,
		"0123abcd":  history.Lesson,
	} {
		if got := memory.KindOf(id); got != want {
			t.Errorf("KindOf(%q) = %q, want %q", id, got, want)
		}
	}
}

// History, Retract, Retracted and Revert take any record's id and reach
// the store of its kind: a lesson's and a fact's retraction each name
// their kind, show in their history and in the retracted of every kind,
// and are undone by a revert.
func TestHistoryOfAnyKind(t *testing.T) {
	ctx := context.Background()
	m := memory.New(badgertest.Open(t), memory.Options{})
	if rs, err := m.Retracted(ctx); err != nil || rs.Lessons == nil || len(rs.Lessons)+len(rs.Facts)+len(rs.Selectors)+len(rs.Trajectories) != 0 {
		t.Fatalf("retracted of a new memory: %+v, %v", rs, err)
	}
	l, _, err := m.Lessons.Record(ctx, lesson.Lesson{Lesson: "Close the chat widget before clicking Checkout.", Category: lesson.ErrorRecovery,
		FailedCommand: "click", ErrorPattern: "would receive the click", Domain: "shop.example"}, "")
	if err != nil {
		t.Fatal(err)
	}
	o, err := m.Facts.Observe(ctx, fact.Observation{Domain: "shop.example", Type: fact.Quirk, Key: "shadow-dom", Value: "uses shadow DOM for modals"})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{l.ID: history.Lesson, fact.IDOf(o.Fact): history.Fact}
	for id, kind := range ids {
		rt, err := m.Retract(ctx, id, "wrong")
		if err != nil || rt.Kind != kind || rt.ID != id || rt.Reason != "wrong" || len(rt.Record) == 0 {
			t.Fatalf("retract %s: %+v, %v", id, rt, err)
		}
		h, err := m.History(ctx, id)
		if err != nil || h.Kind != kind || len(h.Versions) == 0 || h.Versions[0].Op != "retract" {
			t.Fatalf("history of %s: %+v, %v", id, h, err)
		}
	}
	rs, err := m.Retracted(ctx)
	if err != nil || len(rs.Lessons) != 1 || len(rs.Facts) != 1 || len(rs.Selectors)+len(rs.Trajectories) != 0 {
		t.Fatalf("retracted: %+v, %v", rs, err)
	}
	for id, kind := range ids {
		r, err := m.Revert(ctx, id, -1)
		if err != nil || r.Kind != kind || r.ID != id || history.IsAbsent(r.Record) {
			t.Fatalf("revert %s: %+v, %v", id, r, err)
		}
	}
	if rs, err := m.Retracted(ctx); err != nil || len(rs.Lessons)+len(rs.Facts) != 0 {
		t.Fatalf("retracted after revert: %+v, %v", rs, err)
	}
	if h, err := m.History(ctx, "sel_0000000000000000"); !errors.Is(err, engine.ErrNotFound) || h.Kind != history.Selector || h.Versions == nil {
		t.Fatalf("history of an unknown selector: %+v, %v", h, err)
	}
	if _, err := m.RevertRun(ctx, " "); !engine.IsInvalid(err) {
		t.Fatalf("revert of an empty run id: %v", err)
	}
}

// A history starts with the record in force and the change that made it,
// then each kept version with the change that made it, for every kind: a
// lesson used then edited, a fact confirmed, a selector that failed, a
// trajectory recorded again, and a retracted fact, whose record in force
// is none.
func TestHistoryCurrentAndMade(t *testing.T) {
	ctx := context.Background()
	m := memory.New(badgertest.Open(t), memory.Options{})
	manual := m.WithProvenance(engine.Provenance{Source: engine.SourceManual})

	l, _, err := manual.Lessons.Record(ctx, lesson.Lesson{Lesson: "Dismiss the cookie banner before clicking Search", Category: lesson.SiteSpecific, Domain: "shop.example"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Lessons.Use(ctx, l.ID, "shop.example"); err != nil {
		t.Fatal(err)
	}
	if _, err := manual.Lessons.Edit(ctx, l.ID, "Close the cookie banner before clicking Search"); err != nil {
		t.Fatal(err)
	}
	obs := fact.Observation{Domain: "shop.example", Type: fact.Timing, Key: "search load", Value: "2s"}
	for range 2 {
		if _, err := m.Facts.Observe(ctx, obs); err != nil {
			t.Fatal(err)
		}
	}
	o, err := m.Facts.Observe(ctx, obs)
	if err != nil {
		t.Fatal(err)
	}
	sel := selector.Observation{Domain: "shop.example", Role: "button", Name: "Search", Selector: "#go"}
	sl, err := m.Selectors.Record(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	sel.Failed = true
	if _, err := m.Selectors.Record(ctx, sel); err != nil {
		t.Fatal(err)
	}
	tr := trajectory.Trajectory{Domain: "shop.example", Goal: "search tennis balls", Steps: []trajectory.Step{{Action: "click", Name: "Search"}}}
	first, err := m.Trajectories.Record(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Trajectories.Record(ctx, tr); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		id, field string
		current   string   // the change that made the record in force
		made      []string // the change that made each kept version, newest first
	}{
		{l.ID, "lesson", "edit", []string{"use", "create"}},
		{fact.IDOf(o.Fact), "sources", "observe", []string{"observe", "create"}},
		{selector.IDOf(sl), "failures", "use", []string{"create"}},
		{first.ID, "runs", "record", []string{"create"}},
	} {
		h, err := m.History(ctx, c.id)
		if err != nil {
			t.Fatalf("history of %s: %v", c.id, err)
		}
		if h.Current.Made == nil || h.Current.Made.Op != c.current || h.Current.Made.At.IsZero() || history.IsAbsent(h.Current.Record) {
			t.Errorf("%s: current %s made by %+v, want %s", c.id, h.Current.Record, h.Current.Made, c.current)
		}
		var made []string
		for _, v := range h.Versions {
			made = append(made, v.Made.Op)
		}
		if strings.Join(made, " ") != strings.Join(c.made, " ") {
			t.Errorf("%s: versions made by %q, want %q", c.id, made, c.made)
		}
		// The newest change shows in the diff of the record in force
		// against the newest version.
		ds, err := history.Diff(h.Versions[0].Record, h.Current.Record)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, d := range ds {
			found = found || d.Field == c.field
		}
		if !found {
			t.Errorf("%s: the diff of the last change has no %s: %+v", c.id, c.field, ds)
		}
	}
	h, _ := m.History(ctx, l.ID)
	if v := h.Versions[len(h.Versions)-1]; v.Made.By.Source != engine.SourceManual {
		t.Errorf("the lesson was created by %+v, want manual", v.Made.By)
	}

	if _, err := manual.Retract(ctx, fact.IDOf(o.Fact), "measured on a slow link"); err != nil {
		t.Fatal(err)
	}
	h, err = m.History(ctx, fact.IDOf(o.Fact))
	if err != nil || !history.IsAbsent(h.Current.Record) || h.Current.Made.Op != history.OpRetract || h.Versions[0].Made.Op != "observe" {
		t.Fatalf("history of a retracted fact: %+v, %v", h, err)
	}
}
