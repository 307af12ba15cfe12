package badger

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engine-dev/engine/kv"
)

// Below MinFree every write is refused with kv.ErrNoSpace, naming the figures,
// and nothing is written; reads work; with room again writes go on.
func TestWritesRefusedBelowMinFree(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openDisk(t, dir)
	if err := s.Update(ctx, func(tx kv.Txn) error { return tx.Set([]byte("a"), []byte("1"), 0) }); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// No disk has 2^62 bytes free: every write is below the bar.
	full, err := Open(ctx, dir, Options{GCInterval: -1, MinFree: 1 << 62})
	if err != nil {
		t.Fatalf("open with too little free space must work (reads do): %v", err)
	}
	for name, err := range map[string]error{
		"update": full.Update(ctx, func(tx kv.Txn) error { return tx.Set([]byte("b"), []byte("2"), 0) }),
		"batch":  full.Batch(ctx, []kv.Op{{Key: []byte("b"), Value: []byte("2")}}),
		"drop":   full.DropPrefix(ctx, []byte("a")),
	} {
		if !errors.Is(err, kv.ErrNoSpace) || !strings.Contains(err.Error(), "no space left on the data dir's disk:") ||
			!strings.Contains(err.Error(), "MiB free on the disk of "+dir+", writes need at least ") {
			t.Errorf("%s below MinFree: %v", name, err)
		}
	}
	if v, err := kv.Get(ctx, full, []byte("a")); err != nil || string(v) != "1" {
		t.Fatalf("read below MinFree: %q, %v", v, err)
	}
	if err := full.Close(); err != nil {
		t.Fatal(err)
	}
	again := openDisk(t, dir)
	defer again.Close()
	if _, err := kv.Get(ctx, again, []byte("b")); !errors.Is(err, kv.ErrNotFound) {
		t.Fatalf("a refused write landed: %v", err)
	}
	if err := again.Update(ctx, func(tx kv.Txn) error { return tx.Set([]byte("b"), []byte("2"), 0) }); err != nil {
		t.Fatalf("write with room: %v", err)
	}
}

// A real full disk: badger on a tmpfs that a filler file leaves with less
// than DefaultMinFree. Writes fail with kv.ErrNoSpace instead of the SIGBUS an
// mmapped log dies of on a full tmpfs; reads work; once the filler is gone
// the same open store writes again, and everything acknowledged is there
// after a reopen. Needs root (mount); skipped otherwise.
func TestDiskFullIsAnError(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a size-limited tmpfs")
	}
	ctx := context.Background()
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=160m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (%v: %s)", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	dir := filepath.Join(mnt, "data")
	s, err := Open(ctx, dir, Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	put := func(k string) error {
		return s.Update(ctx, func(tx kv.Txn) error { return tx.Set([]byte(k), []byte(strings.Repeat("v", 1000)), 0) })
	}
	if err := put("before"); err != nil {
		t.Fatal(err)
	}
	// Fill the disk to within 8 MiB of full.
	free, ok := freeSpace(mnt)
	if !ok {
		t.Skip("free space of the tmpfs is not known here")
	}
	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for n := uint64(0); n+8<<20 < free; n += uint64(len(chunk)) {
		if _, err := f.Write(chunk); err != nil {
			break // full already: that is the state under test
		}
	}
	f.Close()

	err = put("during")
	if !errors.Is(err, kv.ErrNoSpace) || !strings.Contains(err.Error(), "MiB free on the disk of "+dir) {
		t.Fatalf("write on a full disk = %v, want kv.ErrNoSpace", err)
	}
	if v, err := kv.Get(ctx, s, []byte("before")); err != nil || len(v) != 1000 {
		t.Fatalf("read on a full disk: %d bytes, %v", len(v), err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := put("after"); err != nil {
		t.Fatalf("write with room again: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, dir, Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"before", "after"} {
		if _, err := kv.Get(ctx, s, []byte(k)); err != nil {
			t.Errorf("%s after the reopen: %v", k, err)
		}
	}
	if _, err := kv.Get(ctx, s, []byte("during")); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("the refused write landed: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
