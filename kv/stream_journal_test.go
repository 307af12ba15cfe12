package kv_test

import (
	"context"
	"errors"
	"testing"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

func journalState(t *testing.T, s kv.Store) (a string, hasB bool) {
	t.Helper()
	v, err := kv.Get(context.Background(), s, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = kv.Get(context.Background(), s, []byte("b"))
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		t.Fatal(err)
	}
	return string(v), err == nil
}

// A Journal written in parts is all or nothing: Abort, and a crash before
// Commit (Recover on the next open), restore every key to its value
// before the first Write, even a key two Writes wrote; Commit keeps all.
func TestJournalInParts(t *testing.T) {
	ctx := context.Background()
	for _, end := range []string{"abort", "crash", "commit"} {
		t.Run(end, func(t *testing.T) {
			s := badgertest.Open(t)
			if err := s.Batch(ctx, []kv.Op{{Key: []byte("a"), Value: []byte("1")}}); err != nil {
				t.Fatal(err)
			}
			j, err := kv.Begin(ctx, s, kv.ApplyOptions{ChunkOps: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Write(ctx, []kv.Op{{Key: []byte("a"), Value: []byte("2")}, {Key: []byte("b"), Value: []byte("x")}}); err != nil {
				t.Fatal(err)
			}
			if err := j.Write(ctx, []kv.Op{{Key: []byte("a"), Value: []byte("3")}}); err != nil {
				t.Fatal(err)
			}
			if _, err := kv.Begin(ctx, s, kv.ApplyOptions{}); !errors.Is(err, kv.ErrRecoveryPending) {
				t.Fatalf("a second journal while one is active: %v; want ErrRecoveryPending", err)
			}
			want, wantB := "1", false
			switch end {
			case "abort":
				err = j.Abort(ctx)
			case "crash":
				_, err = kv.Recover(ctx, s)
			case "commit":
				err = j.Commit(ctx)
				want, wantB = "3", true
			}
			if err != nil {
				t.Fatal(err)
			}
			if a, hasB := journalState(t, s); a != want || hasB != wantB {
				t.Fatalf("after %s: a=%s, b there: %v; want a=%s, b there: %v", end, a, hasB, want, wantB)
			}
			n := 0
			_ = s.View(ctx, func(r kv.Reader) error {
				return r.Scan([]byte("kv/journal/"), kv.ScanOptions{}, func(_, _ []byte) error { n++; return nil })
			})
			if n != 0 {
				t.Fatalf("after %s: %d journal keys left", end, n)
			}
		})
	}
}
