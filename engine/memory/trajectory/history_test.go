package trajectory

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

func TestHistoryRevertAndImport(t *testing.T) {
	ctx := context.Background()
	db := badgertest.Open(t)
	now := func() time.Time { return t0 }
	s := New(db, Options{Now: now})
	tr := Trajectory{Domain: "example.com", Goal: "open settings page", Steps: []Step{{Action: "click", Name: "Settings"}}}
	first, err := s.Record(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, tr); err != nil {
		t.Fatal(err)
	}
	vs, err := s.History(ctx, first.ID)
	if err != nil || len(vs) != 1 || vs[0].Op != "record" || vs[0].Trajectory.Runs != 1 {
		t.Fatalf("history = %+v, %v", vs, err)
	}
	if err := s.Delete(ctx, "example.com", first.ID); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Match(ctx, "example.com", "open settings page"); m != nil {
		t.Fatalf("deleted trajectory still matches")
	}
	back, err := s.Revert(ctx, first.ID, -1)
	if err != nil || back.Runs != 2 {
		t.Fatalf("revert = %+v, %v", back, err)
	}
	if m, err := s.Match(ctx, "example.com", "open settings page"); err != nil || m == nil || m.Trajectory.ID != first.ID {
		t.Fatalf("restored trajectory does not match: %+v, %v", m, err)
	}
	if _, err := s.Revert(ctx, first.ID, 42); !errors.Is(err, ErrNoVersion) {
		t.Fatalf("revert to a missing version: %v", err)
	}

	before, _ := s.List(ctx, "")
	imp := New(db, Options{Now: now, Provenance: engine.Provenance{Source: engine.SourceImported, SHA256: "abc"}})
	if err := imp.Delete(ctx, "example.com", first.ID); err != nil {
		t.Fatal(err)
	}
	for _, x := range []Trajectory{before[0], {Domain: "example.com", Goal: "log out", Steps: []Step{{Action: "click", Name: "Log out"}}}} {
		if _, err := imp.Record(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.RevertImport(ctx, "abc")
	if err != nil || len(r.Restored) != 1 || len(r.Removed) != 1 {
		t.Fatalf("revert import = %+v, %v", r, err)
	}
	if after, _ := s.List(ctx, ""); !reflect.DeepEqual(after, before) {
		t.Fatalf("after revert --import:\n%+v\nwant\n%+v", after, before)
	}
}

func TestStaleMarkKeepsVersion(t *testing.T) {
	ctx := context.Background()
	db := badgertest.Open(t)
	s := New(db, Options{Now: func() time.Time { return t0 }, Provenance: engine.Provenance{Source: engine.SourceLearned, Run: "r2"}})
	tr, err := s.Record(ctx, Trajectory{Domain: "example.com", Goal: "open settings page", Steps: []Step{{Action: "click", Name: "Settings"}}})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.MarkStale(ctx, []StaleMark{{Domain: "example.com", ID: tr.ID, Step: 1, Reason: "no element named Settings"}}); err != nil || n != 1 {
		t.Fatalf("mark stale = %d, %v", n, err)
	}
	vs, err := s.History(ctx, tr.ID)
	if err != nil || len(vs) != 1 || vs[0].Op != "stale" || vs[0].Trajectory.Stale != nil {
		t.Fatalf("history = %+v, %v", vs, err)
	}
	if _, err := s.Revert(ctx, tr.ID, -1); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Match(ctx, "example.com", "open settings page"); err != nil || m == nil {
		t.Fatalf("the reverted (not stale) version does not match: %+v, %v", m, err)
	}
	// And back to the stale version: out of the match index again.
	if _, err := s.Revert(ctx, tr.ID, 1); err != nil {
		t.Fatal(err)
	}
	if m, _ := s.Match(ctx, "example.com", "open settings page"); m != nil {
		t.Fatal("a stale version restored matches")
	}
}
