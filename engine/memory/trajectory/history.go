package trajectory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// ErrNoVersion is a revert to a version a trajectory does not have.
var ErrNoVersion = engine.NotFound("no such trajectory version")

// Version is a trajectory as it was before one change: who made the
// change, when, and what it was (Op). Trajectory is nil for the version an
// import kept of a trajectory it created (reverting to it removes it).
type Version struct {
	Version    uint64            `json:"version"`
	At         time.Time         `json:"at"`
	By         engine.Provenance `json:"by"`
	Op         string            `json:"op"`
	Trajectory *Trajectory       `json:"trajectory"`
}

// keep stores old (the stored bytes of trajectory id, nil when it did not
// exist) as its next version in tx; a trajectory that did not exist is
// versioned only when an import creates it.
func (s *Store) keep(tx kv.Txn, op, id string, old []byte) error {
	p := s.opts.Provenance
	if old == nil {
		if p.Source != engine.SourceImported {
			return nil
		}
		old = history.Absent
	}
	c := history.Change{At: s.opts.Now(), By: p, Op: history.SetOp(p, op)}
	return history.Keep(tx, history.Trajectory, id, c, old, history.KeepN(s.opts.HistoryKeep))
}

// History returns the kept versions of trajectory id, newest first. A
// trajectory with none returns ErrNotFound unless it exists.
func (s *Store) History(ctx context.Context, id string) ([]Version, error) {
	var out []Version
	err := s.db.View(ctx, func(r kv.Reader) (err error) {
		out, err = history.Versions[Version](r, history.Trajectory, id, func() error {
			_, err := locate(r, id)
			return err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("trajectory: history %s: %w", id, err)
	}
	return out, nil
}

// locate returns the key of stored trajectory id: one read of its id
// entry, else (a store written before the entries, or no such trajectory)
// a scan of every site's keys.
func locate(r kv.Reader, id string) ([]byte, error) {
	site, err := r.Get(keyspace.TrajectoryID(id))
	switch {
	case err == nil:
		key := keyspace.Trajectory(string(site), id)
		if _, err := r.Get(key); err == nil {
			return key, nil
		} else if !errors.Is(err, kv.ErrNotFound) {
			return nil, err
		}
	case !errors.Is(err, kv.ErrNotFound):
		return nil, err
	}
	var key []byte
	err = r.Scan(keyspace.SitesPrefix(), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
		if keyspace.IsTrajectory(k) && keyspace.LastPart(k) == id {
			key = bytes.Clone(k)
			return kv.ErrStop
		}
		return nil
	})
	if err == nil && key == nil {
		err = fmt.Errorf("trajectory %s: %w", id, ErrNotFound)
	}
	return key, err
}

// Revert restores trajectory id to version to (the newest kept when
// to < 0) and keeps the state it replaces (op revert). It returns the
// trajectory restored, or nil when the version is the absence an import
// replaced. A version whose expiry has passed is not restored.
func (s *Store) Revert(ctx context.Context, id string, to int64) (*Trajectory, error) {
	var out *Trajectory
	var after func()
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		e, err := history.At(tx, history.Trajectory, id, to, ErrNoVersion)
		if err != nil {
			return err
		}
		out, after, err = s.restore(tx, id, e.Record, history.OpRevert)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("trajectory: revert %s: %w", id, err)
	}
	after()
	return out, nil
}

// restore makes rec (a version's record; Absent: none) the stored state of
// trajectory id in tx, with its match entry, keeping the state it replaces
// (op revert). after updates the match cache once tx has committed.
func (s *Store) restore(tx kv.Txn, id string, rec []byte, op string) (out *Trajectory, after func(), err error) {
	if err := history.Release(tx, history.Trajectory, id); err != nil {
		return nil, nil, err
	}
	var key []byte
	var site string
	if history.IsAbsent(rec) {
		if key, err = locate(tx, id); errors.Is(err, ErrNotFound) {
			return nil, func() {}, nil
		} else if err != nil {
			return nil, nil, err
		}
		if site, err = keyspace.SiteOf(key); err != nil {
			return nil, nil, err
		}
	} else {
		out = new(Trajectory)
		if err := json.Unmarshal(rec, out); err != nil {
			return nil, nil, fmt.Errorf("%w version: %w", history.ErrDamaged, err)
		}
		if why := screenOf(out); why != "" {
			return nil, nil, engine.Invalid("revert", "the version fails the screen: "+why)
		}
		h, err := domain.Host(out.Domain)
		if err != nil {
			return nil, nil, fmt.Errorf("%w version: domain: %w", history.ErrDamaged, err)
		}
		site = domain.Site(h)
		key = keyspace.Trajectory(site, id)
	}
	raw, err := tx.Get(key)
	switch {
	case err == nil:
		c := history.Change{At: s.opts.Now(), By: s.opts.Provenance, Op: op}
		if err := history.Keep(tx, history.Trajectory, id, c, raw, history.KeepN(s.opts.HistoryKeep)); err != nil {
			return nil, nil, err
		}
	case !errors.Is(err, kv.ErrNotFound):
		return nil, nil, err
	}
	g, err := tx.Get(keyspace.TrajectoryGen(site))
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return nil, nil, err
	}
	oldGen, gen := string(g), newGen()
	if err := tx.Set(keyspace.TrajectoryGen(site), []byte(gen), 0); err != nil {
		return nil, nil, err
	}
	if out == nil {
		if err := tx.Delete(key); err != nil {
			return nil, nil, err
		}
		if err := tx.Delete(keyspace.TrajectoryIndex(site, id)); err != nil {
			return nil, nil, err
		}
		if err := tx.Delete(keyspace.TrajectoryID(id)); err != nil {
			return nil, nil, err
		}
		return nil, func() { s.applyWrite(site, oldGen, gen, id, nil) }, nil
	}
	ttl := out.ExpiresAt.Sub(s.opts.Now())
	if ttl <= 0 {
		return nil, nil, engine.Invalidf("revert", "trajectory %s: the version expired at %s", id, out.ExpiresAt.Format(time.RFC3339))
	}
	if err := tx.Set(key, rec, ttl); err != nil {
		return nil, nil, err
	}
	if err := tx.Set(keyspace.TrajectoryID(id), []byte(site), ttl); err != nil {
		return nil, nil, err
	}
	if out.Stale != nil { // a stale version stays out of the match index
		if err := tx.Delete(keyspace.TrajectoryIndex(site, id)); err != nil {
			return nil, nil, err
		}
		return out, func() { s.applyWrite(site, oldGen, gen, id, nil) }, nil
	}
	ent := entryOf(out)
	if err := tx.Set(keyspace.TrajectoryIndex(site, id), ent.encode(), ttl); err != nil {
		return nil, nil, err
	}
	return out, func() { s.applyWrite(site, oldGen, gen, id, &ent) }, nil
}

// RevertImport undoes every trajectory change the import of the file with
// digest sha made, as the history says: each trajectory it replaced goes
// back to its version before the import, each it created is removed.
func (s *Store) RevertImport(ctx context.Context, sha string) (*history.Reverted, error) {
	return history.RevertImport(ctx, s.db, history.Trajectory, sha, s.revertOne)
}

// live lists stored trajectories for a revert by run.
var live = &history.Live{Prefix: keyspace.SitesPrefix(), Is: keyspace.IsTrajectory, ID: func(k, _ []byte) (string, error) {
	return keyspace.LastPart(k), nil
}}

// RevertRun undoes every trajectory change run made, as the history says:
// each trajectory it changed goes back to its version before the run's
// first change (later changes by others are undone too, and kept as
// versions), each it created is removed. It reads every kept trajectory
// version and every trajectory: an operator's command, not a hot path.
func (s *Store) RevertRun(ctx context.Context, run string) (*history.Reverted, error) {
	return history.RevertRun(ctx, s.db, history.Trajectory, run, live, s.revertOne)
}

// Retract withdraws trajectory id from every read path (lists, the match
// index, prompts), keeping its version (op retract) and holding it at
// retracted/trajectory/<id> with reason until Revert restores it.
func (s *Store) Retract(ctx context.Context, id, reason string) (*history.Retraction, error) {
	var after func()
	out, err := history.Retract(ctx, s.db, history.Trajectory, id, reason, history.Change{At: s.opts.Now(), By: s.opts.Provenance}, func(tx kv.Txn) ([]byte, error) {
		key, err := locate(tx, id)
		if err != nil {
			return nil, err
		}
		raw, err := tx.Get(key)
		if err != nil {
			return nil, err
		}
		_, after, err = s.restore(tx, id, history.Absent, history.OpRetract)
		return raw, err
	})
	if err != nil {
		return nil, err
	}
	after()
	return out, nil
}

// Retracted returns the retracted trajectories, by id.
func (s *Store) Retracted(ctx context.Context) (out []history.Retraction, err error) {
	err = s.db.View(ctx, func(r kv.Reader) error { out, err = history.RetractedAll(r, history.Trajectory); return err })
	if err != nil {
		return nil, fmt.Errorf("trajectory: retracted: %w", err)
	}
	return out, nil
}

// revertOne restores trajectory id to rec (absent: removes it) in a
// transaction of its own, then brings the match cache up to date, for a
// revert of an import or a run.
func (s *Store) revertOne(ctx context.Context, id string, rec []byte) error {
	var after func()
	err := s.db.Update(ctx, func(tx kv.Txn) (err error) { _, after, err = s.restore(tx, id, rec, history.OpRevert); return err })
	if err == nil {
		after()
	}
	return err
}

// Stored returns trajectory id as it is stored, or an error wrapping
// ErrNotFound: the record in force that its history leads to.
func Stored(r kv.Reader, id string) ([]byte, error) {
	key, err := locate(r, id)
	if err != nil {
		return nil, err
	}
	return r.Get(key)
}

// ForgetSite deletes the id entries of site's trajectories (they lie
// outside its key range), in transactions of at most a batch of entries,
// before forgetting drops the range; it returns how many went.
func (s *Store) ForgetSite(ctx context.Context, site string) (int, error) {
	batch := kv.TxnItems(s.db, 512, 1)
	total := 0
	for start := keyspace.Trajectories(site); ; {
		var ids []string
		err := s.db.View(ctx, func(r kv.Reader) error {
			ids = ids[:0]
			return r.Scan(keyspace.Trajectories(site), kv.ScanOptions{KeysOnly: true, Start: start, Limit: batch}, func(k, _ []byte) error {
				ids = append(ids, keyspace.LastPart(k))
				start = append(bytes.Clone(k), 0)
				return nil
			})
		})
		if err == nil && len(ids) > 0 {
			err = s.db.Update(ctx, func(tx kv.Txn) error {
				for _, id := range ids {
					if err := tx.Delete(keyspace.TrajectoryID(id)); err != nil {
						return err
					}
				}
				return nil
			})
		}
		if err != nil {
			return total, fmt.Errorf("trajectory: forget %s: %w", site, err)
		}
		total += len(ids)
		if len(ids) < batch {
			return total, nil
		}
	}
}
