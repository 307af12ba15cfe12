package main

import (
	"context"
	"errors"
	"fmt"
	"io"

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

// memoryDB is the open data dir with the clock and the --events sink that
// every memory command needs.
type memoryDB struct {
	db          kv.Store
	now         func() time.Time
	emit        event.Func
	closeEvents func() error
}

// openMemory opens the data dir (openDB) with the clock (ENGINE_NOW) and the
// --events sink. Callers must Close it.
func (a *app) openMemory(ctx context.Context) (*memoryDB, error) {
	now, err := a.now()
	if err != nil {
		return nil, err
	}
	emit, closeEvents, err := a.events()
	if err != nil {
		return nil, err
	}
	db, err := a.openDB(ctx)
	if err != nil {
		closeEvents()
		return nil, err
	}
	return &memoryDB{db: db, now: now, emit: emit, closeEvents: closeEvents}, nil
}

// Close closes the database and the events file, reporting either failure.
func (m *memoryDB) Close() error { return errors.Join(m.db.Close(), m.closeEvents()) }

// closeInto closes c and joins its error into *err: deferred in commands so
// a failed close (an --events file that could not be written) is reported,
// not dropped.
func closeInto(err *error, c io.Closer) { *err = errors.Join(*err, c.Close()) }
