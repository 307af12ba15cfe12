package selector

import (
	"context"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

// A selector that worked and then fails on its page is stale: out of
// Known and Lookup, listed with its reason, until a success clears it. A
// selector that never worked is only demoted.
func TestStaleAfterFailureWhereItWorked(t *testing.T) {
	ctx := context.Background()
	s := New(badgertest.Open(t), Options{Provenance: engine.Provenance{Source: engine.SourceLearned, Run: "r2"}})
	obs := Observation{Domain: "https://shop.example/", Path: "/", Role: "button", Name: "Search", Selector: "button:Search"}
	for range 3 {
		if _, err := s.Record(ctx, obs); err != nil {
			t.Fatal(err)
		}
	}
	failed := obs
	failed.Failed, failed.Reason = true, `the page has no button "Search"`
	got, err := s.Record(ctx, failed)
	if err != nil {
		t.Fatal(err)
	}
	if got.Stale == nil || got.Stale.Reason != failed.Reason || got.Stale.Run != "r2" || got.Stale.At.IsZero() {
		t.Fatalf("stale mark %+v", got.Stale)
	}
	if got.Score() != 1 {
		t.Fatalf("score %d, want 1 (still positive: stale, not score, keeps it out)", got.Score())
	}
	known, err := s.Known(ctx, "https://shop.example/", 0)
	if err != nil || len(known) != 0 {
		t.Fatalf("Known = %v, %v; want none (stale)", known, err)
	}
	look, err := s.Lookup(ctx, "https://shop.example/", "button", "Search")
	if err != nil || len(look) != 0 {
		t.Fatalf("Lookup = %v, %v; want none (stale)", look, err)
	}
	all, _ := s.List(ctx, "shop.example")
	if len(all) != 1 || all[0].Stale == nil {
		t.Fatalf("List = %+v; want the stale one listed", all)
	}
	// A second failure keeps the first mark (when it went stale).
	failed.Reason = "another reason"
	if got, _ := s.Record(ctx, failed); got.Stale == nil || got.Stale.Reason != `the page has no button "Search"` {
		t.Fatalf("second failure: %+v", got.Stale)
	}
	// A success re-validates.
	if got, _ := s.Record(ctx, obs); got.Stale != nil {
		t.Fatalf("after a success: %+v", got.Stale)
	}
	if look, _ := s.Lookup(ctx, "https://shop.example/", "button", "Search"); len(look) != 1 {
		t.Fatalf("Lookup after re-validation: %v", look)
	}
	// A failure without a reason only demotes.
	plain := obs
	plain.Failed = true
	if got, _ := s.Record(ctx, plain); got.Stale != nil {
		t.Fatalf("a failure without a reason marked it stale: %+v", got.Stale)
	}

	// Never worked: a failure demotes it, no stale mark.
	never, err := s.Record(ctx, Observation{Domain: "shop.example", Role: "link", Name: "Cart", Selector: "#cart", Failed: true, Reason: "gone"})
	if err != nil || never.Stale != nil || never.Score() != -2 {
		t.Fatalf("first seen failing: %+v, %v", never, err)
	}
}

func TestPutChecksStaleMark(t *testing.T) {
	ctx := context.Background()
	s := New(badgertest.Open(t), Options{})
	sl := Selector{Domain: "shop.example", Role: "button", Name: "Go", Selector: "#go", Successes: 1, Stale: &Stale{}}
	if _, err := s.Put(ctx, sl); err == nil {
		t.Fatal("a stale mark without a reason was accepted")
	}
	sl.Stale.Reason = "gone"
	got, err := s.Put(ctx, sl)
	if err != nil || got.Stale == nil {
		t.Fatalf("Put = %+v, %v", got, err)
	}
	if known, _ := s.Known(ctx, "https://shop.example/", 0); len(known) != 0 {
		t.Fatalf("an imported stale selector is offered: %v", known)
	}
}
