package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func openDisk(t *testing.T, dir string) Store {
	t.Helper()
	s, err := Open(context.Background(), dir, Options{GCInterval: -1})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func put(t *testing.T, s Store, kvs ...string) {
	t.Helper()
	err := s.Update(context.Background(), func(tx Txn) error {
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

func scanKeys(t *testing.T, s Store, prefix string, opts ScanOptions) []string {
	t.Helper()
	var keys []string
	err := s.View(context.Background(), func(r Reader) error {
		return r.Scan([]byte(prefix), opts, func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestScanOrderReverseStartLimit(t *testing.T) {
	s := openDisk(t, t.TempDir())
	defer s.Close()
	put(t, s, "a/1", "x", "b/1", "1", "b/3", "3", "b/2", "2", "b0", "past", "c/1", "y")

	check := func(name string, got []string, want ...string) {
		t.Helper()
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	check("forward", scanKeys(t, s, "b/", ScanOptions{}), "b/1", "b/2", "b/3")
	check("reverse", scanKeys(t, s, "b/", ScanOptions{Reverse: true}), "b/3", "b/2", "b/1")
	check("start", scanKeys(t, s, "b/", ScanOptions{Start: []byte("b/2")}), "b/2", "b/3")
	check("reverse start", scanKeys(t, s, "b/", ScanOptions{Reverse: true, Start: []byte("b/2")}), "b/2", "b/1")
	check("limit", scanKeys(t, s, "b/", ScanOptions{Limit: 2}), "b/1", "b/2")
	check("empty range reverse", scanKeys(t, s, "bb/", ScanOptions{Reverse: true}))
	check("keys only", scanKeys(t, s, "c/", ScanOptions{KeysOnly: true}), "c/1")

	// ErrStop ends a scan without error.
	var n int
	err := s.View(context.Background(), func(r Reader) error {
		return r.Scan([]byte("b/"), ScanOptions{}, func(k, v []byte) error {
			n++
			return ErrStop
		})
	})
	if err != nil || n != 1 {
		t.Errorf("ErrStop: n=%d err=%v", n, err)
	}
	if _, err := Get(context.Background(), s, []byte("nope")); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing key: got %v, want ErrNotFound", err)
	}
}

func TestPersistsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s := openDisk(t, dir)
	put(t, s, "k", "v")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openDisk(t, dir)
	defer s.Close()
	v, err := Get(context.Background(), s, []byte("k"))
	if err != nil || string(v) != "v" {
		t.Fatalf("after reopen: %q, %v", v, err)
	}
}

// Many goroutines increment one counter in read-modify-write transactions:
// conflicts must be retried, and no increment lost.
func TestUpdateRetriesConflicts(t *testing.T) {
	s, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := s.Update(context.Background(), func(tx Txn) error {
					n := 0
					if v, err := tx.Get([]byte("n")); err == nil {
						n, _ = strconv.Atoi(string(v))
					} else if !errors.Is(err, ErrNotFound) {
						return err
					}
					return tx.Set([]byte("n"), []byte(strconv.Itoa(n+1)), 0)
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	v, _ := Get(context.Background(), s, []byte("n"))
	if string(v) != strconv.Itoa(workers*each) {
		t.Fatalf("counter = %s, want %d", v, workers*each)
	}
}

func TestBatchDropPrefixAndTTL(t *testing.T) {
	s := openDisk(t, t.TempDir())
	defer s.Close()
	ctx := context.Background()
	var ops []Op
	for i := 0; i < 100; i++ {
		ops = append(ops, Op{Key: []byte(fmt.Sprintf("d/x/%03d", i)), Value: []byte("v")})
	}
	// e/1 lives a second; e/2 an hour, long past this test on any machine,
	// so which keys exist never depends on how fast the steps between run.
	ops = append(ops, Op{Key: []byte("d/y/1"), Value: []byte("v")},
		Op{Key: []byte("e/1"), Value: []byte("v"), TTL: time.Second}, Op{Key: []byte("e/2"), Value: []byte("v"), TTL: time.Hour})
	if err := s.Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	written := time.Now()
	if err := s.Batch(ctx, []Op{{Key: []byte("d/x/000"), Delete: true}}); err != nil {
		t.Fatal(err)
	}
	if got := len(scanKeys(t, s, "d/x/", ScanOptions{})); got != 99 {
		t.Fatalf("after batch: %d keys, want 99", got)
	}
	if err := s.DropPrefix(ctx, []byte("d/x/")); err != nil {
		t.Fatal(err)
	}
	if got := scanKeys(t, s, "d/", ScanOptions{}); len(got) != 1 || got[0] != "d/y/1" {
		t.Fatalf("after drop: %v, want [d/y/1]", got)
	}
	if err := s.DropPrefix(ctx, nil); err == nil {
		t.Fatal("dropping the empty prefix must be refused")
	}
	// Badger's TTL has one-second resolution: two seconds after the write,
	// e/1 has expired and e/2 has not.
	time.Sleep(time.Until(written.Add(2100 * time.Millisecond)))
	if got := scanKeys(t, s, "e/", ScanOptions{}); len(got) != 1 || got[0] != "e/2" {
		t.Fatalf("after e/1's expiry: %v, want [e/2]", got)
	}
}

func TestSecondOpenNamesHolder(t *testing.T) {
	dir := t.TempDir()
	s := openDisk(t, dir)
	_, err := Open(context.Background(), dir, Options{GCInterval: -1})
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("second open: got %v, want *LockedError", err)
	}
	if le.PID != os.Getpid() || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("error does not name the holder and what to do: %v", err)
	}
	// With a timeout, Open waits for the holder to let go.
	go func() {
		time.Sleep(100 * time.Millisecond)
		s.Close()
	}()
	s2, err := Open(context.Background(), dir, Options{GCInterval: -1, LockTimeout: time.Minute})
	if err != nil {
		t.Fatalf("open after release: %v", err)
	}
	s2.Close()
}

// A process killed with SIGKILL while holding the store leaves neither a
// stale lock nor lost committed writes.
func TestKilledHolderReleasesLockAndKeepsData(t *testing.T) {
	if os.Getenv("KV_HOLDER_DIR") != "" {
		s, err := Open(context.Background(), os.Getenv("KV_HOLDER_DIR"), Options{GCInterval: -1})
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(3)
		}
		put(t, s, "written", "before kill")
		fmt.Println("ready")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledHolderReleasesLockAndKeepsData$")
	cmd.Env = append(os.Environ(), "KV_HOLDER_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	if !strings.Contains(string(buf[:n]), "ready") {
		cmd.Process.Kill()
		t.Fatalf("holder did not start: %q", buf[:n])
	}
	_, err = Open(context.Background(), dir, Options{GCInterval: -1})
	var le *LockedError
	if !errors.As(err, &le) || le.PID != cmd.Process.Pid {
		t.Fatalf("open while held: got %v, want LockedError naming pid %d", err, cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	s := openDisk(t, dir)
	defer s.Close()
	v, err := Get(context.Background(), s, []byte("written"))
	if err != nil || string(v) != "before kill" {
		t.Fatalf("after kill -9: %q, %v", v, err)
	}
}

func TestPrefixEnd(t *testing.T) {
	for _, c := range []struct{ in, want string }{{"a/", "a0"}, {"a\xff", "b"}, {"\xff\xff", ""}} {
		if got := string(PrefixEnd([]byte(c.in))); got != c.want {
			t.Errorf("PrefixEnd(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A key over MaxKeySize is refused before the store sees it, with an error
// that names the limit and quotes only the key's start; nothing is written.
func TestKeyTooLarge(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir(), Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	long := append([]byte("site/x/"), bytes.Repeat([]byte("k"), MaxKeySize)...)
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrKeyTooLarge) || !strings.Contains(err.Error(), "is longer than the limit of 65000") || len(err.Error()) > 300 {
			t.Fatalf("%s: %v", what, err)
		}
	}
	check("set", db.Update(ctx, func(tx Txn) error {
		if err := tx.Set([]byte("ok"), []byte("1"), 0); err != nil {
			return err
		}
		return tx.Set(long, []byte("v"), 0)
	}))
	check("delete", db.Update(ctx, func(tx Txn) error { return tx.Delete(long) }))
	check("batch", db.Batch(ctx, []Op{{Key: []byte("ok"), Value: []byte("1")}, {Key: long, Value: []byte("v")}}))
	if _, err := Get(ctx, db, []byte("ok")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a write beside the refused key landed: %v", err)
	}
	if err := db.Update(ctx, func(tx Txn) error { return tx.Set(long[:MaxKeySize], []byte("v"), 0) }); err != nil {
		t.Fatalf("a key of exactly MaxKeySize: %v", err)
	}
}
