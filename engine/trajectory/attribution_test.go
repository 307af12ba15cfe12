package trajectory

import (
	"context"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
)

func TestAttributeCountsSurviveReplacementNotExpiry(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	tr := e.record(searchRun())
	n, err := e.s.Attribute(ctx, []Attribution{
		{Domain: "www.shop.example", ID: tr.ID, Counts: engine.Counts{Shown: 4, Used: 3, Helped: 3}},
		{Domain: "www.shop.example", ID: "traj_0000000000000000", Counts: engine.Counts{Shown: 1}},
	})
	if err != nil || n != 1 {
		t.Fatalf("Attribute = %d, %v; want 1 updated", n, err)
	}
	got, err := e.s.Get(ctx, "www.shop.example", tr.ID)
	if err != nil || got.Shown != 4 || got.Used != 3 || got.Helped != 3 || !got.ExpiresAt.Equal(tr.ExpiresAt) {
		t.Fatalf("after Attribute: %+v, %v", got, err)
	}
	// A newer run of the template replaces the steps, keeps the counts.
	e.now = e.now.Add(time.Hour)
	again := e.record(searchRun())
	if again.ID != tr.ID || again.Shown != 4 || again.Used != 3 || again.Helped != 3 || again.Runs != 2 {
		t.Fatalf("replaced: %+v", again)
	}
	if m := e.match("www.shop.example", "search tennis balls"); m == nil || m.Trajectory.ID != tr.ID {
		t.Fatalf("match after Attribute: %+v", m)
	}
	// Expired: skipped.
	e.now = again.ExpiresAt.Add(time.Second)
	if n, err := e.s.Attribute(ctx, []Attribution{{Domain: "www.shop.example", ID: tr.ID, Counts: engine.Counts{Shown: 1}}}); err != nil || n != 0 {
		t.Fatalf("expired: %d, %v", n, err)
	}
	if _, err := e.s.Attribute(ctx, []Attribution{{Domain: "www.shop.example", ID: tr.ID, Counts: engine.Counts{Shown: 1, Used: 2}}}); err == nil {
		t.Fatal("used > shown accepted")
	}
}
