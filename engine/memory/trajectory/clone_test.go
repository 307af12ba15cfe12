package trajectory

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/memory/internal/touch"
)

// Clone shares nothing with the trajectory: every field filled, the copy
// changed through and through, the original is as it was. A field added
// to Trajectory is filled too, so a slice or pointer Clone does not copy
// fails here.
func TestTrajectoryClone(t *testing.T) {
	fill := func() Trajectory {
		var tr Trajectory
		touch.All(&tr)
		return tr
	}
	tr, want := fill(), fill()
	c := tr.Clone()
	if !reflect.DeepEqual(c, tr) {
		t.Fatalf("clone %+v, want %+v", c, tr)
	}
	touch.All(&c)
	if !reflect.DeepEqual(tr, want) {
		t.Fatalf("changing the clone changed the trajectory: %+v, want %+v", tr, want)
	}
}

// A trajectory read again is the one stored, whatever the caller did to
// the one it read before, and a trajectory written since is read as
// written.
func TestGetAgain(t *testing.T) {
	ctx := context.Background()
	s := New(openDisk(t, t.TempDir()), Options{Now: func() time.Time { return t0 }})
	rec, err := s.Record(ctx, Trajectory{Domain: "shop.example", Goal: "search tennis balls",
		Steps: []Step{{Action: "type", Name: "Search", Value: "tennis balls"}, {Action: "press", Value: "Enter"}}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Get(ctx, "shop.example", rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := first.Clone()
	touch.All(&first)
	again, err := s.Get(ctx, "shop.example", rec.ID)
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("read again: %+v, %v; want %+v", again, err, want)
	}
	m, err := s.Match(ctx, "shop.example", "search tennis balls")
	if err != nil || m == nil || !reflect.DeepEqual(m.Trajectory, want) {
		t.Fatalf("match: %+v, %v; want %+v", m, err, want)
	}
	if _, err := s.Record(ctx, Trajectory{Domain: "shop.example", Goal: "search tennis balls",
		Steps: []Step{{Action: "type", Name: "Search", Value: "tennis balls"}, {Action: "click", Name: "Go"}}}); err != nil {
		t.Fatal(err)
	}
	m, err = s.Match(ctx, "shop.example", "search tennis balls")
	if err != nil || m == nil || len(m.Trajectory.Steps) != 2 || m.Trajectory.Steps[1].Name != "Go" {
		t.Fatalf("match after a new recording: %+v, %v", m, err)
	}
}
