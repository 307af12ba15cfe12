package badger_test

import (
	"context"
	"strings"
	"testing"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger"
	"github.com/engine-dev/engine/kv/badger/badgertest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// The badger store honours kv's whole contract on disk; in memory, all of it
// but values of 1 MiB (see MaxMemoryValue).
func TestConformance(t *testing.T) {
	t.Run("disk", func(t *testing.T) {
		kvtest.Run(t, func(t *testing.T) kv.Store { return badgertest.Open(t) })
	})
	t.Run("memory", func(t *testing.T) {
		kvtest.RunSkipping(t, func(t *testing.T) kv.Store {
			s, err := badger.OpenMemory()
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, map[string]string{kvtest.Values: "badger in memory has no value log for a value of 1 MiB"})
	})
}

// In memory, a value too large for badger's in-memory mode is an error,
// not the panic badger ends in; one byte less is taken.
func TestMemoryRefusesAValueOfOneMiB(t *testing.T) {
	s := badgertest.OpenMemory(t)
	ctx := context.Background()
	big := make([]byte, badger.MaxMemoryValue+1)
	if err := s.Update(ctx, func(tx kv.Txn) error { return tx.Set([]byte("k"), big, 0) }); err == nil || !strings.Contains(err.Error(), "more than the in-memory store takes") {
		t.Errorf("Set of 1 MiB: %v", err)
	}
	if err := s.Batch(ctx, []kv.Op{{Key: []byte("k"), Value: big}}); err == nil {
		t.Error("Batch of 1 MiB: no error")
	}
	if err := s.Batch(ctx, []kv.Op{{Key: []byte("k"), Value: big[1:]}}); err != nil {
		t.Errorf("a value of MaxMemoryValue bytes: %v", err)
	}
	if v, err := kv.Get(ctx, s, []byte("k")); err != nil || len(v) != badger.MaxMemoryValue {
		t.Errorf("read back: %d bytes, %v", len(v), err)
	}
}
