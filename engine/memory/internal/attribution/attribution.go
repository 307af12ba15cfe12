// Package attribution holds what the stores that count attribution
// (facts, selectors, trajectories) share: adding a run's counts to stored
// JSON records in one transaction, and removing the records the counts
// show to be unhelpful (Learned, Options.Prune).
package attribution

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/internal/sitecache"
	"github.com/engine-dev/engine/kv"
)

// Update is the counts a run adds to one stored record: its key, and the
// site whose generation token changes with it.
type Update struct {
	Key    []byte
	Site   string
	Counts engine.Counts
}

// Options say how a kind of record takes its counts.
type Options[T any] struct {
	// Counts returns the record's counts to add to.
	Counts func(*T) *engine.Counts
	// Keep, when set, says whether the record is still kept (a trajectory
	// may have expired meanwhile) and the TTL to write it back with;
	// nil: always kept, no TTL.
	Keep func(*T) (time.Duration, bool)
	// Gen, when set, is the key of a site's generation token, given a
	// fresh one for every site whose records changed (sitecache).
	Gen func(site string) []byte
	// Version, when set, keeps the record's stored bytes old as a past
	// version before the counts change it (engine/memory/history).
	Version func(tx kv.Txn, rec *T, old []byte) error
	// Prune, when set, says whether the record, its counts added, is
	// removed instead of written back (see Learned); it is called once for
	// each record that took counts, so it may count them.
	Prune func(*T) bool
}

// Learned reports whether a record written by p may be pruned for its
// counters: written by a program (learned, imported, api), never a seed or
// a person's (seed, manual), and shown engine.PruneUnhelpfulAfter times
// without ever helping.
func Learned(p engine.Provenance, c engine.Counts) bool {
	return p.Source != engine.SourceSeed && p.Source != engine.SourceManual && c.PrunableUnhelpful()
}

// AddAll adds each update's counts to the JSON record of type T at its
// key, in tx, and returns how many records it updated: a record gone, or
// one Keep refuses, is skipped; one Prune removes counts as updated.
func AddAll[T any](tx kv.Txn, ups []Update, o Options[T]) (int, error) {
	n := 0
	sites := map[string]bool{}
	for _, u := range ups {
		v, err := tx.Get(u.Key)
		if errors.Is(err, kv.ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, err
		}
		var rec T
		if err := json.Unmarshal(v, &rec); err != nil {
			return 0, fmt.Errorf("decode %s: %w", kv.Short(u.Key), err)
		}
		var ttl time.Duration
		if o.Keep != nil {
			var keep bool
			if ttl, keep = o.Keep(&rec); !keep {
				continue
			}
		}
		if o.Version != nil {
			if err := o.Version(tx, &rec, v); err != nil {
				return 0, err
			}
		}
		o.Counts(&rec).Add(u.Counts)
		sites[u.Site] = true
		n++
		if o.Prune != nil && o.Prune(&rec) {
			if err := tx.Delete(u.Key); err != nil {
				return 0, err
			}
			continue
		}
		b, err := json.Marshal(&rec)
		if err != nil {
			return 0, err
		}
		if err := tx.Set(u.Key, b, ttl); err != nil {
			return 0, err
		}
	}
	if o.Gen != nil {
		for site := range sites {
			if err := tx.Set(o.Gen(site), []byte(sitecache.Gen()), 0); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}
