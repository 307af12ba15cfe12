package main

import (
	"context"
	"errors"
	"io"

	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory"
)

// openDB opens the data dir's memory (<data-dir>/db): its lock, its schema
// and the seed lessons (memory.Open). Callers must Close it.
func (a *app) openDB(ctx context.Context, opts memory.Options) (*memory.Memory, error) {
	dir, err := a.resolveDataDir()
	if err != nil {
		return nil, err
	}
	return memory.Open(ctx, dir, opts)
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

// memoryDB is the open data dir's memory with the clock (ENGINE_NOW) and
// the --events sink that every memory command needs.
type memoryDB struct {
	*memory.Memory
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
	m, err := a.openDB(ctx, memory.Options{Now: now, Events: emit})
	if err != nil {
		closeEvents()
		return nil, err
	}
	return &memoryDB{Memory: m, closeEvents: closeEvents}, nil
}

// Close closes the database and the events file, reporting either failure.
func (m *memoryDB) Close() error { return errors.Join(m.Memory.Close(), m.closeEvents()) }

// closeInto closes c and joins its error into *err: deferred in commands so
// a failed close (an --events file that could not be written) is reported,
// not dropped.
func closeInto(err *error, c io.Closer) { *err = errors.Join(*err, c.Close()) }
