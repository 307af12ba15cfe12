package badger

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/engine-dev/engine/kv"
)

// A bulk write leaves level 0 holding more tables than compaction starts
// at; Settle returns once the background compactions have merged them,
// with nothing lost.
func TestSettleAfterBulkWrite(t *testing.T) {
	defer func(n int64) { memTableSize = n }(memTableSize)
	memTableSize = 1 << 20 // a level-0 table per MiB written
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	val := make([]byte, 512)
	const n = 24_000 // ~12 MiB: a dozen level-0 tables
	for lo := 0; lo < n; lo += 1000 {
		ops := make([]kv.Op, 0, 1000)
		for i := lo; i < lo+1000; i++ {
			ops = append(ops, kv.Op{Key: fmt.Appendf(nil, "k/%06d", i), Value: val})
		}
		if err := s.Batch(ctx, ops); err != nil {
			t.Fatal(err)
		}
	}
	wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := kv.Settle(wait, s); err != nil {
		t.Fatalf("settle: %v", err)
	}
	for _, l := range s.(*store).db.Levels() {
		if l.Score >= 1 {
			t.Fatalf("settled, yet level %d (%d tables, %d bytes of %d) is due a compaction (score %.2f)",
				l.Level, l.NumTables, l.Size, l.TargetSize, l.Score)
		}
	}
	got := 0
	if err := s.View(ctx, func(r kv.Reader) error {
		return r.Scan([]byte("k/"), kv.ScanOptions{KeysOnly: true}, func(_, _ []byte) error { got++; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if got != n {
		t.Fatalf("%d keys after settling, want %d", got, n)
	}
}

// Settle on a closed store says so; with its context ended it returns at
// once with that context's error.
func TestSettleClosedOrCancelled(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := kv.Settle(done, s); !errors.Is(err, context.Canceled) {
		t.Fatalf("settle with an ended context: %v, want context.Canceled", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := kv.Settle(ctx, s); !errors.Is(err, kv.ErrClosed) {
		t.Fatalf("settle on a closed store: %v, want kv.ErrClosed", err)
	}
}
