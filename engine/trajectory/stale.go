package trajectory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/internal/history"
	"github.com/engine-dev/engine/engine/keyspace"
	"github.com/engine-dev/engine/kv"
)

// EventStale: trajectories were marked stale. Fields: marked, ids.
const EventStale = "trajectory_stale"

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
		if p := checkStale(s.opts.Provenance.Run, m.Step, reason); p != "" {
			return 0, engine.Invalid("stale trajectory", p)
		}
		ts = append(ts, target{site: domain.Site(h), id: m.ID,
			mark: Stale{At: now.UTC().Truncate(0), Run: s.opts.Provenance.Run, Step: m.Step, Reason: reason}})
	}
	gens := map[string][2]string{} // site → old, new generation
	removed := map[string][]string{}
	var ids []string
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		clear(gens)
		clear(removed)
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
			if err := tx.Delete(keyspace.TrajectoryIndex(t.site, t.id)); err != nil {
				return err
			}
			if _, ok := gens[t.site]; !ok {
				g, err := tx.Get(keyspace.TrajectoryGen(t.site))
				if err != nil && !errors.Is(err, kv.ErrNotFound) {
					return err
				}
				gens[t.site] = [2]string{string(g), newGen()}
			}
			removed[t.site] = append(removed[t.site], t.id)
			ids = append(ids, t.id)
		}
		for site, g := range gens {
			if err := tx.Set(keyspace.TrajectoryGen(site), []byte(g[1]), 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("trajectory: mark %d stale: %w", len(marks), err)
	}
	for site, g := range gens {
		s.applyRemove(site, g[0], g[1], removed[site])
	}
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
