package fact

import (
	"context"
	"fmt"
	"testing"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
)

// BenchmarkWarmConfident: the facts that reach the prompt for a site whose
// per-site cache is warm (20 facts, 4 sites in turn), on badger, on one
// etcd member and on a 3-member cluster (in this process, over loopback
// gRPC), and on etcd with the token read in a View as before the watch
// (unwatched): the watched token spares the View's round trip. For the
// ratios in docs/benchmarks.md, "etcd against badger".
func BenchmarkWarmConfident(b *testing.B) {
	const sites = 4
	fill := func(db kv.Store) *Store {
		s := New(db, Options{Now: clock(t0)})
		ctx := context.Background()
		for site := range sites {
			for i := range 20 {
				o := Observation{Domain: fmt.Sprintf("www.site%d.example", site), Type: Quirk, Key: fmt.Sprint("k", i), Value: "v"}
				for range 3 { // confirmed: confident enough for the prompt
					if _, err := s.Observe(ctx, o); err != nil {
						b.Fatal(err)
					}
				}
			}
			if _, ok := db.(kv.Watcher); ok {
				waitSynced(b, db, fmt.Sprintf("site%d.example", site))
			}
		}
		return s
	}
	// Both etcd servers run throughout, so every store is measured with
	// the same servers sharing the process's CPUs.
	single, three := etcdtest.Start(b), etcdtest.StartCluster(b, 3).Endpoints
	for _, st := range []struct {
		name string
		open func() kv.Store
	}{
		{"badger", func() kv.Store { return openDisk(b, b.TempDir()) }},
		{"etcd", func() kv.Store { etcdtest.Wipe(b, single); return openEtcd(b, single) }},
		{"etcd3", func() kv.Store { etcdtest.Wipe(b, three); return openEtcd(b, three) }},
		// Unwatched: the token read in a View, as before the watch.
		{"etcd-unwatched", func() kv.Store { etcdtest.Wipe(b, single); return struct{ kv.Store }{openEtcd(b, single)} }},
		{"etcd3-unwatched", func() kv.Store { etcdtest.Wipe(b, three); return struct{ kv.Store }{openEtcd(b, three)} }},
	} {
		b.Run(st.name, func(b *testing.B) {
			s := fill(st.open())
			ctx := context.Background()
			for site := range sites { // warm
				if fs, err := s.Confident(ctx, fmt.Sprintf("www.site%d.example", site)); err != nil || len(fs) != 20 {
					b.Fatalf("%d facts, %v", len(fs), err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, err := s.Confident(ctx, fmt.Sprintf("www.site%d.example", i%sites)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
