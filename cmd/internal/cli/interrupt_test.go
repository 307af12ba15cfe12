package cli

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// waitDone fails unless ctx is cancelled (by the signal just sent).
func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the signal did not cancel the command's context")
	}
}

// A command catches SIGINT and SIGTERM — a memory command once it has run
// for the delay — and its context is then cancelled (exit status 130).
func TestInterruptible(t *testing.T) {
	for _, tc := range []struct {
		name  string
		short bool
		sig   syscall.Signal
	}{{"serve", false, syscall.SIGINT}, {"recall", true, syscall.SIGINT}, {"import", true, syscall.SIGTERM}} {
		t.Run(tc.name, func(t *testing.T) {
			armed := make(chan struct{})
			ctx, stop := interruptible(tc.short, time.Millisecond, func() { close(armed) })
			defer stop()
			<-armed
			if ctx.Err() != nil {
				t.Fatal("cancelled before any signal")
			}
			if err := syscall.Kill(syscall.Getpid(), tc.sig); err != nil {
				t.Fatal(err)
			}
			waitDone(t, ctx)
			if got := exitCode(ctx, ctx.Err()); got != exitInterrupted {
				t.Errorf("exit status %d, want %d", got, exitInterrupted)
			}
		})
	}
}

// A memory command that ends before the delay never catches signals; its
// context ends with it.
func TestInterruptibleEndsBeforeTheDelay(t *testing.T) {
	ctx, stop := interruptible(true, time.Hour, func() { t.Error("signals caught before the delay") })
	if ctx.Err() != nil {
		t.Fatal("cancelled at the start")
	}
	stop()
	if ctx.Err() == nil {
		t.Error("the context outlived the command")
	}
}
