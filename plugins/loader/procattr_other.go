//go:build !linux

package loader

import (
	"os"
	"os/exec"
)

func setProcAttr(*exec.Cmd) {}

// killGroup kills the plugin process; elsewhere than Linux its children are
// not tracked.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); pid > 0 && err == nil {
		_ = p.Kill()
	}
}
