package keyspace

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

func TestInitStampsAndRefusesNewer(t *testing.T) {
	ctx := context.Background()
	s := badgertest.OpenMemory(t)
	defer s.Close()
	if err := Init(ctx, s); err != nil {
		t.Fatal(err)
	}
	if v, _ := kv.Get(ctx, s, Schema()); string(v) != strconv.Itoa(SchemaVersion) {
		t.Fatalf("schema = %q, want %d", v, SchemaVersion)
	}
	if from, err := Pending(ctx, s); from != 0 || err != nil {
		t.Fatalf("new store: pending %d, %v", from, err)
	}
	if err := Init(ctx, s); err != nil {
		t.Fatalf("second Init: %v", err)
	}
	s.Update(ctx, func(tx kv.Txn) error { return tx.Set(Schema(), []byte("99"), 0) })
	if err := Init(ctx, s); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("newer schema: got %v", err)
	}
}

func TestInitMarksMigrationFromOlder(t *testing.T) {
	ctx := context.Background()
	s := badgertest.OpenMemory(t)
	defer s.Close()
	s.Update(ctx, func(tx kv.Txn) error { return tx.Set(Schema(), []byte("1"), 0) })
	if cur, err := Check(ctx, s); cur || err != nil {
		t.Fatalf("v1 store: current %v, %v", cur, err)
	}
	for range 2 { // a second open before the migration finished keeps the origin
		if err := Init(ctx, s); err != nil {
			t.Fatal(err)
		}
		if v, _ := kv.Get(ctx, s, Schema()); string(v) != strconv.Itoa(SchemaVersion) {
			t.Fatalf("schema = %q, want %d", v, SchemaVersion)
		}
		if from, err := Pending(ctx, s); from != 1 || err != nil {
			t.Fatalf("pending %d, %v; want 1", from, err)
		}
		if cur, err := Check(ctx, s); cur || err != nil {
			t.Fatalf("migrating store: current %v, %v", cur, err)
		}
	}
	if err := Migrated(ctx, s); err != nil {
		t.Fatal(err)
	}
	if cur, err := Check(ctx, s); !cur || err != nil {
		t.Fatalf("migrated store: current %v, %v", cur, err)
	}
}

func TestLessonPos(t *testing.T) {
	a := LessonPos(1, 3, true, "x")
	b := LessonPos(1, 3, false, "a")
	c := LessonPos(2, 100, true, "a")
	if !(a < b && b < c) {
		t.Fatalf("order wrong: %s %s %s", a, b, c)
	}
	for _, p := range []string{a, b, c} {
		if !CheckLessonPos(p) {
			t.Fatalf("CheckLessonPos(%q) = false", p)
		}
		if got := LessonPosOf(LessonListByCategory("best_practice", p)); got != p {
			t.Fatalf("LessonPosOf = %q, want %q", got, p)
		}
	}
	for _, p := range []string{"", "3/ffffffffffffffff0/x", "1/fffffffffffffff0/x", "1/ffffffffffffffff2/x", "1/ffffffffffffffff0/", "1/ffffffffffffffff0/a/b", "1/ffffffffffffffff0/%zz", "1/gfffffffffffffff0/x"} {
		if CheckLessonPos(p) {
			t.Fatalf("CheckLessonPos(%q) = true", p)
		}
	}
}

func TestSiteOfAndEscaping(t *testing.T) {
	k := LessonByCommand("amazon.com", "a/b", 0, "l1")
	if string(k) != "site/amazon.com/lesson-cmd/a%2Fb/ffffffffffffffff/l1" {
		t.Fatalf("key = %s", k)
	}
	if s, err := SiteOf(k); err != nil || s != "amazon.com" {
		t.Fatalf("SiteOf = %q, %v", s, err)
	}
	if LastPart(k) != "l1" {
		t.Fatalf("LastPart = %q", LastPart(k))
	}
	// Tier 1 order: higher use first, seed before learned at equal use.
	a, b, c := string(Tier1(9, false, "x")), string(Tier1(3, true, "y")), string(Tier1(3, false, "z"))
	if !(a < b && b < c) {
		t.Fatalf("tier1 order wrong: %s %s %s", a, b, c)
	}
}
