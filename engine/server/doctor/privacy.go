package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// loose are the permission bits the data dir's entries must not have: a
// data dir holds prompts, screenshots and what agents learned, for its
// owner alone (the engine makes dirs 0700 and files 0600).
const loose fs.FileMode = 0o077

// Privacy reports the entries of the data dir dir that others may read or
// write (group or other permission bits), walking it without following
// links. It reads only modes, and runs before anything opens the store
// (which tightens the store's own files as it opens).
func Privacy(dir string) Check {
	c := Check{Name: "private", Status: OK, Detail: "only the owner can read the data dir"}
	n, first, err := walkLoose(dir, false)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Detail = "no data dir"
	case err != nil:
		c.Status, c.Detail = Warn, err.Error()
	case n > 0:
		c.Status = Warn
		what := fmt.Sprintf("%d files or folders", n)
		if n == 1 {
			what = "1 file or folder"
		}
		c.Detail = fmt.Sprintf("%s others can read or write (%s): engine doctor --repair makes them the owner's alone", what, first)
	}
	return c
}

// MakePrivate removes the group and other bits from every entry of the
// data dir dir (links are left alone, never followed) and returns how
// many it changed.
func MakePrivate(dir string) (int, error) {
	n, _, err := walkLoose(dir, true)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	return n, err
}

// walkLoose counts dir's entries with loose bits, naming the first; with
// fix, it tightens each.
func walkLoose(dir string, fix bool) (n int, first string, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path != dir {
				return nil // gone meanwhile (a compaction)
			}
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil // gone meanwhile
		}
		perm := fi.Mode().Perm()
		if perm&loose == 0 {
			return nil
		}
		n++
		if first == "" {
			rel, _ := filepath.Rel(dir, path)
			first = fmt.Sprintf("%s is %04o", rel, perm)
		}
		if fix {
			if err := os.Chmod(path, perm&^loose); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("make %s private: %w", path, err)
			}
		}
		return nil
	})
	return n, first, err
}
