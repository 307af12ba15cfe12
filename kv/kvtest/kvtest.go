// Package kvtest helps tests of code written against kv.Store, whatever
// the backend: Run, the conformance suite every kv.Store implementation
// passes; emptying a store that fuzz targets reuse across many cheap
// iterations (opening badger costs ~100 ms, emptying it does not), a store
// that fails the write a test picks, a store that counts its views, and a
// dump of every key to compare a store before and after. A badger store
// for one test is kv/badger/badgertest's.
package kvtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/engine-dev/engine/kv"
)

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

// ErrInjected is the failure a FaultStore injects.
var ErrInjected = errors.New("injected store failure")

// FaultStore fails the FailAt-th write (Update or Batch, counted from 1)
// and, with FailAfter, every write after it; FailAt 0 never fails, which
// counts the writes an operation makes (Writes). A failing Batch writes
// the first half of its ops before it fails, as a store that splits
// batches may. Hook, when set, runs at the failing write before it fails
// (after the half batch): a crash test's hook ends the process there.
type FaultStore struct {
	kv.Store
	FailAt    int
	FailAfter bool
	Hook      func()

	mu     sync.Mutex
	writes int
}

// Writes is how many writes were made through f.
func (f *FaultStore) Writes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

func (f *FaultStore) fail() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	return f.FailAt > 0 && (f.writes == f.FailAt || f.FailAfter && f.writes > f.FailAt)
}

// Update implements kv.Store.
func (f *FaultStore) Update(ctx context.Context, fn func(kv.Txn) error) error {
	if f.fail() {
		if f.Hook != nil {
			f.Hook()
		}
		return ErrInjected
	}
	return f.Store.Update(ctx, fn)
}

// Batch implements kv.Store.
func (f *FaultStore) Batch(ctx context.Context, ops []kv.Op) error {
	if f.fail() {
		if err := f.Store.Batch(ctx, ops[:len(ops)/2]); err != nil {
			return err
		}
		if f.Hook != nil {
			f.Hook()
		}
		return ErrInjected
	}
	return f.Store.Batch(ctx, ops)
}

// Dump returns every key and value in s.
func Dump(tb testing.TB, s kv.Store) map[string]string {
	tb.Helper()
	m := map[string]string{}
	err := s.View(context.Background(), func(r kv.Reader) error {
		return r.Scan(nil, kv.ScanOptions{}, func(k, v []byte) error {
			m[string(k)] = string(v)
			return nil
		})
	})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// Diff says how two dumps differ ("" when they are equal), clipped to 600
// bytes.
func Diff(before, after map[string]string) string {
	var b strings.Builder
	for k, v := range before {
		if w, ok := after[k]; !ok {
			fmt.Fprintf(&b, "lost %q; ", k)
		} else if w != v {
			fmt.Fprintf(&b, "changed %q: %q → %q; ", k, v, w)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			fmt.Fprintf(&b, "added %q; ", k)
		}
	}
	if b.Len() > 600 {
		return b.String()[:600] + "..."
	}
	return b.String()
}

// ViewCounter is a store that counts the Views opened on it, so a test of
// a cache can assert that a warm read opened none. It passes Watched on to
// the store it wraps (not synced when that store watches nothing).
type ViewCounter struct {
	kv.Store
	views atomic.Int64
}

// CountViews wraps s in a ViewCounter.
func CountViews(s kv.Store) *ViewCounter { return &ViewCounter{Store: s} }

// View counts the View and runs it on the wrapped store.
func (c *ViewCounter) View(ctx context.Context, fn func(kv.Reader) error) error {
	c.views.Add(1)
	return c.Store.View(ctx, fn)
}

// Views is how many Views were opened so far.
func (c *ViewCounter) Views() int64 { return c.views.Load() }

// Watched implements kv.Watcher over the wrapped store.
func (c *ViewCounter) Watched(key []byte) ([]byte, bool) {
	if w, ok := c.Store.(kv.Watcher); ok {
		return w.Watched(key)
	}
	return nil, false
}
