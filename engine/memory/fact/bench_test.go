package fact

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkObserve: one confirmation of a fact on on-disk badger, the
// screen of its key and value included.
func BenchmarkObserve(b *testing.B) {
	ctx := context.Background()
	db := openDisk(b, b.TempDir())
	defer db.Close()
	s := New(db, Options{Now: clock(t0)})
	obs := Observation{Domain: "shop.example", Type: Pattern, Key: "flow: search {1} and open the first result",
		Value: `fill "padel" into "Search" → click "Search" → click "Padel Racket Pro 2000 by Brand"`}
	for i := range 20 {
		if _, err := s.Observe(ctx, Observation{Domain: obs.Domain, Type: Quirk, Key: fmt.Sprint("k", i), Value: "v"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := s.Observe(ctx, obs); err != nil {
			b.Fatal(err)
		}
	}
}
