package memory_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

// Inspect reads a data dir's schema stamp, newer than this engine's
// included, without waiting for a holder; a shared store is reached
// through its opener.
func TestInspect(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Held: the holder is named at once.
	var le *memory.LockedError
	if _, err := memory.Inspect(ctx, dir, nil); !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Fatalf("inspect of a held data dir: %v", err)
	}
	if err := m.DB().Update(ctx, func(tx kv.Txn) error {
		return tx.Set(keyspace.Schema(), []byte("99"), 0)
	}); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	in, err := memory.Inspect(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := in.Schema(ctx); err != nil || v != 99 {
		t.Fatalf("schema = %d, %v; want 99", v, err)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}

	shared := badgertest.OpenMemory(t)
	in, err = memory.Inspect(ctx, t.TempDir(), func(context.Context) (kv.Store, error) { return shared, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if v, err := in.Schema(ctx); err != nil || v != 0 {
		t.Fatalf("schema of an empty store = %d, %v; want 0", v, err)
	}
	if err := shared.Update(ctx, func(tx kv.Txn) error { return tx.Set(keyspace.Schema(), []byte("x"), 0) }); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Schema(ctx); err == nil {
		t.Fatal("a stamp that is no number read as a version")
	}
}

// An import that stopped part way in a namespace is seen there and rolled
// back by Recover, which leaves the default namespace alone.
func TestRecoverNamespace(t *testing.T) {
	ctx := context.Background()
	db := badgertest.Open(t)
	root := memory.New(db, memory.Options{})
	team := kv.Prefixed(db, keyspace.Namespace("team"))
	j, err := kv.Begin(ctx, team, kv.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Write(ctx, []kv.Op{{Key: []byte("half/written"), Value: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	if pending, err := root.RecoveryPending(ctx); err != nil || pending {
		t.Fatalf("pending in the default namespace: %v, %v", pending, err)
	}
	if _, err := root.Recover(ctx, "no/such"); err == nil {
		t.Fatal("recover of a bad namespace name")
	}
	if back, err := root.Recover(ctx, memory.DefaultNamespace); err != nil || back {
		t.Fatalf("recover of the default namespace: %v, %v", back, err)
	}
	if back, err := root.Recover(ctx, "team"); err != nil || !back {
		t.Fatalf("recover of team: %v, %v", back, err)
	}
	if _, err := kv.Get(ctx, team, []byte("half/written")); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("the half-written key after recover: %v", err)
	}
	if _, err := root.CreateNamespace(ctx, "team"); err != nil {
		t.Fatal(err)
	}
	m, err := root.WithNamespace(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	if pending, err := m.RecoveryPending(ctx); err != nil || pending {
		t.Fatalf("pending in team after recover: %v, %v", pending, err)
	}
}
