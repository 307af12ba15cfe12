package selector

import (
	"context"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv/kvtest"
)

func TestAttributeCountsAndRanking(t *testing.T) {
	ctx := context.Background()
	s := New(kvtest.Open(t), Options{})
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
