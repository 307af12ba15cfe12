package kv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// Keys around the view's prefix "ns/a/": sorting just before, just after,
// and far from it, so a scan or drop that leaks past the prefix shows.
var outside = []string{"\x00", "meta/schema", "n", "ns/a", "ns/a.", "ns/a0", "ns/a\xff", "ns/b/x", "site/x/lesson/1", "\xff\xff\xff"}

// openPrefixed returns a view over a badger store that already holds the
// outside keys, and checks when the test ends that they are untouched and
// that nothing was written outside the view.
func openPrefixed(t *testing.T, prefix string) kv.Store {
	base := badgertest.Open(t)
	var ops []kv.Op
	for _, k := range outside {
		ops = append(ops, kv.Op{Key: []byte(k), Value: []byte("outside " + k)})
	}
	if err := base.Batch(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		got := map[string]string{}
		for k, v := range kvtest.Dump(t, base) {
			if !strings.HasPrefix(k, prefix) {
				got[k] = v
			}
		}
		want := map[string]string{}
		for _, k := range outside {
			want[k] = "outside " + k
		}
		if d := kvtest.Diff(want, got); d != "" {
			t.Errorf("keys outside the view changed: %s", d)
		}
	})
	return kv.Prefixed(base, []byte(prefix))
}

// A view honours the whole contract over a store shared with keys outside
// it, except the longest key: the prefix takes its length.
func TestPrefixedConformance(t *testing.T) {
	kvtest.RunSkipping(t, func(t *testing.T) kv.Store { return openPrefixed(t, "ns/a/") }, map[string]string{
		kvtest.KeyTooLarge: "a view's keys carry its prefix: the longest is MaxKeySize − len(prefix) (TestPrefixedKeyLimit)",
	})
}

// The longest key a view takes is MaxKeySize less its prefix; one byte
// more is refused with ErrKeyTooLarge and nothing of its write lands.
func TestPrefixedKeyLimit(t *testing.T) {
	ctx := context.Background()
	s := openPrefixed(t, "ns/a/")
	longest := bytes.Repeat([]byte("k"), kv.MaxKeySize-len("ns/a/"))
	if err := s.Update(ctx, func(tx kv.Txn) error { return tx.Set(longest, []byte("v"), 0) }); err != nil {
		t.Fatalf("a key of MaxKeySize − len(prefix): %v", err)
	}
	over := append(bytes.Clone(longest), 'k')
	err := s.Update(ctx, func(tx kv.Txn) error {
		if err := tx.Set([]byte("ok"), []byte("1"), 0); err != nil {
			return err
		}
		return tx.Set(over, []byte("v"), 0)
	})
	if !errors.Is(err, kv.ErrKeyTooLarge) {
		t.Fatalf("a key one byte longer: %v", err)
	}
	if err := s.Batch(ctx, []kv.Op{{Key: over, Value: []byte("v")}}); !errors.Is(err, kv.ErrKeyTooLarge) {
		t.Fatalf("a key one byte longer in a batch: %v", err)
	}
	if _, err := kv.Get(ctx, s, []byte("ok")); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("a write beside the refused key landed: %v", err)
	}
}

// Two views over one store see only their own keys, a drop in one leaves
// the other whole, closing a view leaves the base and other views open,
// and Apply's journal (with its TTLs) works inside a view.
func TestPrefixedIsolation(t *testing.T) {
	ctx := context.Background()
	base := badgertest.Open(t)
	a, b := kv.Prefixed(base, []byte("ns/a/")), kv.Prefixed(base, []byte("ns/b/"))
	for _, s := range []kv.Store{base, a, b} {
		if err := s.Batch(ctx, []kv.Op{{Key: []byte("site/x/1"), Value: []byte("v")}, {Key: []byte("site/y/1"), Value: []byte("v")}}); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(s kv.Store, prefix string) []string {
		var out []string
		if err := s.View(ctx, func(r kv.Reader) error {
			return r.Scan([]byte(prefix), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
				out = append(out, string(k))
				return nil
			})
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := fmt.Sprint(keys(a, "")); got != "[site/x/1 site/y/1]" {
		t.Errorf("view a, every key: %s", got)
	}
	if got := fmt.Sprint(keys(base, "site/")); got != "[site/x/1 site/y/1]" {
		t.Errorf("base, site/: %s", got)
	}
	if err := a.DropPrefix(ctx, []byte("site/x/")); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(keys(a, "site/"), keys(b, "site/"), keys(base, "site/")); got != "[site/y/1] [site/x/1 site/y/1] [site/x/1 site/y/1]" {
		t.Errorf("after dropping site/x/ in a: %s", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, a, []byte("site/y/1")); !errors.Is(err, kv.ErrClosed) {
		t.Errorf("a closed view: %v", err)
	}
	if _, err := kv.Get(ctx, b, []byte("site/y/1")); err != nil {
		t.Errorf("another view after one closed: %v", err)
	}
	// A journaled Apply inside b writes all of it inside b.
	var ops []kv.Op
	for i := range 50 {
		ops = append(ops, kv.Op{Key: fmt.Appendf(nil, "imp/%02d", i), Value: []byte("v")})
	}
	if err := kv.Apply(ctx, b, ops, kv.ApplyOptions{MaxTxnOps: 10, ChunkOps: 7}); err != nil {
		t.Fatal(err)
	}
	if n := len(keys(b, "imp/")); n != 50 {
		t.Errorf("apply in b: %d keys", n)
	}
	if n := len(keys(base, "imp/")) + len(keys(base, "kv/")); n != 0 {
		t.Errorf("apply in b wrote %d keys outside it", n)
	}
}

// Scanning through a view costs what scanning the base costs, plus one
// allocation per Scan (not per key).
func BenchmarkPrefixedScan(b *testing.B) {
	ctx := context.Background()
	base := badgertest.Open(b)
	view := kv.Prefixed(base, []byte("ns/bench/"))
	var ops []kv.Op
	for i := range 1000 {
		ops = append(ops, kv.Op{Key: fmt.Appendf(nil, "site/x/%04d", i), Value: []byte("value")})
	}
	if err := base.Batch(ctx, ops); err != nil {
		b.Fatal(err)
	}
	if err := view.Batch(ctx, ops); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		s    kv.Store
	}{{"base", base}, {"prefixed", view}} {
		b.Run("scan1000/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				err := c.s.View(ctx, func(r kv.Reader) error {
					return r.Scan([]byte("site/x/"), kv.ScanOptions{}, func(_, _ []byte) error { n++; return nil })
				})
				if err != nil || n != 1000 {
					b.Fatal(n, err)
				}
			}
		})
		b.Run("get/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := kv.Get(ctx, c.s, []byte("site/x/0500")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
