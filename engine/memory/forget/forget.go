// Package forget drops everything memory holds about one site, of every
// kind: its lessons, facts, selectors, trajectories, sessions, runs and
// their planner histories, the index entries that point at them and the
// kept versions that could bring them back; Count says beforehand what
// would go.
package forget

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// EventForgotten is the memory event emitted when a site is forgotten.
const EventForgotten = "site_forgotten"

// Survey counts what memory holds about one site, by kind.
type Survey struct {
	Site           string `json:"site"`
	Lessons        int    `json:"lessons"`
	Facts          int    `json:"facts"`
	Selectors      int    `json:"selectors"`
	Trajectories   int    `json:"trajectories"`
	Sessions       int    `json:"sessions"`
	Runs           int    `json:"runs"`
	PlanIterations int    `json:"plan_iterations"`
}

// Total is the number of records the survey counted.
func (s Survey) Total() int {
	return s.Lessons + s.Facts + s.Selectors + s.Trajectories + s.Sessions + s.Runs + s.PlanIterations
}

// String renders the counts: "2 lessons, 3 facts, ...".
func (s Survey) String() string {
	return memory.KindCounts{
		{Kind: "lessons", Count: s.Lessons}, {Kind: "facts", Count: s.Facts}, {Kind: "selectors", Count: s.Selectors},
		{Kind: "trajectories", Count: s.Trajectories}, {Kind: "sessions", Count: s.Sessions}, {Kind: "runs", Count: s.Runs},
		{Kind: "planner iterations", Count: s.PlanIterations},
	}.String()
}

// siteOf returns the site memory about host (a host or URL) is kept under.
func siteOf(host string) (string, error) {
	h, err := domain.Host(host)
	if err != nil {
		return "", engine.MarkInvalid(fmt.Errorf("domain: %v", err))
	}
	site := domain.Site(h)
	if site == keyspace.Global {
		return "", engine.MarkInvalid(fmt.Errorf("%q is not a site", host))
	}
	return site, nil
}

// Count counts what would be forgotten about host's site in m (its
// registrable domain: forgetting www.example.com forgets example.com and
// every subdomain).
func Count(ctx context.Context, m *memory.Memory, host string) (Survey, error) {
	site, err := siteOf(host)
	if err != nil {
		return Survey{}, err
	}
	s := Survey{Site: site}
	err = m.DB().View(ctx, func(r kv.Reader) error {
		s = Survey{Site: site}
		count := func(prefix []byte, n *int, each func(k []byte)) error {
			return r.Scan(prefix, kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
				*n++
				if each != nil {
					each(k)
				}
				return nil
			})
		}
		var runs []string
		for _, c := range []struct {
			prefix []byte
			n      *int
			each   func([]byte)
		}{
			{keyspace.Lessons(site), &s.Lessons, nil},
			{keyspace.Facts(site), &s.Facts, nil},
			{keyspace.Selectors(site), &s.Selectors, nil},
			{keyspace.Trajectories(site), &s.Trajectories, nil},
			{keyspace.Sessions(site), &s.Sessions, nil},
			{keyspace.SiteRuns(site), &s.Runs, func(k []byte) { runs = append(runs, keyspace.LastPart(k)) }},
		} {
			if err := count(c.prefix, c.n, c.each); err != nil {
				return err
			}
		}
		for _, id := range runs {
			if err := count(keyspace.Plan(id), &s.PlanIterations, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Survey{}, fmt.Errorf("survey %s: %w", site, err)
	}
	return s, nil
}

// Site deletes everything m holds about host's site, of every kind, and
// returns what it deleted. Index entries outside the site's key range
// (lesson and trajectory ids, due dates and list entries, run indexes, the
// runs' planner histories) go first, then its held facts and trajectories and the site's
// whole range, one DropPrefix each. Lessons bound to no site stay, even
// when they were learned on this one.
func Site(ctx context.Context, m *memory.Memory, host string) (Survey, error) {
	s, err := Count(ctx, m, host)
	if err != nil {
		return Survey{}, err
	}
	site := s.Site
	if _, err := m.Lessons.ForgetSite(ctx, site); err != nil {
		return Survey{}, err
	}
	ids, err := m.Runs.ForgetSite(ctx, site)
	if err != nil {
		return Survey{}, err
	}
	if err := m.Plans.Delete(ctx, ids...); err != nil {
		return Survey{}, err
	}
	if _, err := m.Trajectories.ForgetSite(ctx, site); err != nil {
		return Survey{}, err
	}
	if err := forgetHistory(ctx, m, site); err != nil {
		return Survey{}, fmt.Errorf("forget %s: history: %w", site, err)
	}
	for _, p := range [][]byte{keyspace.QuarantinedFactsOf(site), keyspace.QuarantinedTrajectoriesOf(site), keyspace.SitePrefix(site)} {
		if err := m.DB().DropPrefix(ctx, p); err != nil {
			return Survey{}, fmt.Errorf("forget %s: %w", site, err)
		}
	}
	m.Events().Emit(EventForgotten, map[string]any{
		"site": site, "lessons": s.Lessons, "facts": s.Facts, "selectors": s.Selectors, "trajectories": s.Trajectories,
		"sessions": s.Sessions, "runs": s.Runs, "plan_iterations": s.PlanIterations,
	})
	return s, nil
}

// forgetHistory deletes the kept versions of every fact, selector and
// trajectory of site (lessons forget their own, lesson.ForgetSite), so a
// forgotten site cannot come back through revert: a scan of those kinds'
// versions, one transaction per record.
func forgetHistory(ctx context.Context, m *memory.Memory, site string) error {
	type rec struct {
		Domain string `json:"domain"`
	}
	var gone [][2]string
	err := m.DB().View(ctx, func(r kv.Reader) error {
		gone = gone[:0]
		for _, kind := range []string{history.Fact, history.Selector, history.Trajectory} {
			last := ""
			err := history.Each(r, kind, func(id string, _ uint64, b []byte) error {
				if id == last {
					return nil
				}
				e, err := history.Decode(kind, id, b)
				if err != nil || history.IsAbsent(e.Record) {
					return nil // a version that names no site: left alone
				}
				var v rec
				if json.Unmarshal(e.Record, &v) == nil && v.Domain != "" {
					if h, err := domain.Host(v.Domain); err == nil && domain.Site(h) == site {
						gone, last = append(gone, [2]string{kind, id}), id
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, g := range gone {
		if err := m.DB().Update(ctx, func(tx kv.Txn) error { return history.Forget(tx, g[0], g[1]) }); err != nil {
			return err
		}
	}
	return nil
}
