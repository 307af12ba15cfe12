package main

import (
	"context"
	"fmt"

	"path/filepath"
	"time"

	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/keyspace"
	"github.com/engine-dev/engine/kv"
)

// lockWait is how long a command waits for another engine process to
// release the data dir before it reports who holds it.
const lockWait = 2 * time.Second

// openDB opens the memory database in the data dir (<data-dir>/db) and
// checks its schema. Callers must Close it.
func (a *app) openDB(ctx context.Context) (kv.Store, error) {
	dir, err := a.resolveDataDir()
	if err != nil {
		return nil, err
	}
	s, err := kv.Open(ctx, filepath.Join(dir, "db"), kv.Options{LockTimeout: lockWait})
	if err != nil {
		return nil, err
	}
	if err := keyspace.Init(ctx, s); err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return s, nil
}

// events returns the sink for memory events: the --events file when given,
// else nothing. The returned close func reports a failed write.
func (a *app) events() (event.Func, func() error, error) {
	if a.eventsPath == "" {
		return nil, func() error { return nil }, nil
	}
	j, err := event.AppendFile(a.eventsPath)
	if err != nil {
		return nil, nil, err
	}
	return j.Write, j.Close, nil
}
