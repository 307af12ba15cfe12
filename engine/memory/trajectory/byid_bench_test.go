package trajectory

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

// BenchmarkGetByID finds a trajectory from its id alone in a store of 500
// sites holding 100,000 other site keys (lessons' records and index
// entries stand in): through its id entry, and by the scan a store written
// before the entries falls back to (the id entry removed).
func BenchmarkGetByID(b *testing.B) {
	ctx := context.Background()
	db := badgertest.Open(b)
	s := New(db, Options{Now: func() time.Time { return t0 }})
	const sites, filler = 500, 100_000
	for i := 0; i < filler; i += 1000 {
		if err := db.Update(ctx, func(tx kv.Txn) error {
			for j := i; j < i+1000; j++ {
				if err := tx.Set(keyspace.Lesson(fmt.Sprintf("site%03d.example", j%sites), fmt.Sprintf("les_%08d", j)), []byte(`{}`), 0); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	var last Trajectory
	for i := range sites {
		t, err := s.Record(ctx, Trajectory{Domain: fmt.Sprintf("site%03d.example", i), Goal: "open settings page", Steps: []Step{{Action: "click", Name: "Settings"}}})
		if err != nil {
			b.Fatal(err)
		}
		last = t
	}
	get := func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Get(ctx, "", last.ID); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("entry", get)
	if err := db.Update(ctx, func(tx kv.Txn) error { return tx.Delete(keyspace.TrajectoryID(last.ID)) }); err != nil {
		b.Fatal(err)
	}
	b.Run("scan", get)
}
