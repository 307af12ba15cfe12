package memory_test

import (
	"context"
	"errors"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/lesson"
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
