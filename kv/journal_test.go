package kv

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
	"sync"
	"syscall"
	"testing"
	"time"
)

var errInjected = errors.New("injected store failure")

// FaultStore fails the Nth write (Update or Batch, counted from 1) and,
// with failAfter, every write after it. A failing Batch writes the first
// half of its ops before it fails, as a store that splits batches may.
type faultStore struct {
	Store
	mu        sync.Mutex
	writes    int
	failAt    int // 0: never
	failAfter bool
	// hook, when set, runs at the failAt write instead of failing it
	// (after writing half of a batch).
	hook func()
}

func (f *faultStore) fail() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	return f.failAt > 0 && (f.writes == f.failAt || f.failAfter && f.writes > f.failAt)
}

func (f *faultStore) Update(ctx context.Context, fn func(Txn) error) error {
	if f.fail() {
		if f.hook != nil {
			f.hook()
		}
		return errInjected
	}
	return f.Store.Update(ctx, fn)
}

func (f *faultStore) Batch(ctx context.Context, ops []Op) error {
	if f.fail() {
		if err := f.Store.Batch(ctx, ops[:len(ops)/2]); err != nil {
			return err
		}
		if f.hook != nil {
			f.hook()
		}
		return errInjected
	}
	return f.Store.Batch(ctx, ops)
}

// dump returns every key and value in s.
func dump(t *testing.T, s Store) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := s.View(context.Background(), func(r Reader) error {
		return r.Scan(nil, ScanOptions{}, func(k, v []byte) error {
			m[string(k)] = string(v)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func diff(before, after map[string]string) string {
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

// fill writes n base keys (some with a TTL) and returns ops that overwrite
// half of them, delete a quarter and add n new ones.
func fill(t *testing.T, s Store, n int) []Op {
	t.Helper()
	var base []Op
	for i := range n {
		op := Op{Key: fmt.Appendf(nil, "k/%04d", i), Value: fmt.Appendf(nil, "old %d", i)}
		if i%5 == 0 {
			op.TTL = time.Hour
		}
		base = append(base, op)
	}
	if err := s.Batch(context.Background(), base); err != nil {
		t.Fatal(err)
	}
	var ops []Op
	for i := range n {
		switch {
		case i%2 == 0:
			ops = append(ops, Op{Key: fmt.Appendf(nil, "k/%04d", i), Value: fmt.Appendf(nil, "new %d", i)})
		case i%4 == 1:
			ops = append(ops, Op{Key: fmt.Appendf(nil, "k/%04d", i), Delete: true})
		}
		ops = append(ops, Op{Key: fmt.Appendf(nil, "n/%04d", i), Value: []byte("added")})
	}
	return ops
}

func applied(before map[string]string, ops []Op) map[string]string {
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

// A store failure at any write of an Apply — one transaction or the
// journaled path — leaves the store byte for byte as it was.
func TestApplyFailureAnywhereLeavesStoreUnchanged(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		opts ApplyOptions
	}{
		{"one transaction", ApplyOptions{}},
		{"journaled", ApplyOptions{MaxTxnOps: 10, ChunkOps: 7}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			db := openDisk(t, t.TempDir())
			defer db.Close()
			ops := fill(t, db, 40)
			before := dump(t, db)
			// Count the writes of a successful Apply on a copy of the data.
			probeDB, _ := OpenMemory()
			defer probeDB.Close()
			fill(t, probeDB, 40)
			probe := &faultStore{Store: probeDB}
			if err := Apply(ctx, probe, ops, mode.opts); err != nil {
				t.Fatal(err)
			}
			if mode.opts.MaxTxnOps > 0 && probe.writes < 10 {
				t.Fatalf("journaled Apply made only %d writes", probe.writes)
			}
			// Each write fails in turn: the ones up to the commit point
			// (deleting the journal marker) fail the Apply; the ones after it
			// only delete undo records.
			for n := 1; n <= probe.writes; n++ {
				f := &faultStore{Store: db, failAt: n}
				err := Apply(ctx, f, ops, mode.opts)
				got := dump(t, db)
				if err != nil {
					if !errors.Is(err, errInjected) {
						t.Fatalf("write %d: %v, want the injected failure", n, err)
					}
					if d := diff(before, got); d != "" {
						t.Fatalf("write %d failed: store changed: %s", n, d)
					}
					continue
				}
				// A failure after the commit point (cleanup) is not an error:
				// the writes are all there, and the next open removes the
				// undo records left.
				if _, err := Recover(ctx, db); err != nil {
					t.Fatal(err)
				}
				if d := diff(applied(before, ops), dump(t, db)); d != "" {
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

// When the rollback fails too (the store keeps failing), Apply says a
// recovery is pending, refuses further Applies, and the next open rolls
// back to the store as it was.
func TestApplyFailedRollbackRecoversOnOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openDisk(t, dir)
	ops := fill(t, db, 40)
	before := dump(t, db)
	opts := ApplyOptions{MaxTxnOps: 10, ChunkOps: 7}
	// 70 keys: 10 undo records saved in writes 1 and 2, 3 marks the
	// journal, 4..13 write the ops; 8 and everything after fail.
	f := &faultStore{Store: db, failAt: 8, failAfter: true}
	err := Apply(ctx, f, ops, opts)
	if !errors.Is(err, ErrRecoveryPending) || !errors.Is(err, errInjected) {
		t.Fatalf("Apply: %v, want a pending recovery", err)
	}
	if err := Apply(ctx, db, ops[:3], ApplyOptions{}); !errors.Is(err, ErrRecoveryPending) {
		t.Fatalf("Apply with a recovery pending: %v", err)
	}
	if d := diff(before, dump(t, db)); d == "" {
		t.Fatal("the failing store held nothing of the failed Apply: the test injects too early")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openDisk(t, dir)
	defer db.Close()
	if d := diff(before, dump(t, db)); d != "" {
		t.Fatalf("after reopening: %s", d)
	}
}

// A rollback restores a key's TTL along with its value.
func TestRollbackRestoresTTL(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	if err := db.Batch(ctx, []Op{{Key: []byte("t"), Value: []byte("v"), TTL: time.Hour}}); err != nil {
		t.Fatal(err)
	}
	expiry := func() time.Time {
		var exp time.Time
		err := db.View(ctx, func(r Reader) error {
			_, e, err := r.(expiryReader).GetExpiry([]byte("t"))
			exp = e
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return exp
	}
	was := expiry()
	ops := []Op{{Key: []byte("t"), Value: []byte("w")}, {Key: []byte("u"), Value: []byte("x")}}
	f := &faultStore{Store: db, failAt: 4} // undo, marker, write, commit ← fails
	if err := Apply(ctx, f, ops, ApplyOptions{MaxTxnOps: 1}); !errors.Is(err, errInjected) {
		t.Fatalf("Apply: %v", err)
	}
	if got := expiry(); !got.Equal(was) || was.IsZero() {
		t.Fatalf("expiry after rollback %v, was %v", got, was)
	}
}

// An Apply larger than one badger transaction (ErrTxnTooBig) goes through
// the journal and lands whole, leaving no journal behind.
func TestApplyLargerThanATransaction(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	val := bytes.Repeat([]byte("v"), 1000)
	var ops []Op
	for i := range 5000 { // ~5 MB, over badger's ~2.4 MB transaction limit
		ops = append(ops, Op{Key: fmt.Appendf(nil, "big/%05d", i), Value: val})
	}
	err := db.Update(ctx, func(tx Txn) error {
		for _, op := range ops {
			if err := writeOp(tx, op); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, ErrTooBig) {
		t.Fatalf("one transaction of 5 MB: %v, want ErrTooBig", err)
	}
	if err := Apply(ctx, db, ops, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	got := dump(t, db)
	if d := diff(applied(map[string]string{}, ops), got); d != "" {
		t.Fatal(d)
	}
}

// A process killed (SIGKILL) at any write of a journaled Apply leaves, once
// the store is opened again, either all of it or none of it.
func TestApplyKilledMidwayIsAllOrNothing(t *testing.T) {
	opts := ApplyOptions{MaxTxnOps: 10, ChunkOps: 15}
	if dir := os.Getenv("KV_APPLY_DIR"); dir != "" {
		at, _ := strconv.Atoi(os.Getenv("KV_APPLY_AT"))
		db, err := Open(context.Background(), dir, Options{GCInterval: -1})
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(3)
		}
		ops := fill(t, db, 30)
		fmt.Println("filled")
		f := &faultStore{Store: db, failAt: at, hook: func() {
			fmt.Println("ready")
			select {} // killed here
		}}
		err = Apply(context.Background(), f, ops, opts)
		fmt.Println("done", err)
		os.Exit(0)
	}
	// Before and after: the same data in memory.
	ref, _ := OpenMemory()
	defer ref.Close()
	ops := fill(t, ref, 30)
	probe := &faultStore{Store: ref}
	before := dump(t, ref)
	if err := Apply(context.Background(), probe, ops, opts); err != nil {
		t.Fatal(err)
	}
	after := dump(t, ref)
	sawNone, sawAll := false, false
	for at := 1; at <= probe.writes; at++ {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestApplyKilledMidwayIsAllOrNothing$")
		cmd.Env = append(os.Environ(), "KV_APPLY_DIR="+dir, "KV_APPLY_AT="+strconv.Itoa(at))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for the subprocess to reach the write (a blocking read).
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
			t.Fatalf("write %d: subprocess did not reach it: %q", at, got.String())
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		db := openDisk(t, dir)
		now := dump(t, db)
		db.Close()
		switch {
		case diff(before, now) == "":
			sawNone = true
		case diff(after, now) == "":
			sawAll = true
		default:
			t.Fatalf("killed at write %d of %d: neither none (%s) nor all (%s)", at, probe.writes, diff(before, now), diff(after, now))
		}
	}
	if !sawNone || !sawAll {
		t.Fatalf("kill points covered none=%v all=%v; want both", sawNone, sawAll)
	}
}

// A Staging reads like the store it will become: the same random writes
// applied to a Staging (over a base) and straight to another store give
// the same scans in every mode, and after Commit the base equals the
// other store.
func TestStagingReadsLikeTheStore(t *testing.T) {
	ctx := context.Background()
	base := openDisk(t, t.TempDir())
	defer base.Close()
	direct, _ := OpenMemory()
	defer direct.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() []byte { return fmt.Appendf(nil, "%c/%02d", 'a'+rng.IntN(3), rng.IntN(40)) }
	var seed []Op
	for range 60 {
		seed = append(seed, Op{Key: key(), Value: fmt.Appendf(nil, "%d", rng.IntN(1000))})
	}
	for _, s := range []Store{base, direct} {
		if err := s.Batch(ctx, seed); err != nil {
			t.Fatal(err)
		}
	}
	st := NewStaging(base)
	scans := func(s Store) string {
		var b strings.Builder
		for _, p := range []string{"", "a/", "b/", "c/1", "d/"} {
			for _, o := range []ScanOptions{{}, {Reverse: true}, {Limit: 3}, {Reverse: true, Limit: 4}, {KeysOnly: true},
				{Start: []byte(p + "2")}, {Start: []byte(p + "1"), Reverse: true, Limit: 5}} {
				if o.Start != nil && !bytes.HasPrefix(o.Start, []byte(p)) {
					continue
				}
				fmt.Fprintf(&b, "%q %+v:", p, o)
				err := s.View(ctx, func(r Reader) error {
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
		var op Op
		switch k := key(); rng.IntN(4) {
		case 0:
			op = Op{Key: k, Delete: true}
		default:
			op = Op{Key: k, Value: fmt.Appendf(nil, "r%d", round)}
		}
		// Through Update and Batch alike; every fifth Update fails and
		// must leave nothing staged.
		failing := round%5 == 0
		for _, s := range []Store{st, direct} {
			if round%2 == 0 {
				err := s.Update(ctx, func(tx Txn) error {
					if err := writeOp(tx, op); err != nil {
						return err
					}
					if _, err := tx.Get(op.Key); op.Delete != errors.Is(err, ErrNotFound) {
						return fmt.Errorf("own write not read back: %v", err)
					}
					if failing {
						return errInjected
					}
					return nil
				})
				if failing != errors.Is(err, errInjected) {
					t.Fatal(err)
				}
			} else if err := s.Batch(ctx, []Op{op}); err != nil {
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
	if err := st.Commit(ctx, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := diff(dump(t, direct), dump(t, base)); d != "" {
		t.Fatalf("after Commit: %s", d)
	}
}
