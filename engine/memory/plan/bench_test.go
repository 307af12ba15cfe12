package plan

import (
	"context"
	"fmt"
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

// BenchmarkGrown is Add on a run whose history already has n iterations,
// and Get of a history of n among 100 runs: Add must not grow with n, Get
// only with what it returns. Run Add with a fixed -benchtime (e.g. 200x):
// each Add makes the history one longer.
func BenchmarkGrown(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10, 100, 1000} {
		s, _ := newStore(b)
		for r := range 100 {
			run := fmt.Sprintf("run-%02d", r)
			its := longHistory(n)
			if r != 50 {
				its = its[:5]
			}
			if err := s.Import(ctx, []History{{RunID: run, Iterations: its}}); err != nil {
				b.Fatal(err)
			}
		}
		it := longHistory(1)[0]
		it.N = 0
		b.Run(fmt.Sprintf("Get/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if got, err := s.Get(ctx, "run-50"); err != nil || len(got) != n {
					b.Fatal(len(got), err)
				}
			}
		})
		b.Run(fmt.Sprintf("Add/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Add(ctx, "run-50", it); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
