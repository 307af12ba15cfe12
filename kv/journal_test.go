package kv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger"
	"github.com/engine-dev/engine/kv/badger/badgertest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// fill writes n base keys (some with a TTL) and returns ops that overwrite
// half of them, delete a quarter and add n new ones.
func fill(t *testing.T, s kv.Store, n int) []kv.Op {
	t.Helper()
	var base []kv.Op
	for i := range n {
		op := kv.Op{Key: fmt.Appendf(nil, "k/%04d", i), Value: fmt.Appendf(nil, "old %d", i)}
		if i%5 == 0 {
			op.TTL = time.Hour
		}
		base = append(base, op)
	}
	if err := s.Batch(context.Background(), base); err != nil {
		t.Fatal(err)
	}
	var ops []kv.Op
	for i := range n {
		switch {
		case i%2 == 0:
			ops = append(ops, kv.Op{Key: fmt.Appendf(nil, "k/%04d", i), Value: fmt.Appendf(nil, "new %d", i)})
		case i%4 == 1:
			ops = append(ops, kv.Op{Key: fmt.Appendf(nil, "k/%04d", i), Delete: true})
		}
		ops = append(ops, kv.Op{Key: fmt.Appendf(nil, "n/%04d", i), Value: []byte("added")})
	}
	return ops
}

func applied(before map[string]string, ops []kv.Op) map[string]string {
	want := map[string]string{}
	for k, v := range before {
		want[k] = v
	}
	for _, op := range ops {
		if op.Delete {
			delete(want, string(op.Key))
		} else {
			want[string(op.Key)] = string(op.Value)
		}
	}
	return want
}

// A store failure at any write of an kv.Apply — one transaction or the
// journaled path — leaves the store byte for byte as it was.
func TestApplyFailureAnywhereLeavesStoreUnchanged(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		opts kv.ApplyOptions
	}{
		{"one transaction", kv.ApplyOptions{}},
		{"journaled", kv.ApplyOptions{MaxTxnOps: 10, ChunkOps: 7}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			db := badgertest.OpenDir(t, t.TempDir())
			defer db.Close()
			ops := fill(t, db, 40)
			before := kvtest.Dump(t, db)
			// Count the writes of a successful kv.Apply on a copy of the data.
			probeDB := badgertest.OpenMemory(t)
			defer probeDB.Close()
			fill(t, probeDB, 40)
			probe := &kvtest.FaultStore{Store: probeDB}
			if err := kv.Apply(ctx, probe, ops, mode.opts); err != nil {
				t.Fatal(err)
			}
			if mode.opts.MaxTxnOps > 0 && probe.Writes() < 10 {
				t.Fatalf("journaled kv.Apply made only %d writes", probe.Writes())
			}
			// Each write fails in turn: the ones up to the commit point
			// (deleting the journal marker) fail the kv.Apply; the ones after it
			// only delete undo records.
			for n := 1; n <= probe.Writes(); n++ {
				f := &kvtest.FaultStore{Store: db, FailAt: n}
				err := kv.Apply(ctx, f, ops, mode.opts)
				got := kvtest.Dump(t, db)
				if err != nil {
					if !errors.Is(err, kvtest.ErrInjected) {
						t.Fatalf("write %d: %v, want the injected failure", n, err)
					}
					if d := kvtest.Diff(before, got); d != "" {
						t.Fatalf("write %d failed: store changed: %s", n, d)
					}
					continue
				}
				// A failure after the commit point (cleanup) is not an error:
				// the writes are all there, and the next open removes the
				// undo records left.
				if _, err := kv.Recover(ctx, db); err != nil {
					t.Fatal(err)
				}
				if d := kvtest.Diff(applied(before, ops), kvtest.Dump(t, db)); d != "" {
					t.Fatalf("write %d failed after the commit point: %s", n, d)
				}
				if mode.opts.MaxTxnOps == 0 {
					t.Fatal("one transaction succeeded although its only write failed")
				}
				return
			}
			if mode.opts.MaxTxnOps > 0 {
				t.Fatal("no failure point after the commit point")
			}
		})
	}
}

// When the rollback fails too (the store keeps failing), kv.Apply says a
// recovery is pending, refuses further Applies, and the next open rolls
// back to the store as it was.
func TestApplyFailedRollbackRecoversOnOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := badgertest.OpenDir(t, dir)
	ops := fill(t, db, 40)
	before := kvtest.Dump(t, db)
	opts := kv.ApplyOptions{MaxTxnOps: 10, ChunkOps: 7}
	// 70 keys: 10 undo records saved in writes 1 and 2, 3 marks the
	// journal, 4..13 write the ops; 8 and everything after fail.
	f := &kvtest.FaultStore{Store: db, FailAt: 8, FailAfter: true}
	err := kv.Apply(ctx, f, ops, opts)
	if !errors.Is(err, kv.ErrRecoveryPending) || !errors.Is(err, kvtest.ErrInjected) {
		t.Fatalf("Apply: %v, want a pending recovery", err)
	}
	if err := kv.Apply(ctx, db, ops[:3], kv.ApplyOptions{}); !errors.Is(err, kv.ErrRecoveryPending) {
		t.Fatalf("kv.Apply with a recovery pending: %v", err)
	}
	if d := kvtest.Diff(before, kvtest.Dump(t, db)); d == "" {
		t.Fatal("the failing store held nothing of the failed Apply: the test injects too early")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = badgertest.OpenDir(t, dir)
	defer db.Close()
	if d := kvtest.Diff(before, kvtest.Dump(t, db)); d != "" {
		t.Fatalf("after reopening: %s", d)
	}
}

// A rollback restores a key's TTL along with its value.
func TestRollbackRestoresTTL(t *testing.T) {
	ctx := context.Background()
	db := badgertest.OpenDir(t, t.TempDir())
	defer db.Close()
	if err := db.Batch(ctx, []kv.Op{{Key: []byte("t"), Value: []byte("v"), TTL: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	expiry := func() time.Time {
		var exp time.Time
		err := db.View(ctx, func(r kv.Reader) error {
			_, e, err := r.(interface {
				GetExpiry([]byte) ([]byte, time.Time, error)
			}).GetExpiry([]byte("t"))
			exp = e
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return exp
	}
	was := expiry()
	ops := []kv.Op{{Key: []byte("t"), Value: []byte("w")}, {Key: []byte("u"), Value: []byte("x")}}
	f := &kvtest.FaultStore{Store: db, FailAt: 4} // undo, marker, write, commit ← fails
	if err := kv.Apply(ctx, f, ops, kv.ApplyOptions{MaxTxnOps: 1}); !errors.Is(err, kvtest.ErrInjected) {
		t.Fatalf("Apply: %v", err)
	}
	if got := expiry(); !got.Equal(was) || was.IsZero() {
		t.Fatalf("expiry after rollback %v, was %v", got, was)
	}
}

// An kv.Apply larger than one badger transaction (ErrTxnTooBig) goes through
// the journal and lands whole, leaving no journal behind.
func TestApplyLargerThanATransaction(t *testing.T) {
	ctx := context.Background()
	db := badgertest.OpenDir(t, t.TempDir())
	defer db.Close()
	val := bytes.Repeat([]byte("v"), 1000)
	var ops []kv.Op
	for i := range 5000 { // ~5 MB, over badger's ~2.4 MB transaction limit
		ops = append(ops, kv.Op{Key: fmt.Appendf(nil, "big/%05d", i), Value: val})
	}
	err := db.Update(ctx, func(tx kv.Txn) error {
		for _, op := range ops {
			if err := writeOp(tx, op); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, kv.ErrTooBig) {
		t.Fatalf("one transaction of 5 MB: %v, want kv.ErrTooBig", err)
	}
	if err := kv.Apply(ctx, db, ops, kv.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	got := kvtest.Dump(t, db)
	if d := kvtest.Diff(applied(map[string]string{}, ops), got); d != "" {
		t.Fatal(d)
	}
}

// A process killed (SIGKILL) at any write of a journaled kv.Apply leaves, once
// the store is opened again, either all of it or none of it.
func TestApplyKilledMidwayIsAllOrNothing(t *testing.T) {
	opts := kv.ApplyOptions{MaxTxnOps: 10, ChunkOps: 15}
	if dir := os.Getenv("KV_APPLY_DIR"); dir != "" {
		at, _ := strconv.Atoi(os.Getenv("KV_APPLY_AT"))
		db, err := badger.Open(context.Background(), dir, badger.Options{GCInterval: -1})
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(3)
		}
		ops := fill(t, db, 30)
		fmt.Println("filled")
		f := &kvtest.FaultStore{Store: db, FailAt: at, Hook: func() {
			fmt.Println("ready")
			select {} // killed here
		}}
		err = kv.Apply(context.Background(), f, ops, opts)
		fmt.Println("done", err)
		os.Exit(0)
	}
	// Before and after: the same data in memory.
	ref := badgertest.OpenMemory(t)
	defer ref.Close()
	ops := fill(t, ref, 30)
	probe := &kvtest.FaultStore{Store: ref}
	before := kvtest.Dump(t, ref)
	if err := kv.Apply(context.Background(), probe, ops, opts); err != nil {
		t.Fatal(err)
	}
	after := kvtest.Dump(t, ref)
	sawNone, sawAll := false, false
	for at := 1; at <= probe.Writes(); at++ {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestApplyKilledMidwayIsAllOrNothing$")
		cmd.Env = append(os.Environ(), "KV_APPLY_DIR="+dir, "KV_APPLY_AT="+strconv.Itoa(at))
		killAtReady(t, cmd, fmt.Sprintf("write %d", at))
		db := badgertest.OpenDir(t, dir)
		now := kvtest.Dump(t, db)
		db.Close()
		switch {
		case kvtest.Diff(before, now) == "":
			sawNone = true
		case kvtest.Diff(after, now) == "":
			sawAll = true
		default:
			t.Fatalf("killed at write %d of %d: neither none (%s) nor all (%s)", at, probe.Writes(), kvtest.Diff(before, now), kvtest.Diff(after, now))
		}
	}
	if !sawNone || !sawAll {
		t.Fatalf("kill points covered none=%v all=%v; want both", sawNone, sawAll)
	}
}

// A kv.Staging reads like the store it will become: the same random writes
// applied to a kv.Staging (over a base) and straight to another store give
// the same scans in every mode, and after Commit the base equals the
// other store.
func TestStagingReadsLikeTheStore(t *testing.T) {
	ctx := context.Background()
	base := badgertest.OpenDir(t, t.TempDir())
	defer base.Close()
	direct := badgertest.OpenMemory(t)
	defer direct.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() []byte { return fmt.Appendf(nil, "%c/%02d", 'a'+rng.IntN(3), rng.IntN(40)) }
	var seed []kv.Op
	for range 60 {
		seed = append(seed, kv.Op{Key: key(), Value: fmt.Appendf(nil, "%d", rng.IntN(1000))})
	}
	for _, s := range []kv.Store{base, direct} {
		if err := s.Batch(ctx, seed); err != nil {
			t.Fatal(err)
		}
	}
	st := kv.NewStaging(base)
	scans := func(s kv.Store) string {
		var b strings.Builder
		for _, p := range []string{"", "a/", "b/", "c/1", "d/"} {
			for _, o := range []kv.ScanOptions{{}, {Reverse: true}, {Limit: 3}, {Reverse: true, Limit: 4}, {KeysOnly: true},
				{Start: []byte(p + "2")}, {Start: []byte(p + "1"), Reverse: true, Limit: 5}} {
				if o.Start != nil && !bytes.HasPrefix(o.Start, []byte(p)) {
					continue
				}
				fmt.Fprintf(&b, "%q %+v:", p, o)
				err := s.View(ctx, func(r kv.Reader) error {
					return r.Scan([]byte(p), o, func(k, v []byte) error {
						fmt.Fprintf(&b, " %s=%s", k, v)
						return nil
					})
				})
				if err != nil {
					t.Fatal(err)
				}
				b.WriteString("\n")
			}
		}
		return b.String()
	}
	for round := range 200 {
		var op kv.Op
		switch k := key(); rng.IntN(4) {
		case 0:
			op = kv.Op{Key: k, Delete: true}
		default:
			op = kv.Op{Key: k, Value: fmt.Appendf(nil, "r%d", round)}
		}
		// Through Update and Batch alike; every fifth Update fails and
		// must leave nothing staged.
		failing := round%5 == 0
		for _, s := range []kv.Store{st, direct} {
			if round%2 == 0 {
				err := s.Update(ctx, func(tx kv.Txn) error {
					if err := writeOp(tx, op); err != nil {
						return err
					}
					if _, err := tx.Get(op.Key); op.Delete != errors.Is(err, kv.ErrNotFound) {
						return fmt.Errorf("own write not read back: %v", err)
					}
					if failing {
						return kvtest.ErrInjected
					}
					return nil
				})
				if failing != errors.Is(err, kvtest.ErrInjected) {
					t.Fatal(err)
				}
			} else if err := s.Batch(ctx, []kv.Op{op}); err != nil {
				t.Fatal(err)
			}
		}
		if round%20 == 0 {
			if a, b := scans(st), scans(direct); a != b {
				t.Fatalf("round %d: staging scans\n%s\nstore scans\n%s", round, a, b)
			}
		}
	}
	if err := st.DropPrefix(ctx, []byte("b/")); err != nil {
		t.Fatal(err)
	}
	if err := direct.DropPrefix(ctx, []byte("b/")); err != nil {
		t.Fatal(err)
	}
	if a, b := scans(st), scans(direct); a != b {
		t.Fatalf("after DropPrefix: staging scans\n%s\nstore scans\n%s", a, b)
	}
	if err := st.Commit(ctx, kv.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := kvtest.Diff(kvtest.Dump(t, direct), kvtest.Dump(t, base)); d != "" {
		t.Fatalf("after Commit: %s", d)
	}
}

// writeOp writes op in tx, as Apply does.
func writeOp(tx kv.Txn, op kv.Op) error {
	if op.Delete {
		return tx.Delete(op.Key)
	}
	return tx.Set(op.Key, op.Value, op.TTL)
}

// killAtReady starts cmd, a copy of this test binary that prints "ready"
// when it reaches the write it is to die at (and then blocks), waits for
// that line and SIGKILLs it. It fails the test, naming what, if the
// subprocess ends without reaching it.
func killAtReady(t *testing.T, cmd *exec.Cmd, what string) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	buf := make([]byte, 256)
	for !strings.Contains(got.String(), "ready") && !strings.Contains(got.String(), "done") {
		n, err := out.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if !strings.Contains(got.String(), "ready") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s: subprocess did not reach it: %q", what, got.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}
