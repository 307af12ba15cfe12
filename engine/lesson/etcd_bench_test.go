package lesson

import (
	"context"
	"fmt"
	"testing"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/etcd"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
)

// The same lessons on badger, on a single etcd member and on a 3-member
// etcd cluster (in this process, over loopback gRPC): recall on error,
// recall by domain and record, side by side, for the ratios in
// ARCHITECTURE.md "etcd".
func BenchmarkStores(b *testing.B) {
	single := etcdtest.Start(b)
	three := etcdtest.StartCluster(b, 3).Endpoints
	onEtcd := func(eps []string, from *Store) *Store {
		etcdtest.Wipe(b, eps)
		db, err := etcd.Open(context.Background(), etcd.Options{Endpoints: eps})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		copyStore(b, from.db, db)
		return New(db, from.opts)
	}
	for _, n := range []int{1_000, 10_000} {
		onBadger := benchStore(b, n, false)
		for _, st := range []struct {
			name string
			s    *Store
		}{{"badger", onBadger}, {"etcd", onEtcd(single, onBadger)}, {"etcd3", onEtcd(three, onBadger)}} {
			ctx := context.Background()
			sites := max(n/20, 1)
			b.Run(fmt.Sprintf("RecallError/%s/n=%d", st.name, n), func(b *testing.B) {
				for i := range b.N {
					ls, err := st.s.RecallError(ctx, "fill e37 padel rackets", "too many arguments: expected 2, received 3", fmt.Sprintf("www.site%d.example", i%sites))
					if err != nil || len(ls) == 0 {
						b.Fatalf("recall: %d lessons, %v", len(ls), err)
					}
				}
			})
			b.Run(fmt.Sprintf("RecallDomain/%s/n=%d", st.name, n), func(b *testing.B) {
				for i := range b.N {
					if _, err := st.s.RecallDomain(ctx, fmt.Sprintf("www.site%d.example", i%sites)); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("Record/%s/n=%d", st.name, n), func(b *testing.B) {
				for i := range b.N {
					l := Lesson{Lesson: "x", Category: ErrorRecovery, FailedCommand: "click", ErrorPattern: fmt.Sprintf("new problem %d", i/2)}
					if _, _, err := st.s.Record(ctx, l, "www.google.com"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// copyStore writes every key of from into to, in batches.
func copyStore(b *testing.B, from, to kv.Store) {
	b.Helper()
	ctx := context.Background()
	var ops []kv.Op
	err := from.View(ctx, func(r kv.Reader) error {
		return r.Scan(nil, kv.ScanOptions{}, func(k, v []byte) error {
			ops = append(ops, kv.Op{Key: append([]byte(nil), k...), Value: append([]byte(nil), v...)})
			return nil
		})
	})
	if err == nil {
		err = to.Batch(ctx, ops)
	}
	if err != nil {
		b.Fatal(err)
	}
}
