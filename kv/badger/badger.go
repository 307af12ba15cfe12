// Package badger is the kv.Store on a badger database in a data dir (or in
// memory, for tests): the directory lock that keeps a second process out,
// the clean-up of what a kill leaves, the free-space guard, value-log GC and
// badger's logger. Everything badger-specific lives here; kv holds the
// interface and its contract, which kvtest.Run checks this store against.
package badger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	badgerdb "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"

	"github.com/engine-dev/engine/kv"
)

// Options configure Open.
type Options struct {
	// LockTimeout is how long Open waits for another process to release the
	// data dir before it gives up with a *LockedError. Zero means fail at once.
	LockTimeout time.Duration
	// Logger receives badger's warnings and errors; nil discards them.
	Logger *slog.Logger
	// GCInterval runs value-log garbage collection this often while the store
	// is open; zero means every 5 minutes, negative disables it.
	GCInterval time.Duration
	// ReadOnly opens an existing store without writing to it (no value-log
	// rotation, no GC; writes fail). It fails for a store that was not
	// closed cleanly, whose log has to be replayed by a read-write open.
	ReadOnly bool
	// MinFree is the free space the store's disk must have for a write to
	// be attempted; below it writes fail with ErrNoSpace. Zero means
	// DefaultMinFree, negative turns the check off.
	MinFree int64
}

// memTableSize is the write buffer's size, and so level 0's tables' (a
// variable for the tests, which fill levels with less).
var memTableSize int64 = 16 << 20

// ErrReplayDue is a read-only open of a store that was not closed cleanly
// (its holder was killed): its write-ahead log is replayed by the next
// read-write open, which loses nothing committed; until then a read-only
// open cannot read it.
var ErrReplayDue = errors.New("the store was not closed cleanly (its last holder was killed): the next read-write open replays its log, losing nothing committed")

// maxConflictRetries bounds how often Update re-runs a conflicting
// transaction before it gives up.
const maxConflictRetries = 100

type store struct {
	db  *badgerdb.DB
	dir string // "" in memory
	// dirID is dir as opened: Close tells it was deleted or replaced.
	dirID os.FileInfo
	lock  *dirLock // nil in memory
	space spaceGuard
	// maxValue is the largest value taken, 0 for any: badger's in-memory
	// mode has no value log and panics on a value it would put there.
	maxValue int

	watch *watches // kv.Watcher's copies

	stopGC   chan struct{}
	gcDone   sync.WaitGroup
	isClosed atomic.Bool
	closed   sync.Once
	readOnly bool
}

// Open opens (creating if needed) the store in dir. It holds an exclusive
// lock on dir until Close: a second process gets a *LockedError that names
// the holder.
func Open(ctx context.Context, dir string, opts Options) (kv.Store, error) {
	lock, err := acquireDirLock(ctx, dir, opts.LockTimeout)
	if err != nil {
		return nil, err
	}
	// A read-only open writes nothing: an empty file a kill left makes it
	// fail, and the read-write open its caller then makes removes it.
	if !opts.ReadOnly {
		if err := removeHalfCreatedFiles(dir); err != nil {
			lock.release()
			return nil, err
		}
	}
	bopts := badgerdb.DefaultOptions(dir).
		WithLogger(badgerLogger{opts.Logger}).
		WithMemTableSize(memTableSize).
		// badger's own threshold (1 MiB), lowered only for the tests'
		// small write buffers, whose batches cannot hold it.
		WithValueThreshold(min(1<<20, memTableSize/8)).
		WithValueLogFileSize(64 << 20).
		// Uncompressed tables are read straight from the mmap: no
		// decompression and no block cache on the read path.
		WithCompression(options.None).
		WithBlockCacheSize(0).
		// Every open, a short command's too, opens every table (mmap,
		// index checksum, first and last key) and closes it again, so an
		// open costs the store's number of tables. Tables of 16 MiB (as
		// L0's, the memtable's size; badger's default is 2 MiB) in a base
		// level of 32 MiB, with 16 KiB blocks (a quarter of the index to
		// read), make a 100,000-lesson store 7–9 tables instead of 52–66,
		// and a short command on it cost about 1.15× one on 1,000 lessons
		// instead of 1.7×. Measured with them too (paired runs): an import
		// of 100k lessons peaks at 379 MiB (median; was 416) for the same
		// CPU, and 60,000 small writes on that store spend 30% less CPU
		// compacting at a 5–9% higher peak. A 64 MiB base level raised
		// the import's peak by 12%; 8 MiB tables left 13–15 tables. Tables
		// written before keep their size until a compaction rewrites them;
		// any block size reads back.
		WithBaseTableSize(16 << 20).
		WithBaseLevelSize(32 << 20).
		WithBlockSize(16 << 10).
		WithNumCompactors(2)
	if opts.ReadOnly {
		bopts = bopts.WithReadOnly(true)
		opts.GCInterval = -1
	}
	db, err := badgerdb.Open(bopts)
	if err != nil {
		lock.release()
		if strings.Contains(err.Error(), "Another process is using this Badger database") ||
			strings.Contains(err.Error(), "Cannot acquire directory lock") {
			return nil, &LockedError{Dir: dir}
		}
		if opts.ReadOnly && strings.Contains(err.Error(), badgerdb.ErrTruncateNeeded.Error()) {
			return nil, fmt.Errorf("kv: open %s: %w", dir, ErrReplayDue)
		}
		return nil, fmt.Errorf("kv: open %s: %w", dir, err)
	}
	s := &store{db: db, dir: dir, lock: lock, stopGC: make(chan struct{}), watch: newWatches(db, 0), readOnly: opts.ReadOnly}
	s.dirID, _ = os.Stat(dir)
	if !opts.ReadOnly {
		s.space = newSpaceGuard(dir, opts.MinFree)
		if err := Private(dir); err != nil {
			db.Close()
			lock.release()
			return nil, fmt.Errorf("kv: open %s: %w", dir, err)
		}
	}
	// Finish an atomic write (Apply) that a crash interrupted.
	if _, err := kv.Recover(ctx, s); err != nil {
		db.Close()
		lock.release()
		return nil, fmt.Errorf("kv: open %s: %w", dir, err)
	}
	if opts.GCInterval >= 0 {
		every := opts.GCInterval
		if every == 0 {
			every = 5 * time.Minute
		}
		s.gcDone.Add(1)
		go s.gcLoop(every)
	}
	return s, nil
}

// MaxMemoryValue is the largest value OpenMemory's store takes: badger
// puts a value of 1 MiB or more in its value log, which its in-memory mode
// does not have (it panics), so a larger value is refused with an error.
const MaxMemoryValue = 1<<20 - 1

// OpenMemory opens a store that lives in memory only, for tests. It takes
// values of up to MaxMemoryValue bytes.
func OpenMemory() (kv.Store, error) {
	bopts := badgerdb.DefaultOptions("").WithInMemory(true).WithLogger(nil)
	db, err := badgerdb.Open(bopts)
	if err != nil {
		return nil, fmt.Errorf("kv: open in memory: %w", err)
	}
	return &store{db: db, stopGC: make(chan struct{}), watch: newWatches(db, 0), maxValue: int(min(bopts.ValueThreshold, MaxMemoryValue+1)) - 1}, nil
}

// checkValue refuses a value too large for the store.
func (s *store) checkValue(op string, key, value []byte) error {
	if s.maxValue > 0 && len(value) > s.maxValue {
		return fmt.Errorf("kv: %s %s: a value of %d bytes is more than the in-memory store takes (%d)", op, kv.Short(key), len(value), s.maxValue)
	}
	return nil
}

func (s *store) gcLoop(every time.Duration) {
	defer s.gcDone.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stopGC:
			return
		case <-t.C:
			for s.db.RunValueLogGC(0.5) == nil {
			}
			// Tables and logs made since the last tick become private
			// (the directory, 0700, admits no one else meanwhile).
			if s.dir != "" {
				_ = Private(s.dir)
			}
		}
	}
}

// Exclusive reports that this process holds the store alone (the
// directory lock, or memory only), so it may roll back an interrupted
// Apply in any of its namespaces (kv.Exclusive).
func (s *store) Exclusive() bool { return true }

// DiskSize is the disk space the regular files in the store's directory
// take (its tables, value logs, memtables and manifest: allocated blocks,
// not the sizes of files badger preallocates), read at each call
// (kv.Sizer).
func (s *store) DiskSize() (int64, bool) {
	if s.dir == "" {
		return 0, false
	}
	des, err := os.ReadDir(s.dir)
	if err != nil {
		return 0, false
	}
	var n int64
	for _, de := range des {
		if !de.Type().IsRegular() {
			continue
		}
		if fi, err := de.Info(); err == nil {
			n += allocated(fi)
		}
	}
	return n, true
}

// Settle waits until no level of the store's tree is due a compaction
// (badger's score below 1 for every level: level 0 holds fewer tables than
// compaction starts at, and each level below is within its target size),
// so a bulk write leaves a tree that serves reads and writes at full speed
// (kv.Settler). Badger announces no event for it: Settle reads the levels'
// state every settlePoll, a few µs each.
func (s *store) Settle(ctx context.Context) error {
	if err := s.ready(ctx, "settle"); err != nil {
		return err
	}
	if s.readOnly {
		return nil
	}
	tick := time.NewTicker(settlePoll)
	defer tick.Stop()
	for {
		if settled(s.db.Levels()) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kv: settle: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// settlePoll is how often Settle looks at the tree.
const settlePoll = 10 * time.Millisecond

// settled reports whether no level is due a compaction.
func settled(levels []badgerdb.LevelInfo) bool {
	for _, l := range levels {
		if l.Score >= 1 {
			return false
		}
	}
	return true
}

// Close stops GC, closes badger and releases the lock. Calls in flight
// must have returned: Close does not wait for them. A store whose
// directory was deleted (or replaced) while open is left unclosed with an
// error: badger's close would retry writing its memtable there forever.
func (s *store) Close() error {
	var err error
	s.closed.Do(func() {
		s.isClosed.Store(true)
		close(s.stopGC)
		s.gcDone.Wait()
		if gone := s.dirGone(); gone != nil {
			err = gone
			if s.lock != nil {
				s.lock.release()
			}
			return
		}
		if cerr := s.db.Close(); cerr != nil {
			err = fmt.Errorf("kv: close: %w", cerr)
		}
		// Files badger made while open are private at rest whatever the
		// process's umask was.
		if !s.readOnly && s.dir != "" {
			if perr := Private(s.dir); perr != nil && err == nil {
				err = fmt.Errorf("kv: close: %w", perr)
			}
		}
		if s.lock != nil {
			s.lock.release()
		}
	})
	return err
}

// dirGone is an error when the store's directory is no longer the one it
// opened (deleted, or another in its place), nil otherwise (and in memory,
// and read-only: nothing is written at close).
func (s *store) dirGone() error {
	if s.dir == "" || s.readOnly || s.dirID == nil {
		return nil
	}
	fi, err := os.Stat(s.dir)
	if err == nil && os.SameFile(fi, s.dirID) {
		return nil
	}
	what := "deleted"
	if err == nil {
		what = "replaced by another directory"
	}
	return fmt.Errorf("kv: close: data dir %s was %s while open: writes not yet flushed to its files are lost, and the store is left unclosed", s.dir, what)
}

// ready refuses an operation on a closed store or with a done context.
func (s *store) ready(ctx context.Context, op string) error {
	if s.isClosed.Load() {
		return fmt.Errorf("kv: %s: %w", op, kv.ErrClosed)
	}
	return ctx.Err()
}

func (s *store) View(ctx context.Context, fn func(kv.Reader) error) error {
	if err := s.ready(ctx, "view"); err != nil {
		return err
	}
	return s.db.View(func(bt *badgerdb.Txn) error {
		return fn(&txn{txn: bt, s: s})
	})
}

func (s *store) Update(ctx context.Context, fn func(kv.Txn) error) error {
	if err := s.ready(ctx, "update"); err != nil {
		return err
	}
	if err := s.space.check("update"); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := s.update(ctx, fn)
		if !errors.Is(err, badgerdb.ErrConflict) {
			return err
		}
		if attempt == maxConflictRetries {
			return fmt.Errorf("kv: update: gave up after %d conflicting attempts: %w", attempt+1, err)
		}
		// Back off a little, with jitter, so racing writers spread out.
		time.Sleep(time.Duration(rand.IntN(50*(min(attempt, 20)+1))) * time.Microsecond)
	}
}

// update runs fn once in a transaction and commits it unless ctx was
// cancelled meanwhile (then nothing is written).
func (s *store) update(ctx context.Context, fn func(kv.Txn) error) error {
	bt := s.db.NewTransaction(true)
	defer bt.Discard()
	t := &txn{txn: bt, s: s}
	if err := fn(t); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err := bt.Commit()
	if !errors.Is(err, badgerdb.ErrConflict) {
		s.watch.committed(t.wrote)
	}
	return err
}

func (s *store) Batch(ctx context.Context, ops []kv.Op) error {
	if err := s.ready(ctx, "batch"); err != nil {
		return err
	}
	if err := s.space.check("batch"); err != nil {
		return err
	}
	for _, op := range ops {
		if err := kv.CheckKey("batch write", op.Key); err != nil {
			return err
		}
		if err := s.checkValue("batch write", op.Key, op.Value); err != nil {
			return err
		}
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for _, op := range ops {
		var err error
		switch {
		case op.Delete:
			err = wb.Delete(op.Key)
		case op.TTL > 0:
			err = wb.SetEntry(badgerdb.NewEntry(op.Key, op.Value).WithTTL(op.TTL))
		default:
			err = wb.Set(op.Key, op.Value)
		}
		if err != nil {
			return fmt.Errorf("kv: batch write %s: %w", kv.Short(op.Key), err)
		}
	}
	err := wb.Flush()
	if s.watch.any() {
		keys := make([][]byte, len(ops))
		for i, op := range ops {
			keys[i] = op.Key
		}
		s.watch.committed(keys)
	}
	if err != nil {
		return fmt.Errorf("kv: batch flush: %w", err)
	}
	return nil
}

func (s *store) DropPrefix(ctx context.Context, prefix []byte) error {
	if err := s.ready(ctx, "drop prefix"); err != nil {
		return err
	}
	if len(prefix) == 0 {
		return errors.New("kv: drop prefix: refusing to drop the empty prefix (every key)")
	}
	if err := s.space.check("drop prefix"); err != nil {
		return err
	}
	err := s.db.DropPrefix(prefix)
	s.watch.dropped(prefix)
	if err != nil {
		return fmt.Errorf("kv: drop prefix %q: %w", prefix, err)
	}
	return nil
}

type txn struct {
	txn *badgerdb.Txn
	s   *store
	// wrote is the keys Set and Delete wrote, for the watched copies
	// (badger holds them until the commit too).
	wrote [][]byte
}

func (t *txn) Get(key []byte) ([]byte, error) {
	item, err := t.txn.Get(key)
	if errors.Is(err, badgerdb.ErrKeyNotFound) {
		return nil, kv.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("kv: get %s: %w", kv.Short(key), err)
	}
	v, err := item.ValueCopy(nil)
	if err != nil {
		return nil, fmt.Errorf("kv: read value of %s: %w", kv.Short(key), err)
	}
	return v, nil
}

func (t *txn) Scan(prefix []byte, opts kv.ScanOptions, fn func(key, value []byte) error) error {
	iopts := badgerdb.DefaultIteratorOptions
	if !opts.Reverse {
		// Lets badger skip tables. Not in reverse: there the iterator's
		// Valid() rejects the seek position just past the range.
		iopts.Prefix = prefix
	}
	iopts.Reverse = opts.Reverse
	// Values here are small and live inline in the LSM tree: prefetching
	// them in goroutines costs more than it saves.
	iopts.PrefetchValues = false
	it := t.txn.NewIterator(iopts)
	defer it.Close()

	seek := prefix
	switch {
	case opts.Start != nil:
		if !bytes.HasPrefix(opts.Start, prefix) {
			return fmt.Errorf("kv: scan: start key %q is outside prefix %q", opts.Start, prefix)
		}
		seek = opts.Start
	case opts.Reverse:
		// A reverse seek lands on the last key <= seek: start just past
		// the prefix's range.
		seek = kv.PrefixEnd(prefix)
	}
	n := 0
	for it.Seek(seek); it.Valid(); it.Next() {
		item := it.Item()
		key := item.Key()
		if !bytes.HasPrefix(key, prefix) {
			if opts.Reverse && n == 0 && bytes.Compare(key, prefix) > 0 {
				continue // a key just past the range, where the seek landed
			}
			break
		}
		var err error
		if opts.KeysOnly {
			err = fn(key, nil)
		} else {
			err = item.Value(func(v []byte) error { return fn(key, v) })
		}
		if errors.Is(err, kv.ErrStop) {
			return nil
		}
		if err != nil {
			return err
		}
		n++
		if opts.Limit > 0 && n >= opts.Limit {
			return nil
		}
	}
	return nil
}

func (t *txn) Set(key, value []byte, ttl time.Duration) error {
	if err := kv.CheckKey("set", key); err != nil {
		return err
	}
	if err := t.s.checkValue("set", key, value); err != nil {
		return err
	}
	e := badgerdb.NewEntry(key, value)
	if ttl > 0 {
		e = e.WithTTL(ttl)
	}
	if err := t.txn.SetEntry(e); err != nil {
		return fmt.Errorf("kv: set %s: %w", kv.Short(key), tooBig(err))
	}
	t.wrote = append(t.wrote, key)
	return nil
}

func (t *txn) Delete(key []byte) error {
	if err := kv.CheckKey("delete", key); err != nil {
		return err
	}
	if err := t.txn.Delete(key); err != nil {
		return fmt.Errorf("kv: delete %s: %w", kv.Short(key), tooBig(err))
	}
	t.wrote = append(t.wrote, key)
	return nil
}

// tooBig adds kv.ErrTooBig to badger's ErrTxnTooBig.
func tooBig(err error) error {
	if errors.Is(err, badgerdb.ErrTxnTooBig) {
		return fmt.Errorf("%w: %w", kv.ErrTooBig, err)
	}
	return err
}

// GetExpiry is Get plus the key's expiry (zero when it has none).
func (t *txn) GetExpiry(key []byte) ([]byte, time.Time, error) {
	item, err := t.txn.Get(key)
	if errors.Is(err, badgerdb.ErrKeyNotFound) {
		return nil, time.Time{}, kv.ErrNotFound
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("kv: get %s: %w", kv.Short(key), err)
	}
	v, err := item.ValueCopy(nil)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("kv: read value of %s: %w", kv.Short(key), err)
	}
	var exp time.Time
	if e := item.ExpiresAt(); e != 0 {
		exp = time.Unix(int64(e), 0)
	}
	return v, exp, nil
}

// badgerLogger forwards badger's warnings and errors to slog and drops its
// chatty INFO and DEBUG lines.
type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) Errorf(f string, a ...any) {
	if b.l != nil {
		b.l.Error(strings.TrimSpace(fmt.Sprintf(f, a...)), "component", "badger")
	}
}
func (b badgerLogger) Warningf(f string, a ...any) {
	if b.l != nil {
		b.l.Warn(strings.TrimSpace(fmt.Sprintf(f, a...)), "component", "badger")
	}
}
func (badgerLogger) Infof(string, ...any)  {}
func (badgerLogger) Debugf(string, ...any) {}
