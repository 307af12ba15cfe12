package badger

import (
	"bytes"
	"context"
	"testing"

	"github.com/engine-dev/engine/kv"
)

// DiskSize counts the space the store's files take, which grows with what
// it holds; a store in memory cannot tell.
func TestDiskSize(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before, ok := kv.DiskSize(s)
	if !ok {
		t.Fatal("a store on disk cannot tell its size")
	}
	// Values past badger's value threshold go to the value log, which is
	// written at once.
	val := bytes.Repeat([]byte("v"), 4<<20)
	for i := range 4 {
		if err := s.Update(ctx, func(tx kv.Txn) error { return tx.Set([]byte{'k', byte(i)}, val, 0) }); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := kv.DiskSize(s)
	if after < before+int64(4*len(val)) {
		t.Errorf("DiskSize %d after writing %d bytes to a store of %d", after, 4*len(val), before)
	}
	m, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if n, ok := kv.DiskSize(m); ok {
		t.Errorf("a store in memory says it takes %d bytes on disk", n)
	}
}
