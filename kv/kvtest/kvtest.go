// Package kvtest helps tests and fuzz targets that reuse one store across
// many cheap iterations: opening badger costs ~100 ms, emptying it does not.
package kvtest

import (
	"context"
	"testing"

	"github.com/engine-dev/engine/kv"
)

// Open returns a store in tb's temp dir, closed when tb ends.
func Open(tb testing.TB) kv.Store {
	tb.Helper()
	db, err := kv.Open(context.Background(), tb.TempDir(), kv.Options{GCInterval: -1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// Wipe deletes every key in db.
func Wipe(tb testing.TB, db kv.Store) {
	tb.Helper()
	ctx := context.Background()
	var ops []kv.Op
	err := db.View(ctx, func(r kv.Reader) error {
		return r.Scan(nil, kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			ops = append(ops, kv.Op{Key: append([]byte(nil), k...), Delete: true})
			return nil
		})
	})
	if err == nil && len(ops) > 0 {
		err = db.Batch(ctx, ops)
	}
	if err != nil {
		tb.Fatal(err)
	}
}
