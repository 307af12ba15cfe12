package loader

import (
	"os/exec"
	"syscall"
)

// setProcAttr starts the plugin as the leader of its own process group, so
// killGroup ends whatever the plugin started too (a script's children keep
// its stdout and stderr open, and go-plugin waits for those to close before
// it lets go of the plugin), and makes the kernel kill the plugin when the
// engine dies, so a crashed or killed engine leaves no plugin (and so no
// chromium) behind.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// killGroup sends SIGKILL to the process group the plugin leads.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
