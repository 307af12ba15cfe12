package agent

import "golang.org/x/sys/unix"

// swapFiles swaps the names a and b, both of which must exist, in one
// step.
func swapFiles(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
