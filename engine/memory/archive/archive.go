// Package archive moves whole memory in and out of a data dir: export to
// one versioned JSON document, import from that document, from a two-tier
// memory.json or from a browser-agent-driver .agent-memory directory.
// Forgetting one site's memory is engine/memory/forget's.
//
// Import is all or nothing: every file is parsed and every record validated
// before the first write, a problem is reported with the file (and the line
// or record) it is in, and the writes are committed in one step
// (kv.Staging, kv.Apply), so a store error or a crash part way writes
// nothing either.
package archive

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/plan"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/session"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/engine/trust/redact"
	"github.com/engine-dev/engine/kv"
)

// Format and Version identify an export document.
const (
	Format  = "engine-export"
	Version = 1
)

// Document is the export format: every store's records, each kind in its
// own store's JSON form.
type Document struct {
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	ExportedAt time.Time `json:"exported_at"`
	// History is the kept versions of lessons, facts, selectors and
	// trajectories (engine history), before the records so a streamed
	// import keeps them before it writes the records; a file without it
	// (older exports) imports as before.
	History      []history.Entry         `json:"history,omitempty"`
	Lessons      []lesson.Lesson         `json:"lessons"`
	Facts        []fact.Fact             `json:"facts"`
	Selectors    []selector.Selector     `json:"selectors"`
	Trajectories []trajectory.Trajectory `json:"trajectories"`
	Sessions     []session.Session       `json:"sessions"`
	Runs         []run.Manifest          `json:"runs"`
	Plans        []plan.History          `json:"plans"`
}

// Options configure an Archive.
type Options struct {
	// Apply tunes how Import commits (kv.Apply); the zero value writes an
	// import in one transaction when it fits and through kv's undo journal
	// when not.
	Apply kv.ApplyOptions
	// Trust keeps the trust, source and provenance the file gives each
	// lesson (engine import --trust; lesson.ImportOptions.KeepTrust).
	// Without it every imported lesson is a candidate of source imported.
	Trust bool
	// File and SHA256 name the imported file and its digest, stamped on
	// the provenance of what the import writes.
	File, SHA256 string
	// Redactor, when set, redacts every record an import reads (before the
	// screen and the stores) and every record an export writes (memory
	// stored before redaction existed); nil leaves records as they are.
	Redactor *redact.Redactor
	// Check, when set, is called by ImportStream once the whole input is
	// read and before the commit: an error rolls the import back (the API
	// checks the body's digest against the one the client announced).
	Check func() error
}

// Archive moves whole memory in and out of one Memory.
type Archive struct {
	*memory.Memory
	apply        kv.ApplyOptions
	trust        bool
	file, sha256 string
	red          *redact.Redactor
	check        func() error
}

// New returns the archive over m.
func New(m *memory.Memory, opts Options) *Archive {
	return &Archive{Memory: m, apply: opts.Apply, trust: opts.Trust, file: opts.File, sha256: opts.SHA256, red: opts.Redactor, check: opts.Check}
}

// redact redacts every record of d in place, when the archive redacts.
func (m *Archive) redact(d *Document) {
	if m.red != nil {
		m.red.Value(d)
	}
}

// kind is one store as export and import see it. Adding a store to the
// archive is one entry here and one field in Document.
type kind struct {
	name string
	// count reports how many records of the kind d holds.
	count func(d *Document) int
	// export fills the kind's field of d from the store.
	export func(ctx context.Context, m *Archive, d *Document) error
	// prepare validates the kind's records in d without writing and
	// returns the write to do once every kind is valid.
	prepare func(m *Archive, d *Document) (func(ctx context.Context) error, error)
}

var kinds = []kind{
	{
		name:  "lessons",
		count: func(d *Document) int { return len(d.Lessons) },
		export: func(ctx context.Context, m *Archive, d *Document) (err error) {
			d.Lessons, err = m.Lessons.List(ctx, lesson.Filter{})
			if err != nil {
				return err
			}
			// Quarantined lessons go too, with their reason: an import holds
			// them again, so a round trip keeps what was trusted and what not.
			held, err := m.Lessons.Quarantined(ctx)
			d.Lessons = append(d.Lessons, held...)
			for i := range d.Lessons {
				if d.Lessons[i].TriggeredDomains == nil {
					d.Lessons[i].TriggeredDomains = []string{} // as an import stores it
				}
			}
			return err
		},
		prepare: func(m *Archive, d *Document) (func(context.Context) error, error) {
			ls, err := m.Lessons.Prepare(d.Lessons, lesson.ImportOptions{KeepTrust: m.trust})
			return func(ctx context.Context) error { return m.Lessons.Import(ctx, ls) }, err
		},
	},
	{
		name:  "facts",
		count: func(d *Document) int { return len(d.Facts) },
		export: func(ctx context.Context, m *Archive, d *Document) (err error) {
			if d.Facts, err = m.Facts.List(ctx, ""); err != nil {
				return err
			}
			// Held facts go too, with their reason: an import holds them again.
			held, err := m.Facts.Quarantined(ctx)
			d.Facts = append(d.Facts, held...)
			return err
		},
		prepare: func(m *Archive, d *Document) (func(context.Context) error, error) {
			for i, f := range d.Facts {
				if err := checkFact(f); err != nil {
					return nil, fmt.Errorf("facts[%d]: %w", i, err)
				}
			}
			return func(ctx context.Context) error {
				for _, f := range d.Facts {
					if _, _, err := m.Facts.Put(ctx, f); err != nil {
						return err
					}
				}
				return nil
			}, nil
		},
	},
	{
		name:  "selectors",
		count: func(d *Document) int { return len(d.Selectors) },
		export: func(ctx context.Context, m *Archive, d *Document) (err error) {
			d.Selectors, err = m.Selectors.List(ctx, "")
			return err
		},
		prepare: func(m *Archive, d *Document) (func(context.Context) error, error) {
			for i, s := range d.Selectors {
				if err := checkSelector(s); err != nil {
					return nil, fmt.Errorf("selectors[%d]: %w", i, err)
				}
			}
			return func(ctx context.Context) error {
				held := map[string][]selector.Selector{} // by host
				for _, s := range d.Selectors {
					h, err := domain.Host(s.Domain)
					if err != nil {
						return err
					}
					s.Domain = h
					if _, ok := held[h]; !ok {
						if held[h], err = m.Selectors.List(ctx, h); err != nil {
							return err
						}
					}
					var have *selector.Selector
					for i := range held[h] {
						if sameSelector(held[h][i], s) {
							have = &held[h][i]
						}
					}
					stored, err := m.Selectors.Put(ctx, mergeSelector(s, have))
					if err != nil {
						return err
					}
					if have != nil {
						*have = stored
					} else {
						held[h] = append(held[h], stored)
					}
				}
				return nil
			}, nil
		},
	},
	{
		name:  "trajectories",
		count: func(d *Document) int { return len(d.Trajectories) },
		export: func(ctx context.Context, m *Archive, d *Document) (err error) {
			if d.Trajectories, err = m.Trajectories.List(ctx, ""); err != nil {
				return err
			}
			// Held trajectories go too, with their reason: an import holds
			// them again.
			held, err := m.Trajectories.Quarantined(ctx)
			d.Trajectories = append(d.Trajectories, held...)
			return err
		},
		prepare: func(m *Archive, d *Document) (func(context.Context) error, error) {
			for i, t := range d.Trajectories {
				if err := checkTrajectory(t); err != nil {
					return nil, fmt.Errorf("trajectories[%d]: %w", i, err)
				}
			}
			return func(ctx context.Context) error {
				for _, t := range d.Trajectories {
					// An exported trajectory replaces the one with its id
					// (Record would count it as one more run); a held one
					// is held beside it.
					if t.ID != "" && t.Quarantine == "" {
						// The same record again: nothing changes (and no
						// version is kept).
						if cur, err := m.Trajectories.Get(ctx, t.Domain, t.ID); err == nil && reflect.DeepEqual(cur, t) {
							continue
						}
						err := m.Trajectories.Delete(ctx, t.Domain, t.ID)
						if err != nil && !errors.Is(err, trajectory.ErrNotFound) {
							return err
						}
					}
					if _, err := m.Trajectories.Record(ctx, t); err != nil {
						return err
					}
				}
				return nil
			}, nil
		},
	},
	{
		name:  "sessions",
		count: func(d *Document) int { return len(d.Sessions) },
		export: func(ctx context.Context, m *Archive, d *Document) (err error) {
			d.Sessions, err = m.Sessions.List(ctx, session.Filter{})
			return err
		},
		prepare: func(m *Archive, d *Document) (func(context.Context) error, error) {
			ss, err := m.Sessions.Prepare(d.Sessions)
			return func(ctx context.Context) error { return m.Sessions.Import(ctx, ss) }, err
		},
	},
	{
		name:  "runs",
		count: func(d *Document) int { return len(d.Runs) },
		export: func(ctx context.Context, m *Archive, d *Document) (err error) {
			d.Runs, err = m.Runs.All(ctx)
			return err
		},
		prepare: func(m *Archive, d *Document) (func(context.Context) error, error) {
			rs, err := m.Runs.Prepare(d.Runs)
			return func(ctx context.Context) error { return m.Runs.Import(ctx, rs) }, err
		},
	},
	{
		name:  "plans",
		count: func(d *Document) int { return len(d.Plans) },
		export: func(ctx context.Context, m *Archive, d *Document) (err error) {
			d.Plans, err = m.Plans.All(ctx)
			return err
		},
		prepare: func(m *Archive, d *Document) (func(context.Context) error, error) {
			ps, err := m.Plans.Prepare(d.Plans)
			return func(ctx context.Context) error { return m.Plans.Import(ctx, ps) }, err
		},
	},
}

// Export returns every store's records as one document, redacted with
// Options.Redactor.
func (m *Archive) Export(ctx context.Context) (*Document, error) {
	d := &Document{Format: Format, Version: Version, ExportedAt: m.Now().UTC()}
	for _, k := range kinds {
		if err := k.export(ctx, m, d); err != nil {
			return nil, fmt.Errorf("export %s: %w", k.name, err)
		}
	}
	var err error
	if d.History, err = m.exportHistory(ctx); err != nil {
		return nil, fmt.Errorf("export history: %w", err)
	}
	d.fillEmpty()
	m.redact(d)
	return d, nil
}

// fillEmpty makes every absent kind an empty list, so the JSON shows it.
func (d *Document) fillEmpty() {
	if d.Lessons == nil {
		d.Lessons = []lesson.Lesson{}
	}
	if d.Facts == nil {
		d.Facts = []fact.Fact{}
	}
	if d.Selectors == nil {
		d.Selectors = []selector.Selector{}
	}
	if d.Trajectories == nil {
		d.Trajectories = []trajectory.Trajectory{}
	}
	if d.Sessions == nil {
		d.Sessions = []session.Session{}
	}
	if d.Runs == nil {
		d.Runs = []run.Manifest{}
	}
	if d.Plans == nil {
		d.Plans = []plan.History{}
	}
}

// Counts is how many records of each kind a document holds, in kind order
// (memory.KindCounts: forget reports its counts alike).
type Counts = memory.KindCounts

// KindCount is one kind's count.
type KindCount = memory.KindCount

// Count returns how many records of each kind d holds.
func (d *Document) Count() Counts {
	out := make(Counts, len(kinds))
	for i, k := range kinds {
		out[i] = KindCount{Kind: k.name, Count: k.count(d)}
	}
	return out
}

// invalidIn is bad input err found in file ("" when not from a file):
// "<file>: <err>", marked engine.ErrInvalid. Nothing was written.
func invalidIn(file string, err error) error {
	if file != "" {
		err = fmt.Errorf("%s: %w", file, err)
	}
	return engine.MarkInvalid(err)
}

// Result is what an import wrote and what it left out.
type Result struct {
	Imported Counts   `json:"imported"`
	Skipped  []string `json:"skipped,omitempty"` // records left out, and why
	// SHA256 is the imported file's digest (Options.SHA256), which
	// RevertImport takes to undo the import.
	SHA256 string `json:"sha256,omitempty"`
}

// Import validates every record of d and then writes them all, merging
// into the memory there is: records with the same identity are replaced.
// Invalid input writes nothing and returns an engine.ErrInvalid error naming source,
// the file d was read from; a store error writes nothing either (the
// import is one kv.Apply), and neither does a crash once the store is
// reopened. Import must not run alongside readers of the same memory in
// this process: a large import's commit is atomic but not isolated (the
// API runs it as an exclusive route, while no other request runs).
// With Options.Redactor, d's records are redacted in place first.
// Trajectories that have already expired are left out (the trajectory
// store keeps none past its lifetime) and listed in the result.
func (m *Archive) Import(ctx context.Context, d *Document, source string) (*Result, error) {
	m.redact(d)
	res := &Result{}
	in := *d
	in.Trajectories = nil
	now := m.Now()
	for _, t := range d.Trajectories {
		if expired(t.RecordedAt, now) {
			res.Skipped = append(res.Skipped, fmt.Sprintf("trajectory %q on %s: recorded %s, expired", t.Goal, t.Domain, t.RecordedAt.Format(time.DateOnly)))
			continue
		}
		in.Trajectories = append(in.Trajectories, t)
	}
	// The stores write into a kv.Staging over the store, whose ops are
	// written in one step, all or nothing (kv.Apply): a store error or a
	// crash part way leaves the memory as it was. Their events wait for the
	// commit.
	ops, events, err := m.stage(ctx, &in, source, 0)
	if err != nil {
		return nil, err
	}
	if err := kv.Apply(ctx, m.DB(), ops, m.apply); err != nil {
		if errors.Is(err, kv.ErrRecoveryPending) {
			return nil, fmt.Errorf("import: %w (an earlier import stopped part way): engine doctor --repair rolls it back", err)
		}
		return nil, fmt.Errorf("import: %w", err)
	}
	for _, e := range events {
		m.Events().Emit(e.Name, e.Fields)
	}
	res.Imported, res.SHA256 = in.Count(), m.sha256
	return res, nil
}
