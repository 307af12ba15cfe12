package lesson

import (
	"context"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/internal/sitecache"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv/etcd"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// On etcd a warm recall asks the store nothing: the sites' tokens are
// watched and the returned lessons are decoded in the compiled index. A
// write in the site is seen by the next recall.
func TestWarmRecallOnEtcd(t *testing.T) {
	ctx := context.Background()
	raw, err := etcd.Open(ctx, etcd.Options{Endpoints: etcdtest.Start(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	db := kvtest.CountViews(raw)
	s := New(db, Options{Provenance: engine.Provenance{Source: engine.SourceManual}})
	if err := s.Seed(ctx); err != nil { // the global range has its token from then on
		t.Fatal(err)
	}
	a, _, err := s.Record(ctx, Lesson{Lesson: "Close the banner first.", Category: ErrorRecovery, FailedCommand: "click",
		ErrorPattern: "banner in the way", Domain: "shop.example"}, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := s.Record(ctx, Lesson{Lesson: "Scroll it into view.", Category: ErrorRecovery, FailedCommand: "click",
		ErrorPattern: "not visible", Domain: "shop.example"}, "")
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; time.Sleep(time.Millisecond) { // polling; the deadline decides
		_, ok1 := sitecache.Token(db, keyspace.LessonGen(keyspace.Global))
		_, ok2 := sitecache.Token(db, keyspace.LessonGen("shop.example"))
		if ok1 && ok2 {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the lesson tokens are not synced after 20 s")
		}
	}
	recallIDs := func() []string {
		t.Helper()
		ls, err := s.RecallError(ctx, "click e3", "zzz qqq", "www.shop.example") // matched by verb and site alone
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, l := range ls {
			ids = append(ids, l.ID)
		}
		return ids
	}
	first, second := a.ID, b.ID // equal use, helped and last use: by id
	if second < first {
		first, second = second, first
	}
	recallIDs() // warms the cache and decodes the winners
	before := db.Views()
	if ids := recallIDs(); len(ids) < 2 || ids[0] != first || ids[1] != second {
		t.Fatalf("recall = %v, want [%s %s ...]", ids, first, second)
	}
	if _, err := s.RecallDomain(ctx, "www.shop.example"); err != nil { // warms domain recall
		t.Fatal(err)
	}
	if ls, err := s.RecallDomain(ctx, "www.shop.example"); err != nil || len(ls) != 2 {
		t.Fatalf("domain recall = %v, %v", ls, err)
	}
	if n := db.Views() - before; n != 1 {
		t.Errorf("warm recalls opened %d Views, want 1 (domain recall's first read of its records)", n)
	}
	// A use puts the second first: the store's own write advances the
	// cached index, and the next recall sees it.
	if _, err := s.Use(ctx, second, "shop.example"); err != nil {
		t.Fatal(err)
	}
	if ids := recallIDs(); len(ids) < 2 || ids[0] != second || ids[1] != first {
		t.Fatalf("recall after a use = %v, want [%s %s ...]", ids, second, first)
	}
}
