package kvtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engine-dev/engine/kv"
)

// Run checks a kv.Store implementation against the contract in kv's package
// comment, one subtest per clause. open returns a new, empty store for the
// subtest t; the suite closes it (Close twice must be harmless, so open may
// also register a cleanup that closes it).
func Run(t *testing.T, open func(t *testing.T) kv.Store) {
	RunSkipping(t, open, nil)
}

// RunSkipping is Run with the subtests named in skip skipped, each with the
// reason the store does not honour that clause (kv.Staging, whose
// transactions run one at a time, skips the ones that need a commit while
// a transaction is open).
func RunSkipping(t *testing.T, open func(t *testing.T) kv.Store, skip map[string]string) {
	for _, c := range conformance {
		t.Run(c.name, func(t *testing.T) {
			if why, ok := skip[c.name]; ok {
				t.Skip(why)
			}
			s := open(t)
			defer s.Close()
			c.run(t, s)
		})
	}
}

// The names of Run's subtests, for RunSkipping.
const (
	Order             = "Order"
	Scan              = "Scan"
	KeysOnly          = "KeysOnly"
	Stop              = "ErrStop"
	GetCopies         = "GetCopies"
	OwnWrites         = "OwnWrites"
	FailedUpdate      = "FailedUpdate"
	SnapshotIsolation = "SnapshotIsolation"
	Increments        = "Increments"
	ConflictOnRead    = "ConflictOnRead"
	GuardKey          = "GuardKey"
	GuardedInserts    = "GuardedInserts"
	BigBatch          = "BigBatch"
	Values            = "Values"
	KeyTooLarge       = "KeyTooLarge"
	TTL               = "TTL"
	DropPrefix        = "DropPrefix"
	Cancelled         = "Cancelled"
	Close             = "Close"
	Watch             = "Watcher"
)

var conformance = []struct {
	name string
	run  func(t *testing.T, s kv.Store)
}{
	{Order, testOrder},
	{Scan, testScan},
	{KeysOnly, testKeysOnly},
	{Stop, testStop},
	{GetCopies, testGetCopies},
	{OwnWrites, testOwnWrites},
	{FailedUpdate, testFailedUpdate},
	{SnapshotIsolation, testSnapshotIsolation},
	{Increments, testIncrements},
	{ConflictOnRead, testConflictOnRead},
	{GuardKey, testGuardKey},
	{GuardedInserts, testGuardedInserts},
	{BigBatch, testBigBatch},
	{Values, testValues},
	{KeyTooLarge, testKeyTooLarge},
	{TTL, testTTL},
	{DropPrefix, testDropPrefix},
	{Cancelled, testCancelled},
	{Close, testClose},
	{Watch, testWatcher},
}

var bg = context.Background()

// put writes key/value pairs in one Update.
func put(t *testing.T, s kv.Store, kvs ...string) {
	t.Helper()
	err := s.Update(bg, func(tx kv.Txn) error {
		for i := 0; i < len(kvs); i += 2 {
			if err := tx.Set([]byte(kvs[i]), []byte(kvs[i+1]), 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// scan returns the keys a Scan in a View yields.
func scan(t *testing.T, s kv.Store, prefix string, opts kv.ScanOptions) []string {
	t.Helper()
	var keys []string
	err := s.View(bg, func(r kv.Reader) error {
		return r.Scan([]byte(prefix), opts, func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		})
	})
	if err != nil {
		t.Fatalf("scan %q %+v: %v", prefix, opts, err)
	}
	return keys
}

// get returns the value at key, or "<none>" when it is missing.
func get(t *testing.T, s kv.Store, key string) string {
	t.Helper()
	v, err := kv.Get(bg, s, []byte(key))
	if errors.Is(err, kv.ErrNotFound) {
		return "<none>"
	}
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return string(v)
}

func same(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %q, want %q", what, got, want)
	}
}

// meanwhile commits fn in another goroutine and waits for it: a write that
// lands while the caller's transaction is open.
func meanwhile(s kv.Store, fn func(kv.Txn) error) error {
	done := make(chan error)
	go func() { done <- s.Update(bg, fn) }()
	return <-done
}

// Keys sort bytewise, 0x00 first and 0xff last, in every kind of scan,
// including under an all-0xff prefix (which has no PrefixEnd).
func testOrder(t *testing.T, s kv.Store) {
	keys := []string{"o", "o/", "o/\x00", "o/\x00\x00", "o/\x00\x01", "o/a", "o/a\x00", "o/b", "o/\x7f", "o/\x80", "o/\xff", "o/\xff\xff", "o0", "p", "\xff", "\xff\x00", "\xff\xff"}
	shuffled := slices.Clone(keys)
	slices.Reverse(shuffled)
	var ops []kv.Op
	for _, k := range shuffled {
		ops = append(ops, kv.Op{Key: []byte(k), Value: []byte("v")})
	}
	if err := s.Batch(bg, ops); err != nil {
		t.Fatal(err)
	}
	all := slices.Clone(keys)
	slices.Sort(all) // Go compares strings bytewise
	reversed := slices.Clone(all)
	slices.Reverse(reversed)
	under := func(prefix string, from []string) []string {
		var out []string
		for _, k := range from {
			if strings.HasPrefix(k, prefix) {
				out = append(out, k)
			}
		}
		return out
	}
	same(t, "all keys", scan(t, s, "", kv.ScanOptions{}), all...)
	same(t, "all keys reversed", scan(t, s, "", kv.ScanOptions{Reverse: true}), reversed...)
	same(t, "under o/", scan(t, s, "o/", kv.ScanOptions{}), under("o/", all)...)
	same(t, "under o/ reversed", scan(t, s, "o/", kv.ScanOptions{Reverse: true}), under("o/", reversed)...)
	same(t, "under o/\\x00", scan(t, s, "o/\x00", kv.ScanOptions{}), "o/\x00", "o/\x00\x00", "o/\x00\x01")
	same(t, "under o/\\xff reversed", scan(t, s, "o/\xff", kv.ScanOptions{Reverse: true}), "o/\xff\xff", "o/\xff")
	same(t, "under \\xff", scan(t, s, "\xff", kv.ScanOptions{}), "\xff", "\xff\x00", "\xff\xff")
	same(t, "under \\xff reversed", scan(t, s, "\xff", kv.ScanOptions{Reverse: true}), "\xff\xff", "\xff\x00", "\xff")
	same(t, "under \\xff\\xff reversed", scan(t, s, "\xff\xff", kv.ScanOptions{Reverse: true}), "\xff\xff")
}

// A prefix scan yields exactly the prefix's keys; Start, Limit and Reverse
// combine.
func testScan(t *testing.T, s kv.Store) {
	put(t, s, "a/1", "x", "b/1", "1", "b/3", "3", "b/2", "2", "b/4", "4", "b0", "past", "b", "short", "c/1", "y")
	o := func(rev bool, start string, limit int) kv.ScanOptions {
		opts := kv.ScanOptions{Reverse: rev, Limit: limit}
		if start != "" {
			opts.Start = []byte(start)
		}
		return opts
	}
	same(t, "forward", scan(t, s, "b/", o(false, "", 0)), "b/1", "b/2", "b/3", "b/4")
	same(t, "reverse", scan(t, s, "b/", o(true, "", 0)), "b/4", "b/3", "b/2", "b/1")
	same(t, "start", scan(t, s, "b/", o(false, "b/2", 0)), "b/2", "b/3", "b/4")
	same(t, "start between keys", scan(t, s, "b/", o(false, "b/25", 0)), "b/3", "b/4")
	same(t, "start past the last key", scan(t, s, "b/", o(false, "b/5", 0)))
	same(t, "limit", scan(t, s, "b/", o(false, "", 2)), "b/1", "b/2")
	same(t, "start and limit", scan(t, s, "b/", o(false, "b/2", 2)), "b/2", "b/3")
	same(t, "reverse start", scan(t, s, "b/", o(true, "b/3", 0)), "b/3", "b/2", "b/1")
	same(t, "reverse start between keys", scan(t, s, "b/", o(true, "b/25", 0)), "b/2", "b/1")
	same(t, "reverse start before the first key", scan(t, s, "b/", o(true, "b/0", 0)))
	same(t, "reverse limit", scan(t, s, "b/", o(true, "", 2)), "b/4", "b/3")
	same(t, "reverse start and limit", scan(t, s, "b/", o(true, "b/3", 2)), "b/3", "b/2")
	same(t, "limit above the count", scan(t, s, "b/", o(false, "", 10)), "b/1", "b/2", "b/3", "b/4")
	same(t, "empty range", scan(t, s, "bb/", o(false, "", 0)))
	same(t, "empty range reversed", scan(t, s, "bb/", o(true, "", 0)))
	same(t, "prefix is a whole key", scan(t, s, "b", o(false, "", 0)), "b", "b/1", "b/2", "b/3", "b/4", "b0")
	err := s.View(bg, func(r kv.Reader) error {
		return r.Scan([]byte("b/"), kv.ScanOptions{Start: []byte("c/1")}, func(k, v []byte) error { return nil })
	})
	if err == nil {
		t.Error("a Start outside the prefix must be refused")
	}
}

// KeysOnly yields every key with a nil value.
func testKeysOnly(t *testing.T, s kv.Store) {
	put(t, s, "k/1", "one", "k/2", "two")
	for _, rev := range []bool{false, true} {
		n := 0
		err := s.View(bg, func(r kv.Reader) error {
			return r.Scan([]byte("k/"), kv.ScanOptions{KeysOnly: true, Reverse: rev}, func(k, v []byte) error {
				n++
				if v != nil {
					return fmt.Errorf("key %q came with value %q", k, v)
				}
				return nil
			})
		})
		if err != nil || n != 2 {
			t.Errorf("keys only (reverse %v): %d keys, %v", rev, n, err)
		}
	}
}

// ErrStop ends a scan with nil; any other error from the callback comes
// back from Scan, View and Update.
func testStop(t *testing.T, s kv.Store) {
	put(t, s, "s/1", "1", "s/2", "2", "s/3", "3")
	var n int
	err := s.View(bg, func(r kv.Reader) error {
		return r.Scan([]byte("s/"), kv.ScanOptions{}, func(k, v []byte) error {
			n++
			if n == 2 {
				return kv.ErrStop
			}
			return nil
		})
	})
	if err != nil || n != 2 {
		t.Errorf("ErrStop: %d keys, err %v; want 2 keys, nil", n, err)
	}
	mine := errors.New("callback failed")
	err = s.View(bg, func(r kv.Reader) error {
		return r.Scan([]byte("s/"), kv.ScanOptions{}, func(k, v []byte) error { return mine })
	})
	if !errors.Is(err, mine) {
		t.Errorf("a callback's error from View: %v", err)
	}
	err = s.Update(bg, func(tx kv.Txn) error {
		return tx.Scan([]byte("s/"), kv.ScanOptions{Reverse: true}, func(k, v []byte) error { return mine })
	})
	if !errors.Is(err, mine) {
		t.Errorf("a callback's error from Update: %v", err)
	}
	if _, err := kv.Get(bg, s, []byte("nope")); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("missing key: got %v, want kv.ErrNotFound", err)
	}
}

// Get returns a copy: changing it changes nothing in the store.
func testGetCopies(t *testing.T, s kv.Store) {
	put(t, s, "g", "value")
	v, err := kv.Get(bg, s, []byte("g"))
	if err != nil {
		t.Fatal(err)
	}
	copy(v, "XXXXX")
	err = s.Update(bg, func(tx kv.Txn) error {
		v, err := tx.Get([]byte("g"))
		if err != nil {
			return err
		}
		copy(v, "YYYYY")
		if v, err = tx.Get([]byte("g")); err != nil || string(v) != "value" {
			return fmt.Errorf("second Get in the transaction: %q, %v", v, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "g"); got != "value" {
		t.Errorf("after changing what Get returned: %q, want %q", got, "value")
	}
}

// An Update reads its own writes, with Get and with Scan in both orders.
func testOwnWrites(t *testing.T, s kv.Store) {
	put(t, s, "w/1", "old", "w/3", "three")
	err := s.Update(bg, func(tx kv.Txn) error {
		if err := tx.Set([]byte("w/1"), []byte("new"), 0); err != nil {
			return err
		}
		if err := tx.Set([]byte("w/2"), []byte("two"), 0); err != nil {
			return err
		}
		if err := tx.Delete([]byte("w/3")); err != nil {
			return err
		}
		if err := tx.Delete([]byte("w/never")); err != nil {
			return fmt.Errorf("deleting a missing key: %w", err)
		}
		if v, err := tx.Get([]byte("w/1")); err != nil || string(v) != "new" {
			return fmt.Errorf("get own write: %q, %v", v, err)
		}
		if _, err := tx.Get([]byte("w/3")); !errors.Is(err, kv.ErrNotFound) {
			return fmt.Errorf("get own delete: %v", err)
		}
		for _, rev := range []bool{false, true} {
			var got []string
			err := tx.Scan([]byte("w/"), kv.ScanOptions{Reverse: rev}, func(k, v []byte) error {
				got = append(got, string(k)+"="+string(v))
				return nil
			})
			if err != nil {
				return err
			}
			want := []string{"w/1=new", "w/2=two"}
			if rev {
				slices.Reverse(want)
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("scan own writes (reverse %v): %q, want %q", rev, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "after the commit", scan(t, s, "w/", kv.ScanOptions{}), "w/1", "w/2")
}

// An Update whose function fails writes nothing and returns its error.
func testFailedUpdate(t *testing.T, s kv.Store) {
	put(t, s, "f/1", "kept")
	mine := errors.New("fn failed")
	err := s.Update(bg, func(tx kv.Txn) error {
		if err := tx.Set([]byte("f/1"), []byte("changed"), 0); err != nil {
			return err
		}
		if err := tx.Set([]byte("f/2"), []byte("added"), 0); err != nil {
			return err
		}
		return mine
	})
	if !errors.Is(err, mine) {
		t.Fatalf("Update returned %v, want the function's error", err)
	}
	if got := get(t, s, "f/1"); got != "kept" {
		t.Errorf("f/1 = %q after a failed Update", got)
	}
	if got := get(t, s, "f/2"); got != "<none>" {
		t.Errorf("f/2 = %q after a failed Update", got)
	}
}

// A View reads one snapshot: a commit made while it is open is not seen.
func testSnapshotIsolation(t *testing.T, s kv.Store) {
	put(t, s, "i/a", "1")
	err := s.View(bg, func(r kv.Reader) error {
		if v, err := r.Get([]byte("i/a")); err != nil || string(v) != "1" {
			return fmt.Errorf("first read: %q, %v", v, err)
		}
		err := meanwhile(s, func(tx kv.Txn) error {
			if err := tx.Set([]byte("i/a"), []byte("2"), 0); err != nil {
				return err
			}
			return tx.Set([]byte("i/b"), []byte("new"), 0)
		})
		if err != nil {
			return fmt.Errorf("the other commit: %w", err)
		}
		if v, err := r.Get([]byte("i/a")); err != nil || string(v) != "1" {
			return fmt.Errorf("read after another commit: %q, %v; want the snapshot's 1", v, err)
		}
		if _, err := r.Get([]byte("i/b")); !errors.Is(err, kv.ErrNotFound) {
			return fmt.Errorf("a key committed after the snapshot: %v, want kv.ErrNotFound", err)
		}
		var keys []string
		err = r.Scan([]byte("i/"), kv.ScanOptions{}, func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		})
		if err != nil {
			return err
		}
		if !slices.Equal(keys, []string{"i/a"}) {
			return fmt.Errorf("scan after another commit: %q, want [i/a]", keys)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "i/a"); got != "2" {
		t.Errorf("after the View: %q, want 2", got)
	}
}

// Concurrent read-modify-writes of one key conflict and are retried: none
// is lost.
func testIncrements(t *testing.T, s kv.Store) {
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := s.Update(bg, func(tx kv.Txn) error {
					n := 0
					if v, err := tx.Get([]byte("n")); err == nil {
						n, _ = strconv.Atoi(string(v))
					} else if !errors.Is(err, kv.ErrNotFound) {
						return err
					}
					return tx.Set([]byte("n"), []byte(strconv.Itoa(n+1)), 0)
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := get(t, s, "n"); got != strconv.Itoa(workers*each) {
		t.Fatalf("counter = %s, want %d", got, workers*each)
	}
}

// A key an Update read — with Get, missing or present, or returned by a
// Scan — and another commit wrote meanwhile makes the Update run again on
// a fresh snapshot.
func testConflictOnRead(t *testing.T, s kv.Store) {
	for _, c := range []struct {
		name  string
		read  func(tx kv.Txn) (string, error)
		other func(tx kv.Txn) error
		want  string
	}{
		{"get", func(tx kv.Txn) (string, error) {
			v, err := tx.Get([]byte("c/get"))
			return string(v), err
		}, func(tx kv.Txn) error { return tx.Set([]byte("c/get"), []byte("2"), 0) }, "2"},
		{"get missing", func(tx kv.Txn) (string, error) {
			v, err := tx.Get([]byte("c/missing"))
			if errors.Is(err, kv.ErrNotFound) {
				return "<none>", nil
			}
			return string(v), err
		}, func(tx kv.Txn) error { return tx.Set([]byte("c/missing"), []byte("created"), 0) }, "created"},
		{"scan", func(tx kv.Txn) (string, error) {
			var vs []string
			err := tx.Scan([]byte("c/scan/"), kv.ScanOptions{}, func(k, v []byte) error {
				vs = append(vs, string(v))
				return nil
			})
			return strings.Join(vs, ","), err
		}, func(tx kv.Txn) error { return tx.Set([]byte("c/scan/2"), []byte("B"), 0) }, "a,B"},
		{"scan, key deleted", func(tx kv.Txn) (string, error) {
			var ks []string
			err := tx.Scan([]byte("c/del/"), kv.ScanOptions{KeysOnly: true, Reverse: true}, func(k, _ []byte) error {
				ks = append(ks, string(k))
				return nil
			})
			return strings.Join(ks, ","), err
		}, func(tx kv.Txn) error { return tx.Delete([]byte("c/del/1")) }, "c/del/2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			put(t, s, "c/get", "1", "c/scan/1", "a", "c/scan/2", "b", "c/del/1", "x", "c/del/2", "y")
			attempts := 0
			err := s.Update(bg, func(tx kv.Txn) error {
				attempts++
				got, err := c.read(tx)
				if err != nil {
					return err
				}
				if attempts == 1 {
					if err := meanwhile(s, c.other); err != nil {
						return fmt.Errorf("the other commit: %w", err)
					}
				}
				return tx.Set([]byte("c/out"), []byte(got), 0)
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := get(t, s, "c/out"); attempts != 2 || got != c.want {
				t.Errorf("ran %d times and wrote %q; want 2 runs, the second reading %q", attempts, got, c.want)
			}
		})
	}
}

// The narrower contract for phantoms: an insert into a range an Update
// scanned need not conflict with it, but one that also writes a guard key
// the Update read does.
func testGuardKey(t *testing.T, s kv.Store) {
	attempts := 0
	err := s.Update(bg, func(tx kv.Txn) error {
		attempts++
		if _, err := tx.Get([]byte("guard")); err != nil && !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		n := 0
		err := tx.Scan([]byte("m/"), kv.ScanOptions{KeysOnly: true}, func(_, _ []byte) error {
			n++
			return nil
		})
		if err != nil {
			return err
		}
		if attempts == 1 {
			err := meanwhile(s, func(tx kv.Txn) error {
				if err := tx.Set([]byte("m/other"), []byte("x"), 0); err != nil {
					return err
				}
				return tx.Set([]byte("guard"), []byte("1"), 0)
			})
			if err != nil {
				return fmt.Errorf("the other commit: %w", err)
			}
		}
		return tx.Set([]byte("count"), []byte(strconv.Itoa(n)), 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "count"); attempts != 2 || got != "1" {
		t.Errorf("ran %d times and counted %s members; want 2 runs, the second counting 1", attempts, got)
	}
}

// Concurrent "insert unless the range is full" transactions that read and
// bump a guard key never overfill the range.
func testGuardedInserts(t *testing.T, s kv.Store) {
	const workers, tries, room = 6, 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range tries {
				err := s.Update(bg, func(tx kv.Txn) error {
					gen := 0
					if v, err := tx.Get([]byte("guard")); err == nil {
						gen, _ = strconv.Atoi(string(v))
					} else if !errors.Is(err, kv.ErrNotFound) {
						return err
					}
					n := 0
					err := tx.Scan([]byte("m/"), kv.ScanOptions{KeysOnly: true}, func(_, _ []byte) error {
						n++
						return nil
					})
					if err != nil || n >= room {
						return err
					}
					if err := tx.Set(fmt.Appendf(nil, "m/%d/%d", w, i), []byte("x"), 0); err != nil {
						return err
					}
					return tx.Set([]byte("guard"), []byte(strconv.Itoa(gen+1)), 0)
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := scan(t, s, "m/", kv.ScanOptions{KeysOnly: true}); len(got) != room {
		t.Fatalf("%d members, want %d: %q", len(got), room, got)
	}
}

// bigOps is more ops than fit one transaction of any store here (badger
// takes ~2.4 MB on disk and ~9.6 MB in memory; etcd 128 ops).
const bigOps, bigValue = 12000, 1024

// A Batch of any size lands whole; an Update that size either commits or
// fails with kv.ErrTooBig having written nothing.
func testBigBatch(t *testing.T, s kv.Store) {
	value := bytes.Repeat([]byte("v"), bigValue)
	ops := make([]kv.Op, bigOps)
	for i := range ops {
		ops[i] = kv.Op{Key: fmt.Appendf(nil, "big/%05d", i), Value: value}
	}
	if err := s.Batch(bg, ops); err != nil {
		t.Fatalf("a batch of %d ops of %d bytes: %v", bigOps, bigValue, err)
	}
	if got := scan(t, s, "big/", kv.ScanOptions{KeysOnly: true}); len(got) != bigOps {
		t.Fatalf("after the batch: %d keys, want %d", len(got), bigOps)
	}
	err := s.Update(bg, func(tx kv.Txn) error {
		for i := range bigOps {
			if err := tx.Set(fmt.Appendf(nil, "upd/%05d", i), value, 0); err != nil {
				return err
			}
		}
		return nil
	})
	t.Logf("an Update of %d ops of %d bytes: %v", bigOps, bigValue, err)
	switch n := len(scan(t, s, "upd/", kv.ScanOptions{KeysOnly: true})); {
	case err == nil && n != bigOps:
		t.Errorf("a committed Update of %d ops left %d keys", bigOps, n)
	case err != nil && !errors.Is(err, kv.ErrTooBig):
		t.Errorf("an Update of %d ops: %v, want nil or kv.ErrTooBig", bigOps, err)
	case err != nil && n != 0:
		t.Errorf("an Update too big to commit wrote %d keys", n)
	}
	for i := range ops {
		ops[i] = kv.Op{Key: ops[i].Key, Delete: true}
	}
	if err := s.Batch(bg, ops); err != nil {
		t.Fatal(err)
	}
	if got := scan(t, s, "big/", kv.ScanOptions{KeysOnly: true}); len(got) != 0 {
		t.Fatalf("after deleting them in a batch: %d keys left", len(got))
	}
}

// Values of 0 bytes and of 1 MiB round-trip, through Update and Batch.
func testValues(t *testing.T, s kv.Store) {
	large := make([]byte, 1<<20)
	for i := range large {
		large[i] = byte(i * 7)
	}
	err := s.Update(bg, func(tx kv.Txn) error {
		if err := tx.Set([]byte("v/empty"), nil, 0); err != nil {
			return err
		}
		return tx.Set([]byte("v/large"), large, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Batch(bg, []kv.Op{{Key: []byte("v/large2"), Value: large}}); err != nil {
		t.Fatal(err)
	}
	if v, err := kv.Get(bg, s, []byte("v/empty")); err != nil || len(v) != 0 {
		t.Errorf("empty value: %q, %v", v, err)
	}
	for _, k := range []string{"v/large", "v/large2"} {
		if v, err := kv.Get(bg, s, []byte(k)); err != nil || !bytes.Equal(v, large) {
			t.Errorf("%s: %d bytes, %v; want the 1 MiB written", k, len(v), err)
		}
	}
	n := 0
	err = s.View(bg, func(r kv.Reader) error {
		return r.Scan([]byte("v/large"), kv.ScanOptions{}, func(k, v []byte) error {
			n++
			if !bytes.Equal(v, large) {
				return fmt.Errorf("scan of %s: %d bytes", k, len(v))
			}
			return nil
		})
	})
	if err != nil || n != 2 {
		t.Errorf("scan of large values: %d, %v", n, err)
	}
}

// A key over kv.MaxKeySize is refused before the store sees it, with an
// error that names the limit and quotes only the key's start; nothing of
// the refused write lands. A key of exactly MaxKeySize is taken.
func testKeyTooLarge(t *testing.T, s kv.Store) {
	long := append([]byte("site/x/"), bytes.Repeat([]byte("k"), kv.MaxKeySize)...)
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, kv.ErrKeyTooLarge) || !strings.Contains(err.Error(), "is longer than the limit of 65000") || len(err.Error()) > 300 {
			t.Errorf("%s: %v", what, err)
		}
	}
	check("set", s.Update(bg, func(tx kv.Txn) error {
		if err := tx.Set([]byte("ok"), []byte("1"), 0); err != nil {
			return err
		}
		return tx.Set(long, []byte("v"), 0)
	}))
	check("delete", s.Update(bg, func(tx kv.Txn) error { return tx.Delete(long) }))
	check("batch", s.Batch(bg, []kv.Op{{Key: []byte("ok"), Value: []byte("1")}, {Key: long, Value: []byte("v")}}))
	if got := get(t, s, "ok"); got != "<none>" {
		t.Fatalf("a write beside the refused key landed: %q", got)
	}
	if err := s.Update(bg, func(tx kv.Txn) error { return tx.Set(long[:kv.MaxKeySize], []byte("v"), 0) }); err != nil {
		t.Fatalf("a key of exactly MaxKeySize: %v", err)
	}
	if err := s.Batch(bg, []kv.Op{{Key: long[:kv.MaxKeySize], Delete: true}}); err != nil {
		t.Fatalf("deleting a key of exactly MaxKeySize: %v", err)
	}
}

// A key with a TTL disappears from Get and Scan; one with a long TTL stays.
// Stores may count expiry in whole seconds, so the suite writes a TTL of
// one second and polls, with a deadline far beyond it for a loaded machine.
func testTTL(t *testing.T, s kv.Store) {
	err := s.Batch(bg, []kv.Op{
		{Key: []byte("e/1"), Value: []byte("v"), TTL: time.Second},
		{Key: []byte("e/2"), Value: []byte("v"), TTL: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(bg, func(tx kv.Txn) error { return tx.Set([]byte("e/3"), []byte("v"), time.Second) }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		keys := scan(t, s, "e/", kv.ScanOptions{})
		if slices.Equal(keys, []string{"e/2"}) && get(t, s, "e/1") == "<none>" && get(t, s, "e/3") == "<none>" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after a TTL of 1 s: keys %q, want [e/2]", keys)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := get(t, s, "e/2"); got != "v" {
		t.Errorf("the key with an hour's TTL: %q", got)
	}
}

// DropPrefix deletes exactly the prefix's keys and refuses the empty prefix.
func testDropPrefix(t *testing.T, s kv.Store) {
	var ops []kv.Op
	for i := range 100 {
		ops = append(ops, kv.Op{Key: fmt.Appendf(nil, "d/x/%03d", i), Value: []byte("v")})
	}
	ops = append(ops, kv.Op{Key: []byte("d/y/1"), Value: []byte("v")}, kv.Op{Key: []byte("d/x"), Value: []byte("v")}, kv.Op{Key: []byte("d/x0"), Value: []byte("v")})
	if err := s.Batch(bg, ops); err != nil {
		t.Fatal(err)
	}
	if err := s.DropPrefix(bg, []byte("d/x/")); err != nil {
		t.Fatal(err)
	}
	same(t, "after the drop", scan(t, s, "d/", kv.ScanOptions{}), "d/x", "d/x0", "d/y/1")
	if err := s.DropPrefix(bg, nil); err == nil {
		t.Error("dropping the empty prefix must be refused")
	}
	if got := scan(t, s, "d/", kv.ScanOptions{}); len(got) != 3 {
		t.Errorf("after refusing the empty prefix: %q", got)
	}
}

// A cancelled context fails every call, and nothing is written; a context
// cancelled while an Update's function runs fails its commit.
func testCancelled(t *testing.T, s kv.Store) {
	put(t, s, "x/1", "kept")
	ctx, cancel := context.WithCancel(bg)
	cancel()
	ran := false
	if err := s.View(ctx, func(kv.Reader) error { ran = true; return nil }); !errors.Is(err, context.Canceled) || ran {
		t.Errorf("View with a cancelled context: %v (function ran: %v)", err, ran)
	}
	set := func(tx kv.Txn) error { return tx.Set([]byte("x/2"), []byte("v"), 0) }
	if err := s.Update(ctx, set); !errors.Is(err, context.Canceled) {
		t.Errorf("Update with a cancelled context: %v", err)
	}
	if err := s.Batch(ctx, []kv.Op{{Key: []byte("x/3"), Value: []byte("v")}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Batch with a cancelled context: %v", err)
	}
	if err := s.DropPrefix(ctx, []byte("x/")); !errors.Is(err, context.Canceled) {
		t.Errorf("DropPrefix with a cancelled context: %v", err)
	}
	ctx, cancel = context.WithCancel(bg)
	err := s.Update(ctx, func(tx kv.Txn) error {
		if err := tx.Set([]byte("x/4"), []byte("v"), 0); err != nil {
			return err
		}
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Update whose context was cancelled before its commit: %v", err)
	}
	same(t, "after the cancelled calls", scan(t, s, "x/", kv.ScanOptions{}), "x/1")
}

// After Close every call fails with kv.ErrClosed; a second Close is
// harmless.
func testClose(t *testing.T, s kv.Store) {
	put(t, s, "k", "v")
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for name, err := range map[string]error{
		"View":       s.View(bg, func(kv.Reader) error { return nil }),
		"Update":     s.Update(bg, func(tx kv.Txn) error { return tx.Set([]byte("k"), []byte("w"), 0) }),
		"Batch":      s.Batch(bg, []kv.Op{{Key: []byte("k"), Value: []byte("w")}}),
		"DropPrefix": s.DropPrefix(bg, []byte("k")),
	} {
		if !errors.Is(err, kv.ErrClosed) {
			t.Errorf("%s after Close: %v, want kv.ErrClosed", name, err)
		}
	}
}

// watchedValue is key's value as w's Watched gives it ("<none>" for a
// missing key), waiting for the key's copy to be synced: the first call
// starts watching it.
func watchedValue(t *testing.T, w kv.Watcher, key string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, ok := w.Watched([]byte(key))
		if ok {
			if v == nil {
				return "<none>"
			}
			return string(v)
		}
		if time.Now().After(deadline) {
			t.Fatalf("Watched(%s) not synced after 30 s", key)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ownWatched is key's value as w's next Watched gives it, which must be
// synced already: a commit of this process is seen at once.
func ownWatched(t *testing.T, w kv.Watcher, key, after string) string {
	t.Helper()
	v, ok := w.Watched([]byte(key))
	if !ok {
		t.Fatalf("Watched(%s) after %s: not synced", key, after)
	}
	if v == nil {
		return "<none>"
	}
	return string(v)
}

// A store that implements kv.Watcher sees its own commits at once (Update,
// Batch, Delete, DropPrefix), a missing key as missing, and a value never
// goes back to an older one while concurrent writers commit.
func testWatcher(t *testing.T, s kv.Store) {
	w, ok := s.(kv.Watcher)
	if !ok {
		t.Skip("the store does not implement kv.Watcher")
	}
	put(t, s, "w/a", "1")
	if got := watchedValue(t, w, "w/a"); got != "1" {
		t.Fatalf("watched w/a = %q, want 1", got)
	}
	if got := watchedValue(t, w, "w/none"); got != "<none>" {
		t.Fatalf("watched missing key = %q", got)
	}
	put(t, s, "w/a", "2")
	if got := ownWatched(t, w, "w/a", "an Update"); got != "2" {
		t.Errorf("after an Update: %q, want 2", got)
	}
	if err := s.Batch(bg, []kv.Op{{Key: []byte("w/a"), Value: []byte("3")}, {Key: []byte("w/none"), Value: []byte("n")}}); err != nil {
		t.Fatal(err)
	}
	if got := ownWatched(t, w, "w/a", "a Batch"); got != "3" {
		t.Errorf("after a Batch: %q, want 3", got)
	}
	if got := ownWatched(t, w, "w/none", "a Batch"); got != "n" {
		t.Errorf("a missing key after a Batch wrote it: %q, want n", got)
	}
	if err := s.Update(bg, func(tx kv.Txn) error { return tx.Delete([]byte("w/a")) }); err != nil {
		t.Fatal(err)
	}
	if got := ownWatched(t, w, "w/a", "a Delete"); got != "<none>" {
		t.Errorf("after a Delete: %q", got)
	}
	if err := s.Batch(bg, []kv.Op{{Key: []byte("w/none"), Delete: true}}); err != nil {
		t.Fatal(err)
	}
	if got := ownWatched(t, w, "w/none", "a Batch delete"); got != "<none>" {
		t.Errorf("after a Batch delete: %q", got)
	}
	put(t, s, "w/a", "4")
	if err := s.DropPrefix(bg, []byte("w/")); err != nil {
		t.Fatal(err)
	}
	if got := ownWatched(t, w, "w/a", "DropPrefix"); got != "<none>" {
		t.Errorf("after DropPrefix: %q", got)
	}

	// Concurrent read-modify-writes of one counter: every value read is
	// at least the one read before it, and the last is the final count.
	put(t, s, "w/n", "0")
	if got := watchedValue(t, w, "w/n"); got != "0" {
		t.Fatalf("watched counter = %q", got)
	}
	const writers, each = 4, 25
	var wg sync.WaitGroup
	done := make(chan struct{})
	var readErr error
	go func() {
		defer close(done)
		last := 0
		for {
			v, ok := w.Watched([]byte("w/n"))
			if ok {
				n, err := strconv.Atoi(string(v))
				if err != nil || n < last {
					readErr = fmt.Errorf("watched counter went from %d to %q", last, v)
					return
				}
				last = n
				if n == writers*each {
					return
				}
			}
		}
	}()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := s.Update(bg, func(tx kv.Txn) error {
					v, err := tx.Get([]byte("w/n"))
					if err != nil {
						return err
					}
					n, _ := strconv.Atoi(string(v))
					return tx.Set([]byte("w/n"), []byte(strconv.Itoa(n+1)), 0)
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := ownWatched(t, w, "w/n", "the writers"); got != strconv.Itoa(writers*each) {
		t.Errorf("after %d increments: %q", writers*each, got)
	}
	<-done
	if readErr != nil {
		t.Error(readErr)
	}
}
