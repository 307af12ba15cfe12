package badger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/kv"
)

func openDisk(t *testing.T, dir string) kv.Store {
	t.Helper()
	s, err := Open(context.Background(), dir, Options{GCInterval: -1})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func put(t *testing.T, s kv.Store, kvs ...string) {
	t.Helper()
	err := s.Update(context.Background(), func(tx kv.Txn) error {
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

func TestPersistsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s := openDisk(t, dir)
	put(t, s, "k", "v")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openDisk(t, dir)
	defer s.Close()
	v, err := kv.Get(context.Background(), s, []byte("k"))
	if err != nil || string(v) != "v" {
		t.Fatalf("after reopen: %q, %v", v, err)
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
	// A read-only open cannot replay the log the kill left: it says so
	// (engine doctor reports it), and the read-write open replays it.
	if _, err := Open(context.Background(), dir, Options{ReadOnly: true}); !errors.Is(err, ErrReplayDue) ||
		!strings.Contains(err.Error(), "not closed cleanly") || strings.Contains(err.Error(), "truncate") {
		t.Fatalf("read-only open after kill -9: %v, want ErrReplayDue", err)
	}
	s := openDisk(t, dir)
	v, err := kv.Get(context.Background(), s, []byte("written"))
	if err != nil || string(v) != "before kill" {
		t.Fatalf("after kill -9: %q, %v", v, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(context.Background(), dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open after the replay: %v", err)
	}
	ro.Close()
}

// Badger tracks the keys a transaction read, not the ranges it scanned: an
// insert into a scanned range that the scan did not return (a phantom)
// commits beside the scanning Update without a conflict. kv's contract is
// narrowed to match (kvtest's GuardKey clause is the way around it); this
// test pins the limitation, so that the contract is revisited if badger
// starts to detect phantoms.
func TestPhantomIsNotDetected(t *testing.T) {
	s, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	attempts := 0
	err = s.Update(ctx, func(tx kv.Txn) error {
		attempts++
		n := 0
		if err := tx.Scan([]byte("m/"), kv.ScanOptions{KeysOnly: true}, func(_, _ []byte) error { n++; return nil }); err != nil {
			return err
		}
		if attempts == 1 {
			done := make(chan error)
			go func() {
				done <- s.Update(ctx, func(tx kv.Txn) error { return tx.Set([]byte("m/other"), []byte("x"), 0) })
			}()
			if err := <-done; err != nil {
				return err
			}
		}
		return tx.Set([]byte("count"), []byte(strconv.Itoa(n)), 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := kv.Get(ctx, s, []byte("count"))
	if err != nil {
		t.Fatal(err)
	}
	if attempts != 1 || string(v) != "0" {
		t.Fatalf("ran %d times and counted %s: badger now detects phantoms; widen kv's contract", attempts, v)
	}
}

// TestCloseAfterDirDeleted: a store whose directory is deleted (or
// replaced) under it closes with an error naming the directory, instead of
// hanging in badger's endless retry of its memtable's flush.
func TestCloseAfterDirDeleted(t *testing.T) {
	for _, replace := range []bool{false, true} {
		dir := t.TempDir() + "/d"
		s := openDisk(t, dir)
		put(t, s, "k", "v")
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		want := "was deleted while open"
		if replace {
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			want = "was replaced by another directory while open"
		}
		done := make(chan error, 1)
		go func() { done <- s.Close() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "data dir "+dir+" "+want) {
				t.Fatalf("Close (replaced %v): %v", replace, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("Close (replaced %v) hangs", replace)
		}
	}
}
