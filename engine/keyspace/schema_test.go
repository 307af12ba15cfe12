package keyspace

import (
	"context"
	"errors"
	"testing"

	"github.com/engine-dev/engine/kv"
)

func TestInitStampsAndRefusesNewer(t *testing.T) {
	ctx := context.Background()
	s, err := kv.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := Init(ctx, s); err != nil {
		t.Fatal(err)
	}
	if v, _ := kv.Get(ctx, s, Schema()); string(v) != "1" {
		t.Fatalf("schema = %q, want 1", v)
	}
	if err := Init(ctx, s); err != nil {
		t.Fatalf("second Init: %v", err)
	}
	s.Update(ctx, func(tx kv.Txn) error { return tx.Set(Schema(), []byte("99"), 0) })
	if err := Init(ctx, s); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("newer schema: got %v", err)
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
