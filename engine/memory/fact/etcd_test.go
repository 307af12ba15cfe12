package fact

import (
	"context"
	"slices"
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

// waitSynced polls until db's copy of the site's fact token is synced.
func waitSynced(tb testing.TB, db kv.Store, site string) {
	tb.Helper()
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		if _, ok := sitecache.Token(db, keyspace.FactGen(site)); ok {
			return
		}
		if time.Since(start) > 20*time.Second {
			tb.Fatalf("the fact token of %s is not synced after 20 s", site)
		}
	}
}

func values(fs []Fact) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Value)
	}
	return out
}

// On etcd a warm recall opens no View (the token is watched); another
// client's write is seen once its watch event arrives, this store's own
// at once.
func TestWarmRecallOnEtcd(t *testing.T) {
	ctx := context.Background()
	eps := etcdtest.Start(t)
	dbA := kvtest.CountViews(openEtcd(t, eps))
	a, b := New(dbA, Options{}), New(openEtcd(t, eps), Options{})
	if _, err := a.Observe(ctx, Observation{Domain: "shop.example", Type: Quirk, Key: "modals", Value: "shadow DOM"}); err != nil {
		t.Fatal(err)
	}
	waitSynced(t, dbA, "shop.example")
	if _, err := a.List(ctx, "shop.example"); err != nil { // warms the cache at the watched token
		t.Fatal(err)
	}
	before := dbA.Views()
	for range 20 {
		fs, err := a.List(ctx, "shop.example")
		if err != nil || !slices.Equal(values(fs), []string{"shadow DOM"}) {
			t.Fatalf("warm list: %v %v", values(fs), err)
		}
	}
	if n := dbA.Views() - before; n != 0 {
		t.Errorf("20 warm lists opened %d Views, want 0", n)
	}

	if _, err := b.Observe(ctx, Observation{Domain: "shop.example", Type: Timing, Key: "checkout", Value: "5s"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		fs, err := a.List(ctx, "shop.example")
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(values(fs), "5s") {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("a does not see b's fact after 20 s: %v", values(fs))
		}
		time.Sleep(time.Millisecond) // polling; the deadline decides
	}
	t.Logf("another client's fact seen after %v", time.Since(start))

	if _, err := a.Observe(ctx, Observation{Domain: "shop.example", Type: Quirk, Key: "chat", Value: "bubble"}); err != nil {
		t.Fatal(err)
	}
	if fs, err := a.List(ctx, "shop.example"); err != nil || !slices.Contains(values(fs), "bubble") {
		t.Errorf("own write not seen at once: %v %v", values(fs), err)
	}
}
