package session

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/engine-dev/engine/kv/badger/badgertest"
)

// BenchmarkRecentAndRender is the context builder's read: the newest
// sessions of one site among 1000 sites, rendered.
func BenchmarkRecentAndRender(b *testing.B) {
	ctx := context.Background()
	db := badgertest.Open(b)
	defer db.Close()
	st := New(db, Options{})
	var ss []Session
	for i := range 5000 {
		ss = append(ss, Session{Domain: fmt.Sprintf("site%d.com", i%1000), Goal: "goal " + fmt.Sprint(i), Outcome: "did it",
			Success: true, FinalURL: "https://x.com/a", Timestamp: t0.Add(time.Duration(i) * time.Minute), TurnsUsed: 5, DurationMS: 3000})
	}
	p, err := st.Prepare(ss)
	if err != nil {
		b.Fatal(err)
	}
	if err := st.Import(ctx, p); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		got, err := st.Recent(ctx, "www.site500.com", 0)
		if err != nil || len(got) != 5 {
			b.Fatal(len(got), err)
		}
		Render(got)
	}
}

func BenchmarkRecord(b *testing.B) {
	ctx := context.Background()
	db := badgertest.Open(b)
	defer db.Close()
	st := New(db, Options{})
	i := 0
	for b.Loop() {
		i++
		if _, err := st.Record(ctx, Session{Domain: "x.com", Goal: "g", Timestamp: t0.Add(time.Duration(i) * time.Second)}); err != nil {
			b.Fatal(err)
		}
	}
}

// grownStore is one site (x.com) after n sessions recorded one by one,
// each trimming the history: the state a long-used site reaches.
func grownStore(b *testing.B, n int) (*Store, int) {
	b.Helper()
	ctx := context.Background()
	st := New(badgertest.Open(b), Options{})
	for i := range n {
		if _, err := st.Record(ctx, Session{Domain: "x.com", Goal: "goal " + fmt.Sprint(i), Outcome: "did it", Success: true,
			FinalURL: "https://x.com/a", Timestamp: t0.Add(time.Duration(i) * time.Second), TurnsUsed: 5, DurationMS: 3000}); err != nil {
			b.Fatal(err)
		}
	}
	return st, n
}

// BenchmarkGrown is Record and Recent on a site that has recorded 100,
// 1,000 and 10,000 sessions (keeping 5): the cost must not grow with the
// site's past. Run with a fixed -benchtime (e.g. 200x): each Record adds
// one more.
func BenchmarkGrown(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("Record/n=%d", n), func(b *testing.B) {
			st, i := grownStore(b, n)
			for b.Loop() {
				i++
				if _, err := st.Record(ctx, Session{Domain: "x.com", Goal: "goal " + fmt.Sprint(i), Outcome: "did it", Success: true,
					FinalURL: "https://x.com/a", Timestamp: t0.Add(time.Duration(i) * time.Second), TurnsUsed: 5, DurationMS: 3000}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("Recent/n=%d", n), func(b *testing.B) {
			st, _ := grownStore(b, n)
			for b.Loop() {
				got, err := st.Recent(ctx, "www.x.com", 0)
				if err != nil || len(got) != DefaultKeep {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}
