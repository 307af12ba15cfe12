package trajectory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

var (
	benchVerbs = []string{"search", "find", "compare", "buy", "review", "track", "list", "open", "filter", "save",
		"share", "rate", "order", "return", "browse", "check", "watch", "download", "export", "book"}
	benchCats = []string{"electronics", "garden", "kitchen", "sports", "toys", "books", "music", "shoes", "jewelry", "office",
		"pets", "beauty", "health", "baby", "tools", "auto", "grocery", "outdoor", "lighting", "furniture",
		"crafts", "games", "luggage", "watches", "software", "cameras", "phones", "laptops", "tablets", "audio"}
	benchMods = []string{"sorted by price", "with free shipping", "from top sellers", "on sale today", "with good reviews",
		"under the budget", "for next week", "in stock nearby", "by newest first", "with gift wrap",
		"for a birthday", "with express delivery", "in bulk packs", "as a gift card", "from local shops",
		"with extended warranty", "in recycled packaging", "for small spaces", "with easy returns", "in premium quality"}
	benchValues = []string{"padel rackets", "tennis balls", "red shoes", "usb cables", "coffee beans", "yoga mats",
		"desk lamps", "water bottles", "phone cases", "garden hoses", "board games", "wool socks"}
)

// benchGoal is the i-th distinct goal template of the benchmarks (20·30·20
// = 12,000 of them) with a typed value.
func benchGoal(i int, value string) string {
	v := benchVerbs[i%len(benchVerbs)]
	c := benchCats[(i/len(benchVerbs))%len(benchCats)]
	m := benchMods[(i/(len(benchVerbs)*len(benchCats)))%len(benchMods)]
	return fmt.Sprintf("%s %s in %s %s", v, value, c, m)
}

// fillBench records n trajectories of distinct templates on one host.
func fillBench(b *testing.B, db kv.Store, n int) {
	b.Helper()
	s := New(db, Options{Now: func() time.Time { return t0 }})
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	for i := range n {
		v := benchValues[rng.IntN(len(benchValues))]
		_, err := s.Record(ctx, Trajectory{
			Domain: "www.shop.example", Goal: benchGoal(i, v), DurationMs: int64(5000 + rng.IntN(60000)),
			RecordedAt: t0.Add(-time.Duration(rng.IntN(20*24)) * time.Hour),
			Steps: []Step{
				{Action: "click", Role: "searchbox", Name: "Search", Selector: "#q", URL: "https://www.shop.example/", Verified: true},
				{Action: "type", Role: "searchbox", Name: "Search", Selector: "#q", Value: v, Verified: true},
				{Action: "press", Value: "Enter", Verified: rng.IntN(2) == 0},
				{Action: "click", Role: "link", Name: "Filter", URL: "https://www.shop.example/s?q=" + v},
			},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatch matches a goal among n trajectories in one domain with a
// warm index cache (the agent loop's case: many steps in one process).
// Cold loads the index from badger every time (the CLI's case: one match
// per process, and the first match after another process wrote).
func BenchmarkMatch(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		db := badgertest.Open(b)
		fillBench(b, db, n)
		// A goal of a recorded template with another value, and one that
		// matches nothing.
		hit := benchGoal(n/2, "hiking boots")
		miss := "cancel my newsletter subscription please"
		ctx := context.Background()
		now := func() time.Time { return t0 }
		for _, c := range []struct {
			name     string
			goal     string
			weighted bool
			want     bool
		}{{"hit", hit, false, true}, {"weighted", hit, true, true}, {"miss", miss, false, false}} {
			b.Run(fmt.Sprintf("n=%d/%s/warm", n, c.name), func(b *testing.B) {
				s := New(db, Options{Now: now, Weighted: c.weighted})
				for b.Loop() {
					m, err := s.Match(ctx, "https://www.shop.example/", c.goal)
					if err != nil || (m != nil) != c.want {
						b.Fatalf("match %q: %v %v", c.goal, m, err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("n=%d/hit/cold", n), func(b *testing.B) {
			for b.Loop() {
				resetCache()
				s := New(db, Options{Now: now})
				if m, err := s.Match(ctx, "https://www.shop.example/", hit); err != nil || m == nil {
					b.Fatalf("match: %v %v", m, err)
				}
			}
		})
		if n == 10000 {
			// The agent loop's end of run: record, then the next run's
			// first match, on one Store (the cache is updated in place).
			b.Run(fmt.Sprintf("n=%d/record+match", n), func(b *testing.B) {
				s := New(db, Options{Now: now})
				if _, err := s.Match(ctx, "www.shop.example", hit); err != nil {
					b.Fatal(err)
				}
				i := 0
				for b.Loop() {
					i++
					_, err := s.Record(ctx, Trajectory{Domain: "www.shop.example", Goal: fmt.Sprintf("open saved list number%d", i),
						Steps: []Step{{Action: "click", Name: "Lists"}}})
					if err != nil {
						b.Fatal(err)
					}
					if m, err := s.Match(ctx, "www.shop.example", hit); err != nil || m == nil {
						b.Fatalf("match: %v %v", m, err)
					}
				}
			})
		}
		db.Close()
	}
}

// BenchmarkRecord: one successful run's trajectory (8 steps) replacing the
// last one of its template on on-disk badger, the screen of its goal and
// steps included.
func BenchmarkRecord(b *testing.B) {
	ctx := context.Background()
	db := openDisk(b, b.TempDir())
	defer db.Close()
	s := New(db, Options{Now: func() time.Time { return t0 }})
	tr := Trajectory{Domain: "shop.example", Goal: "search padel rackets and add the cheapest to the cart", DurationMs: 30000}
	for i := range 8 {
		tr.Steps = append(tr.Steps, Step{Action: "click", Role: "button", Name: fmt.Sprintf("Button number %d of the page", i),
			Selector: fmt.Sprintf(`role=button[name="Button number %d of the page"]`, i), Value: "padel rackets", URL: "https://shop.example/s?q=padel", Verified: true})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := s.Record(ctx, tr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScreen: the screen of BenchmarkRecord's trajectory alone.
func BenchmarkScreen(b *testing.B) {
	tr := Trajectory{Domain: "shop.example", Goal: "search padel rackets and add the cheapest to the cart"}
	for i := range 8 {
		tr.Steps = append(tr.Steps, Step{Action: "click", Role: "button", Name: fmt.Sprintf("Button number %d of the page", i),
			Selector: fmt.Sprintf(`role=button[name="Button number %d of the page"]`, i), Value: "padel rackets"})
	}
	b.ReportAllocs()
	for range b.N {
		if r := screenOf(&tr); r != "" {
			b.Fatal(r)
		}
	}
}
