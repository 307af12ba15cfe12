//go:build !unix

package cli

import (
	"errors"
	"os"
	"os/exec"
)

// runAgent runs engine-agent with the same arguments and streams, and exits
// with its status (there is no exec(2) to hand the process over).
func runAgent(bin string, args []string, a *App) error {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.Stdin, a.Stdout, a.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		return err
	}
	os.Exit(0)
	return nil
}
