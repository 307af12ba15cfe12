package session

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/engine-dev/engine/kv/kvtest"
)

// BenchmarkRecentAndRender is the context builder's read: the newest
// sessions of one site among 1000 sites, rendered.
func BenchmarkRecentAndRender(b *testing.B) {
	ctx := context.Background()
	db := kvtest.Open(b)
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
	db := kvtest.Open(b)
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
