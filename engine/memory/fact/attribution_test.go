package fact

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

func TestAttributeCountsAndRanking(t *testing.T) {
	ctx := context.Background()
	s := New(badgertest.Open(t), Options{})
	obs := func(key, value string, n int) {
		t.Helper()
		for range n {
			if _, err := s.Observe(ctx, Observation{Domain: "shop.example", Type: Quirk, Key: key, Value: value}); err != nil {
				t.Fatal(err)
			}
		}
	}
	obs("search", "the search box opens suggestions", 3)
	obs("cookies", "a banner covers the page", 2)
	keys := func() string {
		fs, err := s.Confident(ctx, "shop.example")
		if err != nil {
			t.Fatal(err)
		}
		var b string
		for _, f := range fs {
			b += f.Key + " "
		}
		return b
	}
	if got := keys(); got != "search cookies " {
		t.Fatalf("before: %q", got)
	}
	n, err := s.Attribute(ctx, []Attribution{
		{Domain: "shop.example", Type: Quirk, Key: "Search", Value: "the search box  opens suggestions", Counts: engine.Counts{Shown: UnhelpfulAfter, Used: 3}},
		{Domain: "shop.example", Type: Quirk, Key: "cookies", Value: "a banner covers the page", Counts: engine.Counts{Shown: 1, Used: 1, Helped: 1}},
		{Domain: "shop.example", Type: Quirk, Key: "cookies", Value: "another value", Counts: engine.Counts{Shown: 1}},
	})
	if err != nil || n != 2 {
		t.Fatalf("Attribute = %d, %v; want 2 updated", n, err)
	}
	if got := keys(); got != "cookies search " {
		t.Fatalf("after: %q; want the shown-but-never-helpful fact last", got)
	}
	// A confirmation keeps the counts.
	obs("cookies", "a banner covers the page", 1)
	fs, _ := s.Confident(ctx, "shop.example")
	if f := fs[0]; f.Shown != 1 || f.Used != 1 || f.Helped != 1 || f.Sources != 3 {
		t.Fatalf("cookies after a confirmation: %+v", f)
	}
	if _, err := s.Attribute(ctx, []Attribution{{Domain: "shop.example", Type: Quirk, Key: "cookies", Value: "x", Counts: engine.Counts{Shown: 1, Helped: 1}}}); err == nil {
		t.Fatal("helped > used accepted")
	}
}

// An attribution that brings a fact written by a program to
// engine.PruneUnhelpfulAfter shown, never helped, removes it
// (facts_pruned, reason unhelpful); a person's fact, one that helped and
// one shown less stay.
func TestAttributePrunesUnhelpful(t *testing.T) {
	ctx := context.Background()
	db := badgertest.Open(t)
	var pruned []event.Event
	evs := func(e event.Event) {
		if e.Name == EventPruned {
			pruned = append(pruned, e)
		}
	}
	run := New(db, Options{Events: evs, Provenance: engine.Provenance{Source: engine.SourceAPI}})
	person := New(db, Options{Events: evs, Provenance: engine.Provenance{Source: engine.SourceManual}})
	for _, c := range []struct {
		s   *Store
		key string
	}{{run, "bad"}, {run, "helped"}, {run, "fewer"}, {person, "mine"}} {
		if _, err := c.s.Observe(ctx, Observation{Domain: "shop.example", Type: Quirk, Key: c.key, Value: "v " + c.key}); err != nil {
			t.Fatal(err)
		}
	}
	at := engine.PruneUnhelpfulAfter
	attr := func(key string, c engine.Counts) Attribution {
		return Attribution{Domain: "shop.example", Type: Quirk, Key: key, Value: "v " + key, Counts: c}
	}
	n, err := run.Attribute(ctx, []Attribution{
		attr("bad", engine.Counts{Shown: at}),
		attr("helped", engine.Counts{Shown: at, Used: 1, Helped: 1}),
		attr("fewer", engine.Counts{Shown: at - 1}),
		attr("mine", engine.Counts{Shown: at}),
	})
	if err != nil || n != 4 {
		t.Fatalf("Attribute = %d, %v", n, err)
	}
	fs, err := run.List(ctx, "shop.example")
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, f := range fs {
		left = append(left, f.Key)
	}
	slices.Sort(left)
	if got := strings.Join(left, " "); got != "fewer helped mine" {
		t.Fatalf("left %q; want bad pruned", got)
	}
	if len(pruned) != 1 || pruned[0].Fields["key"] != "bad" || pruned[0].Fields["reason"] != "unhelpful" {
		t.Fatalf("facts_pruned events: %+v", pruned)
	}
}
