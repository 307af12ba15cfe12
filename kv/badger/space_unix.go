//go:build unix

package badger

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// freeSpace returns the bytes an unprivileged writer may still use on the
// file system of dir.
func freeSpace(dir string) (uint64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}

// allocated is the disk space fi's file takes: its allocated blocks, less
// than its size for the value log and memtable files badger preallocates
// sparse.
func allocated(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return fi.Size()
}
