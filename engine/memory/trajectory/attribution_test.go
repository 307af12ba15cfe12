package trajectory

import (
	"context"
	"errors"
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

// A recorded trajectory shown PruneUnhelpfulAfter times that never helped
// is pruned with its match-index entry (no match, cached or not, and an
// event); one a person recorded is kept, and sorts as it did.
func TestUnhelpfulTrajectoryIsPruned(t *testing.T) {
	ctx := context.Background()
	for _, src := range []engine.Source{engine.SourceLearned, engine.SourceManual} {
		e := newEnv(t, Options{Provenance: engine.Provenance{Source: src, Run: "r1"}})
		tr := e.record(searchRun())
		if m := e.match("www.shop.example", "search tennis balls"); m == nil { // the index is cached now
			t.Fatal("no match before pruning")
		}
		below := engine.Counts{Shown: engine.PruneUnhelpfulAfter - 1}
		if n, err := e.s.Attribute(ctx, []Attribution{{Domain: "www.shop.example", ID: tr.ID, Counts: below}}); err != nil || n != 1 {
			t.Fatalf("%s: Attribute = %d, %v", src, n, err)
		}
		if _, err := e.s.Get(ctx, "www.shop.example", tr.ID); err != nil {
			t.Fatalf("%s: pruned below the bound: %v", src, err)
		}
		if n, err := e.s.Attribute(ctx, []Attribution{{Domain: "www.shop.example", ID: tr.ID, Counts: engine.Counts{Shown: 1}}}); err != nil || n != 1 {
			t.Fatalf("%s: Attribute = %d, %v", src, n, err)
		}
		_, err := e.s.Get(ctx, "www.shop.example", tr.ID)
		m := e.match("www.shop.example", "search tennis balls")
		pruned := false
		for _, ev := range e.events {
			pruned = pruned || ev.Name == EventPruned
		}
		if src == engine.SourceManual {
			if err != nil || m == nil || pruned {
				t.Fatalf("a person's trajectory was pruned: %v, match %v", err, m)
			}
			continue
		}
		if !errors.Is(err, ErrNotFound) || m != nil || !pruned {
			t.Fatalf("learned trajectory shown %d times, never helped: Get %v, match %+v, pruned event %v", engine.PruneUnhelpfulAfter, err, m, pruned)
		}
	}
}
