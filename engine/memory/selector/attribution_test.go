package selector

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
	for range 3 {
		if _, err := s.Record(ctx, Observation{Domain: "shop.example", Role: "button", Name: "Search", Selector: "#search"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Record(ctx, Observation{Domain: "shop.example", Role: "link", Name: "Cart", Selector: "#cart"}); err != nil {
		t.Fatal(err)
	}
	known, _ := s.Known(ctx, "https://shop.example/", 0)
	if got := names(known); got != "#search #cart" {
		t.Fatalf("before: %q", got)
	}
	n, err := s.Attribute(ctx, []Attribution{
		{Domain: "shop.example", Role: "button", Name: "Search", Selector: "#search", Counts: engine.Counts{Shown: UnhelpfulAfter, Used: 2}},
		{Domain: "shop.example", Role: "link", Name: "Cart", Selector: "#cart", Counts: engine.Counts{Shown: 2, Used: 1, Helped: 1}},
		{Domain: "shop.example", Role: "link", Name: "Gone", Selector: "#gone", Counts: engine.Counts{Shown: 1}},
	})
	if err != nil || n != 2 {
		t.Fatalf("Attribute = %d, %v; want 2 updated", n, err)
	}
	known, _ = s.Known(ctx, "https://shop.example/", 0)
	if got := names(known); got != "#cart #search" {
		t.Fatalf("after: %q; want the shown-but-never-helpful #search last", got)
	}
	if c := known[0]; c.Shown != 2 || c.Used != 1 || c.Helped != 1 {
		t.Fatalf("#cart counters %d/%d/%d", c.Shown, c.Used, c.Helped)
	}
	if !known[1].Unhelpful() || known[1].Shown != UnhelpfulAfter || known[1].Used != 2 {
		t.Fatalf("#search %+v", known[1])
	}
	if _, err := s.Attribute(ctx, []Attribution{{Domain: "shop.example", Role: "link", Name: "Cart", Selector: "#cart", Counts: engine.Counts{Shown: 1, Used: 2}}}); err == nil {
		t.Fatal("used > shown accepted")
	}
}

// An attribution that brings a selector written by a program to
// engine.PruneUnhelpfulAfter shown, never helped, removes it (with its
// event); a person's selector, one that helped, and one shown less stay.
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
		sel string
	}{{run, "#bad"}, {run, "#helped"}, {run, "#fewer"}, {person, "#mine"}} {
		if _, err := c.s.Record(ctx, Observation{Domain: "shop.example", Role: "button", Name: c.sel[1:], Selector: c.sel}); err != nil {
			t.Fatal(err)
		}
	}
	at := engine.PruneUnhelpfulAfter
	attr := func(sel string, c engine.Counts) Attribution {
		return Attribution{Domain: "shop.example", Role: "button", Name: sel[1:], Selector: sel, Counts: c}
	}
	n, err := run.Attribute(ctx, []Attribution{
		attr("#bad", engine.Counts{Shown: at - 1}), attr("#bad", engine.Counts{Shown: 1}),
		attr("#helped", engine.Counts{Shown: at, Used: 1, Helped: 1}),
		attr("#fewer", engine.Counts{Shown: at - 1}),
		attr("#mine", engine.Counts{Shown: at}),
	})
	if err != nil || n != 5 {
		t.Fatalf("Attribute = %d, %v", n, err)
	}
	ss, err := run.List(ctx, "shop.example")
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, s := range ss {
		left = append(left, s.Selector)
	}
	slices.Sort(left)
	if got := strings.Join(left, " "); got != "#fewer #helped #mine" {
		t.Fatalf("left %q; want #bad pruned", got)
	}
	if len(pruned) != 1 || pruned[0].Fields["selector"] != "#bad" || pruned[0].Fields["reason"] != "unhelpful" {
		t.Fatalf("selector_pruned events: %+v", pruned)
	}
}
