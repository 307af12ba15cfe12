package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/engine-dev/engine/engine/server/attach"
	"github.com/engine-dev/engine/engine/trust/redact"
)

// MemoryClient is how a command reaches memory: the HTTP API of whoever
// holds the data dir (engine/server/attach): a memory server, or this process.
type MemoryClient struct {
	*attach.Memory
	closeEvents func() error
}

// Close detaches and closes the --events file, reporting either failure.
func (c *MemoryClient) Close() error { return errors.Join(c.Memory.Close(), c.closeEvents()) }

// client attaches to the data dir's memory (or ENGINE_SERVER's, with
// ENGINE_TOKEN) with the clock (ENGINE_NOW) and the --events sink. A
// command opens the data dir itself only when no server holds it. Callers
// must Close it.
func (a *App) Client(ctx context.Context) (*MemoryClient, error) {
	opts, dir, err := a.AttachOptions("")
	if err != nil {
		return nil, err
	}
	emit, closeEvents, err := a.Events()
	if err != nil {
		return nil, err
	}
	opts.Events = emit
	m, err := attach.Open(ctx, dir, opts)
	if err != nil {
		closeEvents()
		return nil, err
	}
	return &MemoryClient{Memory: m, closeEvents: closeEvents}, nil
}

// withMemory attaches to memory (see Client), calls fn with it and
// detaches, reporting a failure to detach unless fn failed first. Every
// command that reads or writes memory goes through it once.
func (a *App) withMemory(ctx context.Context, fn func(*MemoryClient) error) (err error) {
	m, err := a.Client(ctx)
	if err != nil {
		return err
	}
	defer CloseInto(&err, m)
	return fn(m)
}

// AttachOptions are the options of attaching to memory: ENGINE_SERVER and
// ENGINE_TOKEN, else the data dir (dataDir, or the usual one when ""), the
// fixed clock of ENGINE_NOW, the redaction of ENGINE_KEEP_CONTACTS, the
// namespace (--namespace, ENGINE_NAMESPACE) and a server's response
// timeout (ENGINE_TIMEOUT); warnings go to stderr.
func (a *App) AttachOptions(dataDir string) (attach.Options, string, error) {
	var opts attach.Options
	now, err := a.Now()
	if err != nil {
		return opts, "", err
	}
	if os.Getenv("ENGINE_NOW") != "" {
		opts.Now, opts.Clock = now(), now
	}
	opts.Redact = RedactOptions()
	if opts.HistoryKeep, err = HistoryKeep(); err != nil {
		return opts, "", err
	}
	if opts.Namespace, err = a.Namespace(); err != nil {
		return opts, "", err
	}
	if opts.Timeout, err = Timeout(); err != nil {
		return opts, "", err
	}
	opts.Warn = func(msg string) { fmt.Fprintf(a.Stderr, "engine: warning: %s\n", msg) }
	opts.Server, opts.Token = os.Getenv("ENGINE_SERVER"), os.Getenv("ENGINE_TOKEN")
	if opts.Server != "" {
		return opts, "", nil
	}
	opts.OpenStore = a.StoreOpener()
	if dataDir == "" {
		if dataDir, err = a.ResolveDataDir(); err != nil {
			return opts, "", err
		}
	}
	return opts, dataDir, nil
}

// DefaultTimeout is how long a memory server may stay silent on a request
// before the command gives up on it (ENGINE_TIMEOUT changes it).
const DefaultTimeout = 30 * time.Second

// Timeout is ENGINE_TIMEOUT, a Go duration (5s, 2m): how long a memory
// server may stay silent on a request (attach.Options.Timeout); unset,
// DefaultTimeout.
func Timeout() (time.Duration, error) {
	v := os.Getenv("ENGINE_TIMEOUT")
	if v == "" {
		return DefaultTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, Usagef("ENGINE_TIMEOUT=%q: want a positive duration such as 30s or 2m", v)
	}
	return d, nil
}

// HistoryKeep is ENGINE_HISTORY_KEEP: how many past versions of each
// record the stores keep (0 when unset: their default, 20).
func HistoryKeep() (int, error) {
	v := os.Getenv("ENGINE_HISTORY_KEEP")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 10_000 {
		return 0, Usagef("ENGINE_HISTORY_KEEP=%q: want a number of versions from 1 to 10000", v)
	}
	return n, nil
}

// RedactOptions are the options of redacting what is written to memory:
// ENGINE_KEEP_CONTACTS=1 keeps emails and phone numbers.
func RedactOptions() redact.Options {
	return redact.Options{KeepContacts: os.Getenv("ENGINE_KEEP_CONTACTS") == "1"}
}
