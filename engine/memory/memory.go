// Package memory is the one aggregate that opens a data dir's memory: the
// store, its schema check, the seed lessons, and every memory store over it
// (lessons, facts, selectors, trajectories, sessions, runs, plans) plus the
// builder of the per-step memory context.
//
// The CLI, the memory server, the agent loop and the tests all start from
// Open (a data dir) or New (a kv.Store they already hold), so the wiring of
// stores, clock and event sink exists once.
package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/engine/memory/plan"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/session"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger"
)

// DefaultLockWait is how long Open waits for another process to release the
// data dir before it reports who holds it.
const DefaultLockWait = 2 * time.Second

// Options configure a Memory.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Events receives the stores' memory events; nil drops them.
	Events event.Func
	// LockWait is how long Open waits for another process holding the data
	// dir (0: DefaultLockWait; negative: not at all).
	LockWait time.Duration
	// ReadOnly opens an existing store without writing: no schema stamp,
	// no seeds (Open fails when there is no store yet).
	ReadOnly bool
	// OpenStore, when set, opens the store Open uses instead of the data
	// dir's badger database: a store several processes share (etcd), so
	// the data dir is not locked (run folders still live in it). Close
	// closes the store.
	OpenStore StoreOpener
	// SettledOnly makes a read-only open fail with ErrOpenDue unless the
	// store is settled — schema current, seeds in — so that reading it
	// read-only answers what a read-write open would.
	SettledOnly bool
	// SettledNamespace, with SettledOnly, names a namespace whose seeds
	// must be in as well: the one the process's requests will use (a
	// read-only memory cannot seed a namespace on its first use).
	SettledNamespace string
	// Weighted ranks trajectory matches by the weighted blend
	// (trajectory.Options.Weighted).
	Weighted bool
	// TrajectoryMaxAge is the oldest a trajectory may be to match
	// (trajectory.Options.MaxAge; zero: its TTL).
	TrajectoryMaxAge time.Duration
	// HistoryKeep is how many past versions of each record every store
	// keeps (engine/memory/history); zero means the default (20).
	HistoryKeep int
	// Provenance is who writes through this memory (a run, a person, a
	// program): every store stamps it on the records it writes. Its zero
	// value is a program over the API (engine.SourceAPI).
	Provenance engine.Provenance

	// unindexed: a read-only open of a store whose schema is older (or
	// whose migration is unfinished), so lesson lists scan.
	unindexed bool
}

// StoreOpener opens a store several processes share (etcd), in place of
// the data dir's own database (Options.OpenStore).
type StoreOpener func(ctx context.Context) (kv.Store, error)

// SharedOpener opens a shared store from its URL (etcd://HOST:PORT,...):
// engine-agent's (engine/memory/sharedstore), which links etcd's client;
// the engine binary has none and hands such commands to engine-agent.
type SharedOpener func(ctx context.Context, url string) (kv.Store, error)

// At is the StoreOpener of the shared store at url.
func (o SharedOpener) At(url string) StoreOpener {
	return func(ctx context.Context) (kv.Store, error) { return o(ctx, url) }
}

// LockedError is Open's error when another process holds the data dir
// (and did not release it within LockWait): it names the holder.
type LockedError = badger.LockedError

// ErrReplayDue is a read-only open (Inspect, Options.ReadOnly) of a data
// dir whose database was not closed cleanly: the next read-write open
// replays its log.
var ErrReplayDue = badger.ErrReplayDue

// ErrOpenDue is a read-only open (Options.ReadOnly with SettledOnly)
// refused because a read-write open would write on opening: a schema to
// stamp or migrate, or seed lessons to write.
var ErrOpenDue = errors.New("memory: a read-write open has work due (schema or seeds)")

// Memory is every memory store over one kv.Store.
type Memory struct {
	db    kv.Store
	owned bool // Close closes db
	opts  Options
	// root is the whole store (db is a view of it in a named namespace);
	// ns is the namespace ("" the default); spaces is shared by every
	// memory derived from one New.
	root   kv.Store
	ns     string
	spaces *namespaces

	Lessons      *lesson.Store
	Facts        *fact.Store
	Selectors    *selector.Store
	Trajectories *trajectory.Store
	Sessions     *session.Store
	Runs         *run.Store
	Plans        *plan.Store
}

// Dir is where a data dir keeps its database.
func Dir(dataDir string) string { return filepath.Join(dataDir, "db") }

// Open opens the memory in dataDir (its database is <dataDir>/db): it takes
// the data dir's lock (waiting up to LockWait for another process), checks
// the schema (stamping a new store, migrating an older one: see migrate)
// and writes the seed lessons once. The caller must Close it.
func Open(ctx context.Context, dataDir string, opts Options) (*Memory, error) {
	wait := opts.LockWait
	switch {
	case wait == 0:
		wait = DefaultLockWait
	case wait < 0:
		wait = 0
	}
	var db kv.Store
	var err error
	if opts.OpenStore != nil {
		// The data dir still holds run folders and the memory server's
		// socket: make it as badger.Open would.
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, fmt.Errorf("memory: data dir: %w", err)
		}
		db, err = opts.OpenStore(ctx)
	} else {
		db, err = badger.Open(ctx, Dir(dataDir), badger.Options{LockTimeout: wait, ReadOnly: opts.ReadOnly})
	}
	if err != nil {
		return nil, err
	}
	if !opts.ReadOnly {
		if err := privateDirs(dataDir); err != nil {
			db.Close()
			return nil, fmt.Errorf("memory: data dir: %w", err)
		}
	}
	if opts.ReadOnly {
		var current bool
		current, err = keyspace.Check(ctx, db)
		opts.unindexed = !current
		if err == nil && opts.SettledOnly {
			err = settled(ctx, db, current, opts.SettledNamespace)
		}
	} else {
		err = keyspace.Init(ctx, db)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", dataDir, err)
	}
	m := New(db, opts)
	m.owned = true
	if !opts.ReadOnly {
		if err := m.migrate(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s: %w", dataDir, err)
		}
		if err := m.Lessons.Seed(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s: %w", dataDir, err)
		}
	}
	return m, nil
}

// privateDirs tightens the data dir and its run folders' parents (runs/,
// ns/) to 0700 when an older engine made them looser: the dir then admits
// no other user to any file under it. New files are made private where
// they are written (badger's by kv/badger, a run's by the agent).
func privateDirs(dataDir string) error {
	for _, d := range []string{dataDir, filepath.Join(dataDir, "runs"), filepath.Join(dataDir, "ns")} {
		fi, err := os.Lstat(d)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(d, fi.Mode().Perm()&0o700); err != nil {
			return err
		}
	}
	return nil
}

// settled returns ErrOpenDue unless the schema is current and the seeds
// are in, in the default namespace and in ns (when named): what a
// read-write open, or a namespace's first use, would otherwise write.
func settled(ctx context.Context, db kv.Store, current bool, ns string) error {
	if !current {
		return ErrOpenDue
	}
	stores := []kv.Store{db}
	if ns != "" && ns != DefaultNamespace {
		if err := CheckNamespace(ns); err != nil {
			return err
		}
		stores = append(stores, kv.Prefixed(db, keyspace.Namespace(ns)))
	}
	for _, s := range stores {
		_, err := kv.Get(ctx, s, keyspace.Seeded())
		if errors.Is(err, kv.ErrNotFound) {
			return ErrOpenDue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// migrate finishes a migration keyspace.Init started (see
// engine/memory/keyspace/schema.go): for a store from schema 1 it builds the
// lesson list indexes, then clears the marker. Every step is idempotent, so
// a crash part way is repaired by the next open, which runs it again; the
// store already says schema 2, so an older engine does not write it
// meanwhile.
//
// A read-only open of such a store cannot migrate it: its lesson lists
// fall back to reading every lesson (lesson.Options.Unindexed), which is
// correct, only slower.
func (m *Memory) migrate(ctx context.Context) error {
	from, err := keyspace.Pending(ctx, m.db)
	if err != nil || from == 0 {
		return err
	}
	if from < 2 {
		if _, err := m.Lessons.BuildListIndex(ctx); err != nil {
			return fmt.Errorf("migrate schema %d → %d: %w", from, keyspace.SchemaVersion, err)
		}
	}
	if err := keyspace.Migrated(ctx, m.db); err != nil {
		return fmt.Errorf("migrate schema %d → %d: %w", from, keyspace.SchemaVersion, err)
	}
	return nil
}

// New returns every store over db, which the caller keeps: Close does not
// close it. It neither checks the schema nor seeds.
func New(db kv.Store, opts Options) *Memory {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Provenance.Source == "" {
		opts.Provenance.Source = engine.SourceAPI
	}
	m := newOver(db, opts)
	m.root, m.spaces = db, &namespaces{ready: map[string]bool{}, known: map[string]bool{}}
	return m
}

// derive is the same memory (store, namespace) with other options.
func (m *Memory) derive(opts Options) *Memory {
	d := newOver(m.db, opts)
	d.root, d.ns, d.spaces = m.root, m.ns, m.spaces
	return d
}

// newOver builds the stores over db.
func newOver(db kv.Store, opts Options) *Memory {
	now, ev, pv, hk := opts.Now, opts.Events, opts.Provenance, opts.HistoryKeep
	return &Memory{
		db: db, opts: opts,
		Lessons:      lesson.New(db, lesson.Options{Now: now, Events: ev, Provenance: pv, Unindexed: opts.unindexed, HistoryKeep: hk}),
		Facts:        fact.New(db, fact.Options{Now: now, Events: ev, Provenance: pv, HistoryKeep: hk}),
		Selectors:    selector.New(db, selector.Options{Now: now, Events: ev, Provenance: pv, HistoryKeep: hk}),
		Trajectories: trajectory.New(db, trajectory.Options{Now: now, Events: ev, Provenance: pv, Weighted: opts.Weighted, MaxAge: opts.TrajectoryMaxAge, HistoryKeep: hk}),
		Sessions:     session.New(db, session.Options{Now: now, Events: ev, Provenance: pv}),
		Runs:         run.New(db, run.Options{Now: now, Events: ev}),
		Plans:        plan.New(db, plan.Options{Now: now, Events: ev}),
	}
}

// With returns the same memory (same store, nothing reopened) whose stores
// send their events to events: one request's or one run's own sink.
// Closing it does not close the store.
func (m *Memory) With(events event.Func) *Memory {
	opts := m.opts
	opts.Events = events
	return m.derive(opts)
}

// WithProvenance returns the same memory whose stores stamp p on the
// records they write (p.Source "" is engine.SourceAPI).
func (m *Memory) WithProvenance(p engine.Provenance) *Memory {
	opts := m.opts
	opts.Provenance = p
	return m.derive(opts)
}

// Provenance is who writes through this memory.
func (m *Memory) Provenance() engine.Provenance { return m.opts.Provenance }

// WithClock is With for the clock.
func (m *Memory) WithClock(now func() time.Time) *Memory {
	opts := m.opts
	opts.Now = now
	return m.derive(opts)
}

// Traced returns the same memory with trajectory matches ranked the way a
// run's --trace-scoring and --trace-ttl-days ask: weighted or by
// similarity, and no older than maxAge (zero: the store's TTL). A run and
// `engine query context` and `engine query trajectories` pass through it,
// so all pick the same reference trajectory.
func (m *Memory) Traced(weighted bool, maxAge time.Duration) *Memory {
	if m.opts.Weighted == weighted && m.opts.TrajectoryMaxAge == maxAge {
		return m
	}
	opts := m.opts
	opts.Weighted, opts.TrajectoryMaxAge = weighted, maxAge
	return m.derive(opts)
}

// DB is the store under the memory.
func (m *Memory) DB() kv.Store { return m.db }

// HistoryKeep is how many past versions of each record the stores keep
// (Options.HistoryKeep; zero: their default).
func (m *Memory) HistoryKeep() int { return m.opts.HistoryKeep }

// Now is the memory's clock.
func (m *Memory) Now() time.Time { return m.opts.Now() }

// Clock is the memory's clock as a function.
func (m *Memory) Clock() func() time.Time { return m.opts.Now }

// Events is the memory's event sink (nil: none).
func (m *Memory) Events() event.Func { return m.opts.Events }

// Context returns the builder of the per-step memory context over these
// stores. opts.Events defaults to the memory's sink.
func (m *Memory) Context(opts memctx.Options) *memctx.Builder {
	if opts.Events == nil {
		opts.Events = m.opts.Events
	}
	return memctx.New(memctx.Sources{
		Sessions:     m.Sessions,
		Trajectories: m.Trajectories,
		Facts:        m.Facts,
		Selectors:    m.Selectors,
		Lessons:      m.Lessons,
	}, opts)
}

// Close closes the store when Open opened it.
func (m *Memory) Close() error {
	if !m.owned {
		return nil
	}
	return m.db.Close()
}

// StoreSize is the bytes the whole store (every namespace) takes on disk;
// ok is false for a store that cannot tell (in memory, or etcd, which
// reports its own size).
func (m *Memory) StoreSize() (bytes int64, ok bool) { return kv.DiskSize(m.root) }

// Settle waits until no compaction is due in the store (a badger tree has
// merged the level-0 tables a bulk write left; kv.Settle), or ctx ends,
// with ctx's error. A server calls it before it answers; nothing written
// depends on it.
func (m *Memory) Settle(ctx context.Context) error { return kv.Settle(ctx, m.root) }

// RecallIndexStats counts the recall index's compiles and folds in this
// process so far (lesson.ReadIndexStats), for a server's metrics.
func RecallIndexStats() lesson.IndexStats { return lesson.ReadIndexStats() }
