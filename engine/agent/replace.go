package agent

import (
	"errors"
	"os"
	"syscall"
)

// replacer rewrites one file whole, again and again (manifest.json, every
// step), so that a reader of it sees one whole version or the next. Each
// version is written to a spare file beside it (path + ".tmp") and then
// takes the file's name in one rename. Where the system can swap two
// names in one step (Linux's renameat2 RENAME_EXCHANGE), the spare then
// holds the version before, and the next is written over it: no file is
// created or deleted per version, which on ext4 costs far more than the
// write itself. Elsewhere each version is a new file renamed over the
// last. A reader that keeps the file open while two more versions are
// written sees the second one being written over what it reads; one that
// reads it whole (os.ReadFile) does not.
type replacer struct {
	path string
	// spare: path + ".tmp" holds an older version (after a swap);
	// noSwap: swapping failed here for want of support.
	spare, noSwap bool
}

// write makes b the file's contents. An error leaves the file as it was.
func (r *replacer) write(b []byte) error {
	tmp := r.path + ".tmp"
	if !r.spare || overwrite(tmp, b) != nil {
		r.spare = false
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return err
		}
	}
	if !r.noSwap {
		err := swapFiles(tmp, r.path)
		if err == nil {
			r.spare = true
			return nil
		}
		if unsupported(err) {
			r.noSwap = true
		}
		// Else the file is not there yet (the first version): renamed.
	}
	r.spare = false
	return os.Rename(tmp, r.path)
}

// close removes the spare: the file alone remains, as after a rename.
func (r *replacer) close() {
	if r.spare {
		_ = os.Remove(r.path + ".tmp")
		r.spare = false
	}
}

// overwrite writes b over the file at path (which must exist) and cuts
// it to len(b).
func overwrite(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(b, 0)
	if err == nil {
		err = f.Truncate(int64(len(b)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// unsupported reports whether err says the system or file system cannot
// swap two names.
func unsupported(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS)
}
