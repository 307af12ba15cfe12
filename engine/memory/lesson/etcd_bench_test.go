package lesson

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/etcd"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
)

// The same lessons on badger, on a single etcd member and on a 3-member
// etcd cluster (in this process, over loopback gRPC): recall on error,
// recall by domain and record, side by side, for the ratios in
// docs/benchmarks.md, "etcd against badger". 100k lessons are added with
// ENGINE_BENCH_ETCD_100K=1 (filling etcd with them takes minutes); the
// time each etcd fill took is logged.
func BenchmarkStores(b *testing.B) {
	onEtcd := func(eps []string, from *Store) *Store {
		db, err := etcd.Open(context.Background(), etcd.Options{Endpoints: eps})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		start := time.Now()
		keys := copyStore(b, from.db, db)
		b.Logf("filled etcd (%d members) with %d keys in %s", len(eps), keys, time.Since(start).Round(time.Millisecond))
		return New(db, from.opts)
	}
	sizes := []int{1_000, 10_000}
	if os.Getenv("ENGINE_BENCH_ETCD_100K") == "1" {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		// A fresh server and cluster for each size: wiping 70k keys in
		// one request takes longer than etcd allows one.
		single := etcdtest.StartServer(b)
		three := etcdtest.StartCluster(b, 3)
		onBadger := benchStore(b, n, false)
		for _, st := range []struct {
			name string
			s    *Store
		}{{"badger", onBadger}, {"etcd", onEtcd(single.Endpoints, onBadger)}, {"etcd3", onEtcd(three.Endpoints, onBadger)}} {
			// Each store starts with no compiled index: the etcd stores
			// are copies of the badger one, generation tokens and all, and
			// the process-wide index caches trust a site's index by its
			// token, so without this the etcd runs were served the
			// indexes the badger run compiled (rotating domain recall
			// measured 5–7 µs on etcd against 43–112 µs on badger).
			for _, c := range indexes {
				c.Clear()
			}
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
			// Warm: the 8 sites a few runs work on, their indexes cached
			// and (on etcd) their generation tokens watched.
			b.Run(fmt.Sprintf("RecallErrorWarm/%s/n=%d", st.name, n), func(b *testing.B) {
				for i := range b.N {
					if _, err := st.s.RecallError(ctx, "fill e37 padel rackets", "too many arguments: expected 2, received 3", fmt.Sprintf("www.site%d.example", i%8)); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("RecallDomainWarm/%s/n=%d", st.name, n), func(b *testing.B) {
				for i := range b.N {
					if _, err := st.s.RecallDomain(ctx, fmt.Sprintf("www.site%d.example", i%8)); err != nil {
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
		single.Stop()
		three.Stop()
	}
}

// copyStore writes every key of from into to through to's Batch (split
// into transactions the store accepts) and returns how many it wrote.
func copyStore(b *testing.B, from, to kv.Store) int {
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
	return len(ops)
}
