package keyspace

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/engine-dev/engine/kv"
)

// ErrNewerSchema is returned by Init and Check for a DB written by a newer
// engine.
var ErrNewerSchema = errors.New("data dir was written by a newer engine")

// Schema versions:
//
//	1  the layout before the lesson list indexes
//	2  adds list/lesson/, list/lesson-cat/ and site/<site>/lesson-list/ (see lesson.go)
//	3  error-recall entries (site/<site>/lesson-cmd/...) hold no copy of the lesson's
//	   JSON; a recall reads the records it returns by key. Readers ignore the copy
//	   an entry written before has, so the migration from 2 builds nothing: the
//	   stamp keeps an older engine, which needs the copy, out.
//
// Migrating from an older version is two steps. Init stamps SchemaVersion
// and marks meta/migrating (→ the version migrated from) in one
// transaction, so an older engine refuses the store from then on and
// cannot write records the migration already indexed. The opener
// (engine/memory) then builds what the new version adds, idempotently and
// in as many transactions as it needs, and calls Migrated, which deletes
// the marker. A crash in between leaves the marker, and the next
// read-write open builds again from the start; a read-only open of a store
// with the marker (or still at an older version) must not trust the new
// indexes (Current reports false).

// SchemaVersion is the version of this layout. Opening a DB whose stored
// version is newer is an error; older versions are migrated on open.
const SchemaVersion = 3

// Migrating is the key that marks a migration in progress: → the version
// migrated from, decimal.
func Migrating() []byte { return []byte("meta/migrating") }

// Init stamps an empty DB with SchemaVersion and refuses a DB whose schema
// is newer than this engine understands. A DB at an older version is
// stamped SchemaVersion and marked as migrating (Pending then reports the
// version it had); the caller must migrate it and call Migrated.
func Init(ctx context.Context, s kv.Store) error {
	return s.Update(ctx, func(tx kv.Txn) error {
		v, err := tx.Get(Schema())
		if errors.Is(err, kv.ErrNotFound) {
			return tx.Set(Schema(), []byte(strconv.Itoa(SchemaVersion)), 0)
		}
		if err != nil {
			return err
		}
		n, err := checkVersion(v)
		if err != nil || n == SchemaVersion {
			return err
		}
		if _, err := tx.Get(Migrating()); err == nil {
			return nil // an earlier migration from an older version is pending
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		if err := tx.Set(Migrating(), []byte(strconv.Itoa(n)), 0); err != nil {
			return err
		}
		return tx.Set(Schema(), []byte(strconv.Itoa(SchemaVersion)), 0)
	})
}

// Pending returns the version a migration that has not finished started
// from, or 0 when none is pending.
func Pending(ctx context.Context, s kv.Store) (int, error) {
	v, err := kv.Get(ctx, s, Migrating())
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", Migrating(), err)
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 1 || n >= SchemaVersion {
		return 0, fmt.Errorf("%s is %q: the data dir is damaged", Migrating(), v)
	}
	return n, nil
}

// Migrated ends a migration: it deletes the marker Init set.
func Migrated(ctx context.Context, s kv.Store) error {
	return s.Update(ctx, func(tx kv.Txn) error { return tx.Delete(Migrating()) })
}

// Check is Init without writing: it refuses a DB whose schema is newer
// than this engine understands and accepts one with no stamp yet. It
// reports whether the DB is current: stamped SchemaVersion with no
// migration pending, so every index of this layout can be trusted.
func Check(ctx context.Context, s kv.Store) (current bool, err error) {
	v, err := kv.Get(ctx, s, Schema())
	if errors.Is(err, kv.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	n, err := checkVersion(v)
	if err != nil {
		return false, err
	}
	from, err := Pending(ctx, s)
	if err != nil {
		return false, err
	}
	return n == SchemaVersion && from == 0, nil
}

func checkVersion(v []byte) (int, error) {
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("schema version %q is not a version: the data dir is damaged", v)
	}
	if n > SchemaVersion {
		return 0, fmt.Errorf("%w (schema %d; this engine reads up to %d): upgrade engine", ErrNewerSchema, n, SchemaVersion)
	}
	return n, nil
}
