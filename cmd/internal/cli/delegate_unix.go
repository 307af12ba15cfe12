//go:build unix

package cli

import (
	"fmt"
	"os"
	"syscall"
)

// runAgent replaces this process with engine-agent and the same arguments.
func runAgent(bin string, args []string, _ *App) error {
	err := syscall.Exec(bin, append([]string{AgentBinary}, args...), os.Environ())
	return fmt.Errorf("starting %s: %w", bin, err)
}
