package lesson

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv/etcd"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
)

// TestPruneOnEtcd: etcd allows 128 ops per transaction, so a prune of
// more stale lessons than fit in one goes in smaller batches
// (kv.TxnItems) rather than failing with "too many operations".
func TestPruneOnEtcd(t *testing.T) {
	ctx := context.Background()
	db, err := etcd.Open(ctx, etcd.Options{Endpoints: etcdtest.Start(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)
	s := New(db, Options{Now: func() time.Time { return now }, Provenance: engine.Provenance{Source: engine.SourceManual}})
	const n = 60
	for i := range n {
		l := Lesson{Lesson: fmt.Sprintf("stale %d", i), Category: SiteSpecific, Domain: fmt.Sprintf("s%d.example", i),
			LastUsed: "2025-01-01", CreatedAt: "2025-01-01"}
		if _, _, err := s.Record(ctx, l, ""); err != nil {
			t.Fatal(err)
		}
	}
	pruned, remaining, err := s.Prune(ctx, 0)
	if err != nil || pruned != n || remaining != 0 {
		t.Fatalf("prune on etcd: pruned %d, remaining %d, %v; want %d, 0, nil", pruned, remaining, err, n)
	}
}

// TestForgetSiteOnEtcd: forgetting a site with more lessons than one etcd
// transaction may write goes in batches too.
func TestForgetSiteOnEtcd(t *testing.T) {
	ctx := context.Background()
	db, err := etcd.Open(ctx, etcd.Options{Endpoints: etcdtest.Start(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := New(db, Options{Provenance: engine.Provenance{Source: engine.SourceManual}})
	const n = 40
	for i := range n {
		l := Lesson{Lesson: fmt.Sprintf("tip %d", i), Category: SiteSpecific, Domain: "shop.example"}
		if _, _, err := s.Record(ctx, l, ""); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.ForgetSite(ctx, "shop.example"); err != nil || got != n {
		t.Fatalf("forget on etcd: %d, %v; want %d", got, err, n)
	}
}
