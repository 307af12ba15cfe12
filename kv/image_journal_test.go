package kv_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger"
	"github.com/engine-dev/engine/kv/badger/badgertest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// exclusive says the store it wraps is held by this process alone, as
// badger does, through a wrapper (kvtest.FaultStore) that hides it.
type exclusive struct{ kv.Store }

func (exclusive) Exclusive() bool { return true }

// shared hides that the store it wraps is exclusive, as etcd says nothing.
type shared struct{ kv.Store }

// A journal kind: the store a test begins the journal on, with its options.
type journalKind struct {
	name  string
	image bool
	wrap  func(kv.Store) kv.Store
	opts  kv.ApplyOptions
}

var journalKinds = []journalKind{
	{"image", true, func(s kv.Store) kv.Store { return exclusive{s} }, kv.ApplyOptions{ChunkOps: 16}},
	// Exclusive but past the bound (the fill's 40 keys): per-key.
	{"past-bound", false, func(s kv.Store) kv.Store { return exclusive{s} }, kv.ApplyOptions{ChunkOps: 16, ImageKeys: 20}},
	{"past-bytes", false, func(s kv.Store) kv.Store { return exclusive{s} }, kv.ApplyOptions{ChunkOps: 16, ImageBytes: 100}},
	{"shared", false, func(s kv.Store) kv.Store { return shared{s} }, kv.ApplyOptions{ChunkOps: 16}},
}

// dumpExp returns every key of s with its value and expiry (Unix second),
// to compare a store byte for byte, TTLs included.
func dumpExp(t *testing.T, s kv.Store) map[string]string {
	t.Helper()
	return dumpExpiry(t, s, false)
}

// dumpExpiry is dumpExp; coarse writes an expiry within a minute of an
// hour from now as "1h", to compare stores filled at different times.
func dumpExpiry(t *testing.T, s kv.Store, coarse bool) map[string]string {
	t.Helper()
	m := map[string]string{}
	type expiryReader interface {
		GetExpiry(key []byte) ([]byte, time.Time, error)
	}
	err := s.View(context.Background(), func(r kv.Reader) error {
		er, ok := r.(expiryReader)
		if !ok {
			return errors.New("the reader gives no expiry")
		}
		var keys [][]byte
		err := r.Scan(nil, kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			keys = append(keys, bytes.Clone(k))
			return nil
		})
		for _, k := range keys {
			v, exp, err := er.GetExpiry(k)
			if err != nil {
				return err
			}
			e := "0"
			switch {
			case exp.IsZero():
			case coarse && time.Until(exp).Round(time.Minute) == time.Hour:
				e = "1h"
			default:
				e = strconv.FormatInt(exp.Unix(), 10)
			}
			m[string(k)] = fmt.Sprintf("%s|exp=%s", v, e)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// journalFill writes the base keys (a fifth with a TTL) and returns the
// Writes of a journal over them: each overwrites some keys, deletes some
// (a TTL key among them), adds new ones, and the second and third write
// keys the first wrote.
func journalFill(t *testing.T, s kv.Store) [][]kv.Op {
	t.Helper()
	var base []kv.Op
	for i := range 40 {
		op := kv.Op{Key: fmt.Appendf(nil, "k/%02d", i), Value: fmt.Appendf(nil, "old %d", i)}
		if i%5 == 0 {
			op.TTL = time.Hour
		}
		base = append(base, op)
	}
	if err := s.Batch(context.Background(), base); err != nil {
		t.Fatal(err)
	}
	var writes [][]kv.Op
	for w := range 3 {
		var ops []kv.Op
		for i := range 40 {
			k := fmt.Appendf(nil, "k/%02d", i)
			switch {
			case i%3 == w:
				ops = append(ops, kv.Op{Key: k, Value: fmt.Appendf(nil, "new %d by %d", i, w)})
			case i%10 == w:
				ops = append(ops, kv.Op{Key: k, Delete: true})
			}
			ops = append(ops, kv.Op{Key: fmt.Appendf(nil, "n/%02d", i%(10*(w+1))), Value: fmt.Appendf(nil, "added by %d", w)})
		}
		ops = append(ops, kv.Op{Key: []byte("ttl/new"), Value: []byte("t"), TTL: time.Hour})
		writes = append(writes, ops)
	}
	return writes
}

// journalAll runs Begin, the writes and Commit, stopping at the first
// error.
func journalAll(ctx context.Context, s kv.Store, writes [][]kv.Op, opts kv.ApplyOptions) error {
	j, err := kv.Begin(ctx, s, opts)
	if err != nil {
		return err
	}
	for _, ops := range writes {
		if err := j.Write(ctx, ops); err != nil {
			return err
		}
	}
	return j.Commit(ctx)
}

// noJournal fails when s holds any journal key.
func noJournal(t *testing.T, s kv.Store) {
	t.Helper()
	for k := range kvtest.Dump(t, s) {
		if strings.HasPrefix(k, "kv/journal/") {
			t.Fatalf("journal key %q left", k)
		}
	}
}

// Each kind of journal is all or nothing: Abort and Recover leave the
// store byte for byte (expiries included) as before Begin, whatever the
// Writes overwrote, deleted, added or wrote twice; Commit leaves exactly
// what the Writes wrote; neither leaves a journal key. A small exclusive
// store takes the image kind, a bigger or shared one the per-key kind.
func TestJournalKinds(t *testing.T) {
	ctx := context.Background()
	for _, kind := range journalKinds {
		for _, end := range []string{"abort", "recover", "commit"} {
			t.Run(kind.name+"/"+end, func(t *testing.T) {
				db := badgertest.Open(t)
				writes := journalFill(t, db)
				before := dumpExp(t, db)
				s := kind.wrap(db)
				j, err := kv.Begin(ctx, s, kind.opts)
				if err != nil {
					t.Fatal(err)
				}
				if j.Image() != kind.image {
					t.Fatalf("Image() = %v, want %v", j.Image(), kind.image)
				}
				var flat []kv.Op
				for _, ops := range writes {
					if err := j.Write(ctx, ops); err != nil {
						t.Fatal(err)
					}
					flat = append(flat, ops...)
				}
				switch end {
				case "abort":
					err = j.Abort(ctx)
				case "recover":
					var rolled bool
					rolled, err = kv.Recover(ctx, s)
					if err == nil && !rolled {
						t.Fatal("Recover did not roll back")
					}
				case "commit":
					err = j.Commit(ctx)
				}
				if err != nil {
					t.Fatal(err)
				}
				got := dumpExp(t, db)
				if end == "commit" {
					want := applied(kvtest.Dump(t, kvtestBefore(t, before)), flat)
					if d := kvtest.Diff(want, kvtest.Dump(t, db)); d != "" {
						t.Fatalf("after commit: %s", d)
					}
				} else if d := kvtest.Diff(before, got); d != "" {
					t.Fatalf("after %s: %s", end, d)
				}
				noJournal(t, db)
			})
		}
	}
}

// kvtestBefore returns a store in memory holding the values of dump (a
// dumpExp), to compute what a commit should leave.
func kvtestBefore(t *testing.T, dump map[string]string) kv.Store {
	t.Helper()
	s := badgertest.OpenMemory(t)
	var ops []kv.Op
	for k, v := range dump {
		v = v[:strings.LastIndex(v, "|exp=")]
		ops = append(ops, kv.Op{Key: []byte(k), Value: []byte(v)})
	}
	if err := s.Batch(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
	return s
}

// A store failure at any write of Begin, a Write or Commit leaves the
// store as it was before Begin, for every kind; a failure of every write
// from one on leaves the journal marked (ErrRecoveryPending) and the next
// open rolls back.
func TestJournalFailureAnywhere(t *testing.T) {
	ctx := context.Background()
	for _, kind := range journalKinds {
		t.Run(kind.name, func(t *testing.T) {
			probeDB := badgertest.OpenMemory(t)
			writes := journalFill(t, probeDB)
			probe := &kvtest.FaultStore{Store: probeDB}
			if err := journalAll(ctx, kind.wrap(probe), writes, kind.opts); err != nil {
				t.Fatal(err)
			}
			committed := kvtest.Dump(t, probeDB)
			for at := 1; at <= probe.Writes(); at++ {
				for _, after := range []bool{false, true} {
					dir := t.TempDir()
					db := badgertest.OpenDir(t, dir)
					writes := journalFill(t, db)
					before := dumpExp(t, db)
					f := &kvtest.FaultStore{Store: db, FailAt: at, FailAfter: after}
					err := journalAll(ctx, kind.wrap(f), writes, kind.opts)
					switch {
					case err == nil:
						// The failure hit the best-effort cleanup after
						// the commit point: the next open deletes what is left.
					case !errors.Is(err, kvtest.ErrInjected):
						t.Fatalf("fail at write %d of %d: %v", at, probe.Writes(), err)
					case !after && errors.Is(err, kv.ErrRecoveryPending):
						t.Fatalf("fail at write %d only: %v", at, err)
					}
					if after || err == nil {
						// What the failing store left, the next open finishes.
						db.Close()
						db = badgertest.OpenDir(t, dir)
					}
					if err == nil {
						if d := kvtest.Diff(committed, kvtest.Dump(t, db)); d != "" {
							t.Fatalf("fail at write %d of %d after the commit: %s", at, probe.Writes(), d)
						}
					} else if d := kvtest.Diff(before, dumpExp(t, db)); d != "" {
						t.Fatalf("fail at write %d of %d (every write after: %v): %s", at, probe.Writes(), after, d)
					}
					noJournal(t, db)
					db.Close()
				}
			}
		})
	}
}

// killStore counts the writes (Update, Batch) made through it: write
// failAt fails (half its batch written), and at write killAt, half its
// batch written, it says "ready" and waits to be killed.
type killStore struct {
	kv.Store
	failAt, killAt int

	mu sync.Mutex
	n  int
}

func (k *killStore) Exclusive() bool { return kv.IsExclusive(k.Store) }

func (k *killStore) at() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.n++
	return k.n
}

func (k *killStore) Update(ctx context.Context, fn func(kv.Txn) error) error {
	switch k.at() {
	case k.killAt:
		fmt.Println("ready")
		select {}
	case k.failAt:
		return kvtest.ErrInjected
	}
	return k.Store.Update(ctx, fn)
}

func (k *killStore) Batch(ctx context.Context, ops []kv.Op) error {
	n := k.at()
	if n == k.killAt || n == k.failAt {
		if err := k.Store.Batch(ctx, ops[:len(ops)/2]); err != nil {
			return err
		}
	}
	switch n {
	case k.killAt:
		fmt.Println("ready")
		select {}
	case k.failAt:
		return kvtest.ErrInjected
	}
	return k.Store.Batch(ctx, ops)
}

// A process killed (SIGKILL) at any write of a journal, of either kind —
// saving the image, marking, writing, committing, or rolling back after a
// failed write — leaves, once the store is opened again (badger.Open runs
// kv.Recover), all of it or none of it, expiries included.
func TestJournalKilledAnywhereIsAllOrNothing(t *testing.T) {
	if dir := os.Getenv("KV_JOURNAL_DIR"); dir != "" {
		kind := journalKinds[0]
		if os.Getenv("KV_JOURNAL_KIND") != kind.name {
			kind = journalKinds[1]
		}
		failAt, _ := strconv.Atoi(os.Getenv("KV_JOURNAL_FAIL"))
		killAt, _ := strconv.Atoi(os.Getenv("KV_JOURNAL_KILL"))
		db, err := badger.Open(context.Background(), dir, badger.Options{GCInterval: -1})
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(3)
		}
		writes := journalFill(t, db)
		err = journalAll(context.Background(), &killStore{Store: db, failAt: failAt, killAt: killAt}, writes, kind.opts)
		fmt.Println("done", err)
		os.Exit(0)
	}
	ctx := context.Background()
	for _, kind := range journalKinds[:2] {
		t.Run(kind.name, func(t *testing.T) {
			// Before and after, and how many writes each path makes.
			ref := badgertest.OpenMemory(t)
			writes := journalFill(t, ref)
			before := dumpExpiry(t, ref, true)
			count := &killStore{Store: ref}
			if err := journalAll(ctx, count, writes, kind.opts); err != nil {
				t.Fatal(err)
			}
			after := dumpExpiry(t, ref, true)
			forward := count.n
			// A failure at the last Write's last batch (before the commit
			// and its cleanup), then every write of the rollback.
			failAt := forward - 2
			ref2 := badgertest.OpenMemory(t)
			journalFill(t, ref2)
			count = &killStore{Store: ref2, failAt: failAt}
			if err := journalAll(ctx, count, writes, kind.opts); !errors.Is(err, kvtest.ErrInjected) {
				t.Fatalf("fail at %d: %v", failAt, err)
			}
			type point struct{ fail, kill int }
			var points []point
			for kill := 1; kill <= forward; kill++ {
				points = append(points, point{0, kill})
			}
			for kill := failAt + 1; kill <= count.n; kill++ {
				points = append(points, point{failAt, kill})
			}
			sawNone, sawAll := false, false
			for _, p := range points {
				dir := t.TempDir()
				cmd := exec.Command(os.Args[0], "-test.run=^TestJournalKilledAnywhereIsAllOrNothing$")
				cmd.Env = append(os.Environ(), "KV_JOURNAL_DIR="+dir, "KV_JOURNAL_KIND="+kind.name,
					"KV_JOURNAL_FAIL="+strconv.Itoa(p.fail), "KV_JOURNAL_KILL="+strconv.Itoa(p.kill))
				killAtReady(t, cmd, fmt.Sprintf("%+v", p))
				db := badgertest.OpenDir(t, dir)
				now := dumpExpiry(t, db, true)
				noJournal(t, db)
				db.Close()
				switch {
				case kvtest.Diff(before, now) == "":
					sawNone = true
				case p.fail == 0 && kvtest.Diff(after, now) == "":
					sawAll = true
				default:
					t.Fatalf("killed at write %d (failed at %d; %d forward, %d with the rollback): neither none (%s) nor all (%s)",
						p.kill, p.fail, forward, count.n, kvtest.Diff(before, now), kvtest.Diff(after, now))
				}
			}
			if !sawNone || !sawAll {
				t.Fatalf("kill points covered none=%v all=%v; want both", sawNone, sawAll)
			}
			t.Logf("%d kill points (%d forward, %d in the rollback)", len(points), forward, len(points)-forward)
		})
	}
}

// A namespace's view (kv.Prefixed) of an exclusive store is exclusive:
// its journal takes an image of the view only, and rolling it back
// deletes and restores keys inside the view, never outside it (another
// namespace written meanwhile keeps its write). The root's image counts
// every namespace's keys, so a big namespace makes the root's journal
// per-key.
func TestImageJournalInANamespace(t *testing.T) {
	ctx := context.Background()
	db := badgertest.Open(t)
	if err := db.Batch(ctx, []kv.Op{{Key: []byte("outside"), Value: []byte("o")}, {Key: []byte("ns/a/k"), Value: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	before := dumpExp(t, db)
	view := kv.Prefixed(db, []byte("ns/a/"))
	j, err := kv.Begin(ctx, view, kv.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !j.Image() {
		t.Fatal("a small namespace of badger: not an image journal")
	}
	if err := j.Write(ctx, []kv.Op{{Key: []byte("k"), Value: []byte("2")}, {Key: []byte("new"), Value: []byte("n")}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Batch(ctx, []kv.Op{{Key: []byte("ns/b/x"), Value: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	if err := j.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	want := maps.Clone(before)
	want["ns/b/x"] = "b|exp=0"
	if d := kvtest.Diff(want, dumpExp(t, db)); d != "" {
		t.Fatalf("after the namespace's rollback: %s", d)
	}

	var big []kv.Op
	for i := range 30 {
		big = append(big, kv.Op{Key: fmt.Appendf(nil, "ns/b/%02d", i), Value: []byte("v")})
	}
	if err := db.Batch(ctx, big); err != nil {
		t.Fatal(err)
	}
	j, err = kv.Begin(ctx, db, kv.ApplyOptions{ImageKeys: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Abort(ctx)
	if j.Image() {
		t.Fatal("the root past the bound with another namespace's keys: an image journal")
	}
}
