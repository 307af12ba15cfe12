package trajectory

import (
	"context"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/memory/internal/sitecache"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/etcd"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
	"github.com/engine-dev/engine/kv/kvtest"
)

func openEtcd(tb testing.TB, eps []string) kv.Store {
	tb.Helper()
	db, err := etcd.Open(context.Background(), etcd.Options{Endpoints: eps})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// On etcd a warm match reads no index (the token is watched): a goal that
// matches nothing opens no View, one that matches opens one (the matched
// record). Another client's trajectory is matched once its watch event
// arrives.
func TestWarmMatchOnEtcd(t *testing.T) {
	ctx := context.Background()
	eps := etcdtest.Start(t)
	dbA := kvtest.CountViews(openEtcd(t, eps))
	a, b := New(dbA, Options{}), New(openEtcd(t, eps), Options{})
	if _, err := a.Record(ctx, searchRun()); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; time.Sleep(time.Millisecond) { // polling; the deadline decides
		if _, ok := sitecache.Token(dbA, keyspace.TrajectoryGen("shop.example")); ok {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the trajectory token is not synced after 20 s")
		}
	}
	match := func(goal string) *Match {
		t.Helper()
		m, err := a.Match(ctx, "shop.example", goal)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	match("search tennis balls") // warms the cache at the watched token
	before := dbA.Views()
	if m := match("cancel my subscription"); m != nil {
		t.Fatalf("matched %q", m.Trajectory.Goal)
	}
	if n := dbA.Views() - before; n != 0 {
		t.Errorf("a warm match of nothing opened %d Views, want 0", n)
	}
	before = dbA.Views()
	if m := match("search tennis balls"); m == nil {
		t.Fatal("no match")
	}
	if n := dbA.Views() - before; n != 1 {
		t.Errorf("a warm match opened %d Views, want 1 (the matched record)", n)
	}

	other := searchRun()
	other.Goal, other.Steps = "open my orders", other.Steps[:1]
	if _, err := b.Record(ctx, other); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for match("open my orders") == nil {
		if time.Since(start) > 20*time.Second {
			t.Fatal("a does not match b's trajectory after 20 s")
		}
		time.Sleep(time.Millisecond) // polling; the deadline decides
	}
	t.Logf("another client's trajectory matched after %v", time.Since(start))
}
