package trajectory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/history"
	textcheck "github.com/engine-dev/engine/engine/memory/internal/check"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// EventStale: trajectories were marked stale. Fields: marked, ids.
const EventStale = "trajectory_stale"

// EventPruned is emitted when a recorded trajectory is removed for being
// shown engine.PruneUnhelpfulAfter times without ever helping.
const EventPruned = "trajectory_pruned"

// StaleMark is one run's finding that a trajectory no longer holds: the
// step (1-based) where the site diverged from it, and why.
type StaleMark struct {
	Domain string `json:"domain"` // host or URL of its site
	ID     string `json:"id"`
	Step   int    `json:"step"`
	Reason string `json:"reason"`
}

// MarkStale marks each trajectory stale (at the store's clock, by the
// store's provenance run), all in one transaction, and returns how many
// it marked: one no longer kept is skipped, and one already stale keeps
// its first mark (when it went stale). A stale trajectory leaves the match
// index (its record stays, listed with the mark) until a newer successful
// run of its template replaces it.
func (s *Store) MarkStale(ctx context.Context, marks []StaleMark) (int, error) {
	type target struct {
		site, id string
		mark     Stale
	}
	now := s.opts.Now()
	ts := make([]target, 0, len(marks))
	for _, m := range marks {
		h, err := domain.Host(m.Domain)
		if err != nil {
			return 0, engine.Invalid("stale trajectory", fmt.Sprintf("domain: %v", err))
		}
		if m.ID == "" {
			return 0, engine.Invalid("stale trajectory", "id is empty")
		}
		reason := strings.Join(strings.Fields(m.Reason), " ")
		if p := textcheck.Stale(engine.Stale{Run: s.opts.Provenance.Run, Step: m.Step, Reason: reason}, true); p != "" {
			return 0, engine.Invalid("stale trajectory", p)
		}
		ts = append(ts, target{site: domain.Site(h), id: m.ID,
			mark: Stale{At: now.UTC().Truncate(0), Run: s.opts.Provenance.Run, Step: m.Step, Reason: reason}})
	}
	var un unindexed
	var ids []string
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		un = unindexed{}
		ids = ids[:0]
		for _, t := range ts {
			v, err := tx.Get(keyspace.Trajectory(t.site, t.id))
			if errors.Is(err, kv.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			var rec Trajectory
			if json.Unmarshal(v, &rec) != nil {
				continue // damaged: left for repair
			}
			ttl := rec.ExpiresAt.Sub(now)
			if ttl <= 0 || rec.Stale != nil {
				continue
			}
			if err := s.keep(tx, history.OpStale, t.id, v); err != nil {
				return err
			}
			mark := t.mark
			rec.Stale = &mark
			b, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if err := tx.Set(keyspace.Trajectory(t.site, t.id), b, ttl); err != nil {
				return err
			}
			if err := un.remove(tx, t.site, t.id); err != nil {
				return err
			}
			ids = append(ids, t.id)
		}
		return un.commit(tx)
	})
	if err != nil {
		return 0, fmt.Errorf("trajectory: mark %d stale: %w", len(marks), err)
	}
	un.apply(s)
	if len(ids) > 0 {
		s.opts.Events.Emit(EventStale, map[string]any{"marked": len(ids), "ids": ids})
	}
	return len(ids), nil
}

// applyRemove updates the cached index of site after this Store removed
// the entries of ids (see applyWrite).
func (s *Store) applyRemove(site, oldGen, newGen string, ids []string) {
	shared.Advance(s.cacheKey(site), oldGen, newGen, func(ix *siteIndex) *siteIndex {
		ents := make([]entry, 0, len(ix.raw))
		for _, en := range ix.raw {
			keep := true
			for _, id := range ids {
				keep = keep && en.ID != id
			}
			if keep {
				ents = append(ents, en)
			}
		}
		return s.buildIndex(newGen, ents)
	})
}

// unindexed collects the match-index entries one transaction removes (a
// trajectory marked stale or pruned): each site's generation token is
// rewritten once, at commit, and this process's cached index is advanced
// without them afterwards.
type unindexed struct {
	gens    map[string][2]string // site → old, new generation
	removed map[string][]string  // site → ids
}

// remove deletes trajectory id's index entry in site.
func (u *unindexed) remove(tx kv.Txn, site, id string) error {
	if u.gens == nil {
		u.gens, u.removed = map[string][2]string{}, map[string][]string{}
	}
	if err := tx.Delete(keyspace.TrajectoryIndex(site, id)); err != nil {
		return err
	}
	if _, ok := u.gens[site]; !ok {
		g, err := tx.Get(keyspace.TrajectoryGen(site))
		if err != nil && !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		u.gens[site] = [2]string{string(g), newGen()}
	}
	u.removed[site] = append(u.removed[site], id)
	return nil
}

// commit writes the new generation tokens in tx.
func (u *unindexed) commit(tx kv.Txn) error {
	for site, g := range u.gens {
		if err := tx.Set(keyspace.TrajectoryGen(site), []byte(g[1]), 0); err != nil {
			return err
		}
	}
	return nil
}

// apply advances s's cached indexes once the transaction committed.
func (u *unindexed) apply(s *Store) {
	for site, g := range u.gens {
		s.applyRemove(site, g[0], g[1], u.removed[site])
	}
}
