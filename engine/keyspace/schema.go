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

// Init stamps an empty DB with SchemaVersion and refuses a DB whose schema
// is newer than this engine understands.
func Init(ctx context.Context, s kv.Store) error {
	return s.Update(ctx, func(tx kv.Txn) error {
		v, err := tx.Get(Schema())
		if errors.Is(err, kv.ErrNotFound) {
			return tx.Set(Schema(), []byte(strconv.Itoa(SchemaVersion)), 0)
		}
		if err != nil {
			return err
		}
		return checkVersion(v)
	})
}

// Check is Init without writing: it refuses a DB whose schema is newer
// than this engine understands and accepts one with no stamp yet.
func Check(ctx context.Context, s kv.Store) error {
	v, err := kv.Get(ctx, s, Schema())
	if errors.Is(err, kv.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return checkVersion(v)
}

func checkVersion(v []byte) error {
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return fmt.Errorf("schema version %q is not a number: the data dir is damaged", v)
	}
	if n > SchemaVersion {
		return fmt.Errorf("%w (schema %d; this engine reads up to %d): upgrade engine", ErrNewerSchema, n, SchemaVersion)
	}
	return nil
}
