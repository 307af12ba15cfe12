package memory

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger"
)

// Inspection is a data dir's store opened to be looked at, not used: no
// schema check, no migration, no seeds, nothing written (engine doctor).
type Inspection struct {
	db kv.Store
}

// Inspect opens the store of dataDir for inspection: its own database
// (which must exist) read-only, without waiting for its lock (a
// *LockedError names the holder), or, when open is set, the shared store
// open opens. The caller closes it.
func Inspect(ctx context.Context, dataDir string, open StoreOpener) (*Inspection, error) {
	var db kv.Store
	var err error
	if open != nil {
		db, err = open(ctx)
	} else {
		db, err = badger.Open(ctx, Dir(dataDir), badger.Options{ReadOnly: true})
	}
	if err != nil {
		return nil, err
	}
	return &Inspection{db: db}, nil
}

// Schema is the schema version stamped in the store (0 when there is
// none), whatever it is: newer than this engine reads included.
func (in *Inspection) Schema(ctx context.Context) (int, error) {
	v, err := kv.Get(ctx, in.db, keyspace.Schema())
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return 0, fmt.Errorf("schema version %q is not a number: the store is damaged", v)
	}
	return n, nil
}

// Close closes the store.
func (in *Inspection) Close() error { return in.db.Close() }

// RecoveryPending reports whether an atomic write (an import) stopped part
// way in this memory's namespace and is not rolled back yet: imports there
// are refused until Recover rolls it back.
func (m *Memory) RecoveryPending(ctx context.Context) (bool, error) {
	return kv.RecoveryPending(ctx, m.db)
}

// Recover rolls back an atomic write (an import) that stopped part way in
// namespace ns of m's store ("" or DefaultNamespace: the default), and
// reports whether there was one. It does so without using the namespace,
// whose first use would roll it back unreported. A data dir's badger
// database does it for the default namespace when it opens; a shared store
// never does it on open, since another process's import may be running.
func (m *Memory) Recover(ctx context.Context, ns string) (rolledBack bool, err error) {
	db := m.root
	if ns != "" && ns != DefaultNamespace {
		if err := CheckNamespace(ns); err != nil {
			return false, err
		}
		db = kv.Prefixed(db, keyspace.Namespace(ns))
	}
	return kv.Recover(ctx, db)
}
