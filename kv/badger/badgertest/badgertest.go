// Package badgertest opens badger stores for tests: on disk in a test's
// temp dir (or a dir it names), or in memory, each closed when the test
// ends. The backend-free helpers (the conformance suite, fault injection,
// dumps) are in kv/kvtest.
package badgertest

import (
	"context"
	"testing"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger"
)

// Open returns a store in tb's temp dir, closed when tb ends.
func Open(tb testing.TB) kv.Store {
	tb.Helper()
	return OpenDir(tb, tb.TempDir())
}

// OpenDir opens the store in dir, closed when tb ends if the test has not
// closed it (closing twice is harmless).
func OpenDir(tb testing.TB, dir string) kv.Store {
	tb.Helper()
	db, err := badger.Open(context.Background(), dir, badger.Options{GCInterval: -1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// OpenMemory returns a store in memory only, closed when tb ends if the
// test has not closed it.
func OpenMemory(tb testing.TB) kv.Store {
	tb.Helper()
	db, err := badger.OpenMemory()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
