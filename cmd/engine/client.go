package main

import (
	"context"
	"errors"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
)

// memoryClient is how a command reaches memory: through the HTTP API (package
// api), here served in this process over the memory it opened (api.Local),
// so a command sends exactly the requests it would send a memory server.
type memoryClient struct {
	*api.Client
	close func() error
}

// Close ends the client and closes what it opened, reporting any failure
// (an --events file that could not be written among them).
func (c *memoryClient) Close() error { return c.close() }

// client opens the data dir's memory with the clock (ENGINE_NOW) and
// returns an API client of it whose requests report their memory events to
// the --events sink. Callers must Close it.
func (a *app) client(ctx context.Context) (*memoryClient, error) {
	now, err := a.now()
	if err != nil {
		return nil, err
	}
	emit, closeEvents, err := a.events()
	if err != nil {
		return nil, err
	}
	m, err := a.openDB(ctx, memory.Options{Now: now})
	if err != nil {
		closeEvents()
		return nil, err
	}
	local := api.Local(api.Handler(m, api.Options{}), api.ClientOptions{Events: emit})
	return &memoryClient{Client: local.Client, close: func() error {
		return errors.Join(local.Close(), m.Close(), closeEvents())
	}}, nil
}
