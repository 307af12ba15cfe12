package main

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/service"
	"github.com/engine-dev/engine/kv"
)

// memoryClient is how a command reaches memory: the HTTP API (package
// api), served by the memory server that holds the data dir when there is
// one, else in this process over the memory the command opened (api.Local).
// Either way the command sends the same requests to the same handlers.
type memoryClient struct {
	*api.Client
	close func() error
}

// Close ends the client and closes what it opened, reporting any failure
// (an --events file that could not be written among them).
func (c *memoryClient) Close() error { return c.close() }

// client returns an API client of the data dir's memory whose requests
// report their memory events to the --events sink and carry the fixed
// clock (ENGINE_NOW). In order: ENGINE_SERVER (a remote server, with
// ENGINE_TOKEN); the server on the data dir's socket; the data dir opened
// here. Callers must Close it.
func (a *app) client(ctx context.Context) (*memoryClient, error) {
	now, err := a.now()
	if err != nil {
		return nil, err
	}
	emit, closeEvents, err := a.events()
	if err != nil {
		return nil, err
	}
	opts := api.ClientOptions{Events: emit}
	if os.Getenv("ENGINE_NOW") != "" {
		opts.Now = now()
	}
	c, err := a.dial(ctx, opts, now)
	if err != nil {
		closeEvents()
		return nil, err
	}
	close := c.close
	c.close = func() error { return errors.Join(close(), closeEvents()) }
	return c, nil
}

// dial finds the memory: a remote server, the data dir's server, or the
// data dir itself.
func (a *app) dial(ctx context.Context, opts api.ClientOptions, now func() time.Time) (*memoryClient, error) {
	if url := os.Getenv("ENGINE_SERVER"); url != "" {
		sc, err := service.DialRemote(url, os.Getenv("ENGINE_TOKEN"))
		if err != nil {
			return nil, err
		}
		return served(sc, opts), nil
	}
	dir, err := a.resolveDataDir()
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		sc, err := service.Dial(ctx, dir)
		if err == nil {
			return served(sc, opts), nil
		}
		if !errors.Is(err, service.ErrNotServed) {
			return nil, err
		}
		m, err := memory.Open(ctx, dir, memory.Options{Now: now})
		var locked *kv.LockedError
		if errors.As(err, &locked) && attempt == 0 {
			continue // a server may have taken the data dir since: look again
		}
		if err != nil {
			return nil, err
		}
		local := api.Local(api.Handler(m, api.Options{AllowClock: true}), opts)
		return &memoryClient{Client: local.Client, close: func() error {
			return errors.Join(local.Close(), m.Close())
		}}, nil
	}
}

// served is a client of a memory server.
func served(sc *service.Client, opts api.ClientOptions) *memoryClient {
	return &memoryClient{Client: api.NewClient(sc.HTTP, sc.BaseURL, opts), close: func() error {
		sc.CloseIdleConnections()
		return nil
	}}
}
