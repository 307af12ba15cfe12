package memory_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/lesson"
)

// checkPrivate fails t for every directory under root that is not 0700
// and every file that is not 0600; it returns how many files it saw.
func checkPrivate(t *testing.T, root string) int {
	t.Helper()
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		} else {
			files++
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func writeLessons(t *testing.T, m *memory.Memory, n int) {
	t.Helper()
	for i := range n {
		l := lesson.Lesson{Lesson: fmt.Sprintf("Close the chat widget %d before clicking Checkout.", i), Category: lesson.SiteSpecific, Domain: "shop.example"}
		if _, _, err := m.Lessons.Record(context.Background(), l, ""); err != nil {
			t.Fatal(err)
		}
	}
}

// A fresh data dir admits no other user: the dir and db/ are 0700 and
// every file badger made (tables, value log, memtable, manifest, lock)
// is 0600, both while open and after close, whatever the umask.
func TestDataDirIsPrivate(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	writeLessons(t, m, 50)
	checkPrivate(t, dir)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if n := checkPrivate(t, dir); n < 3 {
		t.Fatalf("the data dir holds %d files; want badger's", n)
	}
}

// A data dir an older engine left readable (dir, db/ and runs/ 0755,
// files 0644) is tightened by the next read-write open.
func TestOpenTightensAnOldDataDir(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	writeLessons(t, m, 5)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err = memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	checkPrivate(t, dir)
}
