package run

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/engine-dev/engine/kv/badger/badgertest"
)

// benchStore registers n runs spread over 10 sites and 100 sessions.
func benchStore(b *testing.B, n int) *Store {
	b.Helper()
	db := badgertest.Open(b)
	c := &clock{t0}
	s := New(db, Options{Now: c.now})
	var ms []Manifest
	for i := range n {
		c.tick(time.Second)
		m := Manifest{RunID: fmt.Sprintf("run_%06d", i), SessionID: fmt.Sprintf("s%03d", i%100), Status: Running,
			Goal: "goal", Domain: fmt.Sprintf("site%d.com", i%10), StartedAt: c.t}
		if i%3 == 0 {
			m.Status = Completed
		}
		ms = append(ms, m)
	}
	p, err := s.Prepare(ms)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Import(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	return s
}

func BenchmarkList(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b, 10000)
	for _, f := range []struct {
		name string
		f    Filter
	}{
		{"domain-limit5", Filter{Domain: "site3.com", Limit: 5}},
		{"session", Filter{SessionID: "s042"}},
		{"status-limit20", Filter{Status: Completed, Limit: 20}},
		{"domain-all", Filter{Domain: "site3.com"}},
	} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.List(ctx, f.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkStartComplete(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b, 0)
	i := 0
	for b.Loop() {
		i++
		id := fmt.Sprint("r", i)
		if _, err := s.Start(ctx, Start{RunID: id, Goal: "g", Domain: "a.com"}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Complete(ctx, id, Completion{Success: true}); err != nil {
			b.Fatal(err)
		}
	}
}
