// Command engine is the memory that lets LLM browser agents learn across
// runs. This file wires flags to the library in engine/; it holds no memory
// logic of its own.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/engine-dev/engine/engine"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit statuses: the one table (README.md "Exit status").
const (
	exitOK          = 0   // the command did what it was asked
	exitFailed      = 1   // it failed (I/O, a plugin, a broken data dir, a check that failed)
	exitUsage       = 2   // it was called wrongly: bad flag or argument, unknown command, bad or missing input file
	exitNotFound    = 3   // an id memory does not hold (run, lesson, trajectory, planner history)
	exitInterrupted = 130 // interrupted (SIGINT or SIGTERM) before it finished
)

// Main runs the engine CLI and returns its exit status (exitCode).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "engine: %v\n", err)
	return exitCode(ctx, err)
}

// exitCode maps an error to the exit status, the one place that does.
func exitCode(ctx context.Context, err error) int {
	switch {
	case err == nil:
		return exitOK
	case ctx.Err() != nil:
		return exitInterrupted
	case errors.Is(err, engine.ErrInvalid):
		return exitUsage
	case errors.Is(err, engine.ErrNotFound):
		return exitNotFound
	}
	return exitFailed
}

// usagef returns bad input (exit status 2) with a formatted message.
func usagef(format string, args ...any) error {
	return engine.MarkInvalid(fmt.Errorf(format, args...))
}
