package badger_test

import (
	"context"
	"testing"
	"time"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger"
)

// A watched key written with a TTL is missing once it expires, as badger's
// reads have it, though no commit wrote it.
func TestWatchedTTL(t *testing.T) {
	s, err := badger.Open(context.Background(), t.TempDir(), badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := s.(kv.Watcher)
	if err := s.Update(context.Background(), func(tx kv.Txn) error { return tx.Set([]byte("k"), []byte("v"), time.Second) }); err != nil {
		t.Fatal(err)
	}
	if v, ok := w.Watched([]byte("k")); !ok || string(v) != "v" {
		t.Fatalf("Watched(k) = %q %v", v, ok)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, ok := w.Watched([]byte("k"))
		if !ok {
			t.Fatal("Watched(k) not synced")
		}
		if v == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the copy outlived its TTL of 1 s by 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := kv.Get(context.Background(), s, []byte("k")); err != kv.ErrNotFound {
		t.Errorf("the store still has the key: %v", err)
	}
}

// A read-only open watches too: its copies are read once and, with no
// writer, never change.
func TestWatchedReadOnly(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := badger.Open(ctx, dir, badger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(tx kv.Txn) error { return tx.Set([]byte("gen"), []byte("g1"), 0) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := badger.Open(ctx, dir, badger.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	w := ro.(kv.Watcher)
	for range 2 {
		if v, ok := w.Watched([]byte("gen")); !ok || string(v) != "g1" {
			t.Fatalf("Watched(gen) = %q %v", v, ok)
		}
		if v, ok := w.Watched([]byte("other")); !ok || v != nil {
			t.Fatalf("Watched(other) = %q %v", v, ok)
		}
	}
	ro.Close()
	if _, ok := w.Watched([]byte("gen")); ok {
		t.Error("a closed store served a copy")
	}
}
