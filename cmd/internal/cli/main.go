// Package cli is the engine command line: flag parsing and output over the
// library in engine/, with no memory logic of its own. It is shared by two
// binaries: engine (this package's short memory commands: query, recall,
// lessons, import, ...) and engine-agent (the same, plus the agent loop, the
// plugins and the servers: run, demo, doctor, plugins, serve, mcp; package
// agentcmd). engine hands those commands to engine-agent, so a memory
// command does not pay, on every start, for libraries it never uses.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/server/service"
)

// Exit statuses: the one Table (README.md "Exit status").
const (
	exitOK          = 0   // the command did what it was asked
	exitFailed      = 1   // it failed (I/O, a plugin, a broken data dir, a check that failed)
	exitUsage       = 2   // it was called wrongly: bad flag or argument, unknown command, bad or missing input file
	exitNotFound    = 3   // an id memory does not hold (run, lesson, trajectory, planner history)
	exitCheck       = 4   // it ran, and a condition it was asked to fail on holds (eval --fail-if)
	exitInterrupted = 130 // interrupted (SIGINT or SIGTERM) before it finished
)

// CommandSet makes top-level commands over the App every command shares.
type CommandSet func(*App) []*cobra.Command

// Main runs the engine CLI with this package's commands and those of extra,
// and returns its exit status (exitCode). An agent command (run, demo,
// doctor, plugins) that extra does not provide is handed to engine-agent.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, extra ...CommandSet) int {
	a := &App{Stdin: stdin, Stdout: stdout, Stderr: stderr, args: args}
	root := a.rootCommand(extra)
	ctx, stop := interruptible(a.only != "", interruptDelay, nil)
	defer stop()

	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var silent *service.TimeoutError
	if errors.As(err, &silent) {
		// The whole story; what wraps it only repeats the request.
		err = fmt.Errorf("%w (stopped or overloaded? ENGINE_TIMEOUT sets how long to wait)", silent)
	}
	fmt.Fprintf(stderr, "engine: %v\n", err)
	return exitCode(ctx, err)
}

// interruptDelay is how long a memory command runs before it catches
// SIGINT and SIGTERM (see interruptible).
const interruptDelay = 50 * time.Millisecond

// interruptible returns the context a command runs in, cancelled by SIGINT
// or SIGTERM so that the command stops cleanly (exit status 130), and the
// func that ends it. Catching signals starts the runtime's signal loop and
// its signal-mask thread: ~6 % of the CPU of a short command (paired
// runs). So a memory command (one the command line names: recall, query,
// import, ...; short) catches them only once it has run for delay; before
// that a signal ends it as it ends any program — the data dir is made to
// survive a kill (an import's journal is rolled back on the next open),
// and a shell reports 130 for SIGINT (143 for SIGTERM). Any other command
// (serve, run, mcp, help) catches them from the start. armed, when set,
// is called once they are caught (for tests).
func interruptible(short bool, delay time.Duration, armed func()) (context.Context, func()) {
	if armed == nil {
		armed = func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	if !short {
		sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		armed()
		return sctx, func() { stop(); cancel() }
	}
	var (
		mu      sync.Mutex
		ended   bool
		unwatch = func() {}
	)
	t := time.AfterFunc(delay, func() {
		mu.Lock()
		defer mu.Unlock()
		if ended {
			return
		}
		sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		context.AfterFunc(sctx, cancel) // a signal cancels ctx
		unwatch = stop
		armed()
	})
	return ctx, func() {
		t.Stop()
		mu.Lock()
		ended = true
		unwatch()
		mu.Unlock()
		cancel()
	}
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
	case errors.Is(err, ErrCheck):
		return exitCheck
	}
	return exitFailed
}

// ErrCheck marks a command that ran and found a condition it was asked to
// fail on (exit status 4), told apart from a command that could not run.
var ErrCheck = errors.New("check failed")

// Usagef returns bad input (exit status 2) with a formatted message.
func Usagef(format string, args ...any) error {
	return engine.MarkInvalid(fmt.Errorf(format, args...))
}
