package selector

import (
	"context"
	"strings"
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

// On etcd a warm Known opens no View (the token is watched); another
// client's write is seen once its watch event arrives, this store's own
// at once.
func TestWarmKnownOnEtcd(t *testing.T) {
	ctx := context.Background()
	eps := etcdtest.Start(t)
	dbA := kvtest.CountViews(openEtcd(t, eps))
	a, b := New(dbA, Options{}), New(openEtcd(t, eps), Options{})
	known := func() string {
		t.Helper()
		ss, err := a.Known(ctx, "https://shop.example/", 0)
		if err != nil {
			t.Fatal(err)
		}
		return names(ss)
	}
	if _, err := a.Record(ctx, Observation{Domain: "shop.example", Role: "button", Name: "Pay", Selector: "#pay"}); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; time.Sleep(time.Millisecond) { // polling; the deadline decides
		if _, ok := sitecache.Token(dbA, keyspace.SelectorGen("shop.example")); ok {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the selector token is not synced after 20 s")
		}
	}
	known() // warms the cache at the watched token
	before := dbA.Views()
	for range 20 {
		if got := known(); got != "#pay" {
			t.Fatalf("warm Known: %q", got)
		}
	}
	if n := dbA.Views() - before; n != 0 {
		t.Errorf("20 warm Knowns opened %d Views, want 0", n)
	}

	if _, err := b.Record(ctx, Observation{Domain: "shop.example", Role: "button", Name: "Back", Selector: "#back"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for !strings.Contains(known(), "#back") {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("a does not see b's selector after 20 s: %q", known())
		}
		time.Sleep(time.Millisecond) // polling; the deadline decides
	}
	t.Logf("another client's selector seen after %v", time.Since(start))

	if _, err := a.Record(ctx, Observation{Domain: "shop.example", Role: "link", Name: "Help", Selector: "#help"}); err != nil {
		t.Fatal(err)
	}
	if got := known(); !strings.Contains(got, "#help") {
		t.Errorf("own write not seen at once: %q", got)
	}
}
