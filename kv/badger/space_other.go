//go:build !unix

package badger

import "os"

// freeSpace is not known here: writes are not guarded.
func freeSpace(string) (uint64, bool) { return 0, false }

// allocated is fi's size: its allocated blocks are not known here.
func allocated(fi os.FileInfo) int64 { return fi.Size() }
