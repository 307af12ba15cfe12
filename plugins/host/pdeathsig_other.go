//go:build !linux

package host

import "os/exec"

func setPdeathsig(*exec.Cmd) {}
