package plan

import (
	"context"
	"testing"
)

func BenchmarkRender(b *testing.B) {
	its := longHistory(100)
	full, _ := Render(its, 0)
	for _, bc := range []struct {
		name   string
		budget int
	}{{"unbounded", 0}, {"half", Tokens(full) / 2}, {"4k-tokens", 4000}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				Render(its, bc.budget)
			}
		})
	}
}

// BenchmarkAddThenGet appends an iteration to a 50-iteration history and
// reads the history back, as the planner does each iteration.
func BenchmarkAddThenGet(b *testing.B) {
	ctx := context.Background()
	s, _ := newStore(b)
	for _, it := range longHistory(50) {
		it.N = 0
		if _, err := s.Add(ctx, "r", it); err != nil {
			b.Fatal(err)
		}
	}
	it := longHistory(1)[0]
	it.N = 0
	for b.Loop() {
		if _, err := s.Add(ctx, "r", it); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Get(ctx, "r"); err != nil {
			b.Fatal(err)
		}
	}
}
