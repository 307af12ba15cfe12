package badger

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/engine-dev/engine/kv"
)

// A kill -9 can land while badger creates a file. These tests put the data
// dir into the state such a kill leaves, at each point where badger creates
// a file, and check that the next open succeeds with nothing committed lost.

// nextFile names the file after the highest-numbered *.ext in dir.
func nextFile(t *testing.T, dir, ext string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*."+ext))
	if err != nil {
		t.Fatal(err)
	}
	max := 0
	for _, n := range names {
		var id int
		if _, err := fmt.Sscanf(filepath.Base(n), "%d."+ext, &id); err == nil && id > max {
			max = id
		}
	}
	format := "%06d." + ext
	if ext == "mem" {
		format = "%05d." + ext
	}
	return filepath.Join(dir, fmt.Sprintf(format, max+1))
}

func TestOpenAfterKillAtFileCreation(t *testing.T) {
	for _, tc := range []struct {
		name string
		// leave puts into dir what a kill at that point leaves behind.
		leave func(t *testing.T, dir string)
	}{
		// The value log's next file was created but not yet sized or
		// given its header.
		{"empty value log file", func(t *testing.T, dir string) {
			if err := os.WriteFile(nextFile(t, dir, "vlog"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		// ... sized, but the header never written.
		{"sized value log file without header", func(t *testing.T, dir string) {
			f, err := os.Create(nextFile(t, dir, "vlog"))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(1 << 20); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}},
		// A memtable's write-ahead log created, nothing in it.
		{"empty memtable file", func(t *testing.T, dir string) {
			if err := os.WriteFile(nextFile(t, dir, "mem"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		// A table file being written when the kill came: not yet in the
		// manifest.
		{"partial table file", func(t *testing.T, dir string) {
			if err := os.WriteFile(nextFile(t, dir, "sst"), []byte("partial"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openDisk(t, dir)
			put(t, s, "committed", "yes")
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			tc.leave(t, dir)
			// A read-only open either reads what was committed or fails
			// (its caller then opens read-write, which repairs), never
			// with the lock kept.
			if ro, err := Open(context.Background(), dir, Options{ReadOnly: true}); err == nil {
				if got := getString(t, ro, "committed"); got != "yes" {
					t.Fatalf("committed value read-only: %q", got)
				}
				if err := ro.Close(); err != nil {
					t.Fatal(err)
				}
			} else if _, locked := err.(*LockedError); locked {
				t.Fatalf("read-only open: %v", err)
			}
			s = openDisk(t, dir)
			if got := getString(t, s, "committed"); got != "yes" {
				t.Fatalf("committed value after reopen: %q", got)
			}
			put(t, s, "after", "ok")
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openDisk(t, dir)
			defer s.Close()
			if got := getString(t, s, "after"); got != "ok" {
				t.Fatalf("value written after recovery: %q", got)
			}
		})
	}
}

func getString(t *testing.T, s kv.Store, key string) string {
	t.Helper()
	v, err := kv.Get(context.Background(), s, []byte(key))
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return string(v)
}
