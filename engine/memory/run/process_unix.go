//go:build unix

package run

import (
	"errors"
	"syscall"
)

// signalAlive asks the kernel whether pid exists (signal 0).
func signalAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
