package memctx

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/session"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

// BenchmarkBuild builds a full context (all six sections) on a site that
// holds 10,000 trajectories, 5 sessions, 40 facts, 40 selectors and 10
// lessons, with the stores the agent loop keeps open across steps.
func BenchmarkBuild(b *testing.B) {
	ctx := context.Background()
	db := badgertest.Open(b)
	defer db.Close()
	now := func() time.Time { return t0 }
	src := Sources{
		Sessions:     session.New(db, session.Options{Now: now}),
		Trajectories: trajectory.New(db, trajectory.Options{Now: now}),
		Facts:        fact.New(db, fact.Options{Now: now}),
		Selectors:    selector.New(db, selector.Options{Now: now}),
		Lessons:      lesson.New(db, lesson.Options{Now: now}),
	}
	verbs := []string{"search", "find", "compare", "buy", "review", "track", "list", "open", "filter", "save"}
	cats := []string{"electronics", "garden", "kitchen", "sports", "toys", "books", "music", "shoes", "jewelry", "office",
		"pets", "beauty", "health", "baby", "tools", "auto", "grocery", "outdoor", "lighting", "furniture"}
	mods := []string{"sorted by price", "with free shipping", "from top sellers", "on sale today", "with good reviews",
		"under the budget", "for next week", "in stock nearby", "by newest first", "with gift wrap",
		"for a birthday", "with express delivery", "in bulk packs", "as a gift card", "from local shops",
		"with extended warranty", "in recycled packaging", "for small spaces", "with easy returns", "in premium quality",
		"for the office", "in dark colours", "with a discount code", "for beginners", "for professionals",
		"with spare parts", "in a small size", "in a large size", "with a manual", "without batteries",
		"with fast charging", "for travel", "for kids", "for the garden", "with a warranty card",
		"with next day delivery", "from the outlet", "in the clearance", "with reviews above four", "in limited edition",
		"with an installation service", "from certified sellers", "with a price match", "in a bundle", "for students",
		"for seniors", "for pets", "with a trial period", "with gift receipt", "in eco mode"}
	ts := src.Trajectories.(*trajectory.Store)
	for i := range 10000 {
		v := []string{"padel rackets", "tennis balls", "red shoes", "usb cables"}[i%4]
		goal := fmt.Sprintf("%s %s in %s %s", verbs[i%10], v, cats[(i/10)%20], mods[(i/200)%50])
		_, err := ts.Record(ctx, trajectory.Trajectory{Domain: "www.shop.example", Goal: goal, DurationMs: 20000, Steps: []trajectory.Step{
			{Action: "type", Role: "searchbox", Name: "Search", Selector: "#q", Value: v, Verified: true},
			{Action: "press", Value: "Enter", Verified: true},
			{Action: "click", Role: "link", Name: "First result", URL: "https://www.shop.example/s?q=" + v},
		}})
		if err != nil {
			b.Fatal(err)
		}
	}
	ss := src.Sessions.(*session.Store)
	for i := range 5 {
		if _, err := ss.Record(ctx, session.Session{Domain: "www.shop.example", Goal: fmt.Sprintf("goal %d", i), Outcome: "done",
			Success: true, FinalURL: "https://www.shop.example/x", Timestamp: t0.Add(time.Duration(i) * time.Minute), TurnsUsed: 5, DurationMS: 9000}); err != nil {
			b.Fatal(err)
		}
	}
	fs := src.Facts.(*fact.Store)
	sels := src.Selectors.(*selector.Store)
	for i := range 40 {
		for range 2 {
			if _, err := fs.Observe(ctx, fact.Observation{Domain: "shop.example", Type: fact.Quirk, Key: fmt.Sprintf("k%d", i), Value: "v"}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := sels.Record(ctx, selector.Observation{Domain: "www.shop.example", Role: "button", Name: fmt.Sprintf("B%d", i), Selector: fmt.Sprintf("#b%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	ls := src.Lessons.(*lesson.Store)
	for i := range 10 {
		if _, _, err := ls.Record(ctx, lesson.Lesson{Lesson: fmt.Sprintf("tip %d", i), Category: lesson.SiteSpecific, Domain: "shop.example",
			FailedCommand: "click", ErrorPattern: fmt.Sprintf("pattern %d", i), Source: lesson.SourceLearned}, "shop.example"); err != nil {
			b.Fatal(err)
		}
	}
	bld := New(src, Options{})
	req := Request{URL: "https://www.shop.example/", Goal: "compare hiking boots in sports with free shipping",
		LastCommand: "click #buy", LastError: "pattern 3 happened"}
	r, err := bld.Build(ctx, req)
	if err != nil {
		b.Fatal(err)
	}
	if got := names(r.Sections); got != "sessions error_tips trajectory domain_tips knowledge selectors" || r.Match == nil {
		b.Fatalf("sections %q, match %v", got, r.Match)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := bld.Build(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
