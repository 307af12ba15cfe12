package host

import (
	"os/exec"
	"syscall"
)

// setPdeathsig makes the kernel kill the plugin when the engine dies, so a
// crashed or killed engine leaves no plugin (and so no chromium) behind.
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
