package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// importBatch bounds the manifests one import or forget transaction
// writes; a store with a lower op limit (etcd) gets fewer, runKeys keys
// read or written per run (its manifest and index entries).
const (
	importBatch = 500
	runKeys     = 8
)

// All returns every manifest, newest started first (for export).
func (s *Store) All(ctx context.Context) ([]Manifest, error) { return s.List(ctx, Filter{}) }

// Prepare validates manifests for Import; an invalid one is reported by
// its position and id. Two manifests with the same id are an error.
func (s *Store) Prepare(ms []Manifest) ([]Manifest, error) {
	seen := map[string]int{}
	out := make([]Manifest, 0, len(ms))
	for i, m := range ms {
		m.ArtifactPaths = append([]string(nil), m.ArtifactPaths...)
		if err := normalize(&m); err != nil {
			return nil, fmt.Errorf("runs[%d] (%s): %w", i, m.RunID, err)
		}
		if j, dup := seen[m.RunID]; dup {
			return nil, fmt.Errorf("runs[%d]: %w", i, engine.Invalid("run", fmt.Sprintf("run id %s repeats runs[%d]", m.RunID, j)))
		}
		seen[m.RunID] = i
		out = append(out, m)
	}
	return out, nil
}

// Import writes manifests prepared by Prepare, replacing stored runs with
// the same id.
func (s *Store) Import(ctx context.Context, ms []Manifest) error {
	batch := kv.TxnItems(s.db, importBatch, runKeys)
	for start := 0; start < len(ms); start += batch {
		chunk := ms[start:min(start+batch, len(ms))]
		err := s.db.Update(ctx, func(tx kv.Txn) error {
			for i := range chunk {
				old, err := load(tx, chunk[i].RunID)
				if err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
				if err := put(tx, old, &chunk[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("run: import: %w", err)
		}
	}
	return nil
}

// ForgetSite deletes every run on site (a registrable domain) with its
// index entries, including those outside the site's key range, and returns
// the ids it deleted (so their planner histories can go too).
func (s *Store) ForgetSite(ctx context.Context, site string) ([]string, error) {
	if site == "" || site == keyspace.Global {
		return nil, engine.Invalid("run", "forgetting needs a site")
	}
	var all []string
	batch := kv.TxnItems(s.db, importBatch, runKeys)
	for {
		var ids []string
		err := s.db.Update(ctx, func(tx kv.Txn) error {
			ids = ids[:0]
			var stale [][]byte
			err := tx.Scan(keyspace.SiteRuns(site), kv.ScanOptions{Limit: batch}, func(k, _ []byte) error {
				ids = append(ids, keyspace.LastPart(k))
				stale = append(stale, append([]byte(nil), k...))
				return nil
			})
			if err != nil {
				return err
			}
			for i, id := range ids {
				if err := tx.Delete(stale[i]); err != nil {
					return err
				}
				m, err := load(tx, id)
				switch {
				case errors.Is(err, ErrNotFound):
					continue // a dangling site entry
				case err != nil:
					return err
				}
				if err := removeIndexes(tx, m); err != nil {
					return err
				}
				if err := tx.Delete(keyspace.Run(id)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return all, fmt.Errorf("run: forget %s: %w", site, err)
		}
		all = append(all, ids...)
		if len(ids) < batch {
			return all, nil
		}
	}
}
