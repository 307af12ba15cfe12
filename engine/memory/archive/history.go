package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/internal/check"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/kv"
)

// historyKinds are the kinds whose versions an export carries, in order.
var historyKinds = []string{history.Lesson, history.Fact, history.Selector, history.Trajectory}

// exportHistory returns every kept version of every kind, by kind, id and
// version. The versions imports kept (of the records they replaced or
// created) are left out: they are this memory's undo data for those
// imports (revert --import), and importing the export elsewhere keeps its
// own.
func (m *Archive) exportHistory(ctx context.Context) ([]history.Entry, error) {
	var out []history.Entry
	err := m.DB().View(ctx, func(r kv.Reader) error {
		out = out[:0]
		for _, kind := range historyKinds {
			err := history.Each(r, kind, func(id string, _ uint64, b []byte) error {
				e, err := history.Decode(kind, id, b)
				if err != nil || history.IsAbsent(e.Record) || e.By.Source == engine.SourceImported {
					return err
				}
				out = append(out, e)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Record, err = m.checkRecord(out[i].Kind, out[i].Record, false); err != nil {
			return nil, fmt.Errorf("%s %s version %d: %w", out[i].Kind, out[i].ID, out[i].Version, err)
		}
	}
	return out, nil
}

// checkRecord decodes a version's record as its kind, redacts it
// (Options.Redactor), checks it as an import checks that kind's records
// when validate is set (an import: an export writes what is kept), and
// encodes it again.
func (m *Archive) checkRecord(kind string, rec json.RawMessage, validate bool) (json.RawMessage, error) {
	var v any
	var check func() error
	switch kind {
	case history.Lesson:
		var l lesson.Lesson
		v, check = &l, func() error {
			ls, err := m.Lessons.Prepare([]lesson.Lesson{l}, lesson.ImportOptions{KeepTrust: true})
			if err == nil && len(ls) == 1 && ls[0].Quarantine != "" {
				// A lesson version is restored without the screen: a
				// file's that fails it is not kept.
				return errScreened
			}
			return err
		}
	case history.Fact:
		var f fact.Fact
		v, check = &f, func() error { return checkFact(f) }
	case history.Selector:
		var s selector.Selector
		v, check = &s, func() error { return checkSelector(s) }
	case history.Trajectory:
		var t trajectory.Trajectory
		v, check = &t, func() error { return checkTrajectory(t) }
	default:
		return nil, engine.Invalidf("history", "unknown kind %q (want lesson, fact, selector or trajectory)", kind)
	}
	if err := json.Unmarshal(rec, v); err != nil {
		return nil, engine.Invalidf("history", "%s record: %v", kind, err)
	}
	if m.red != nil {
		m.red.Value(v)
	}
	if validate {
		if err := check(); err != nil {
			return nil, err
		}
	}
	return json.Marshal(v)
}

// errScreened is a file's lesson version that fails the screen: left out.
var errScreened = errors.New("fails the screen")

// prepareHistory checks the versions of d and returns the write that
// keeps them: each record's versions are taken only when it has none kept
// here (a record's own history is never merged with a file's), at the
// version numbers the file gives, the last HistoryKeep of them.
func (m *Archive) prepareHistory(d *Document) (func(ctx context.Context) error, error) {
	kept := d.History[:0:0]
	defer func() { d.History = kept }()
	for i := range d.History {
		e := &d.History[i]
		if p := check.ID("id", e.ID); p != "" {
			return nil, fmt.Errorf("history[%d]: %w", i, engine.Invalid("history", p))
		}
		if p := check.Text("op", e.Op, check.MaxWord, false); p != "" || e.Op == "" {
			return nil, fmt.Errorf("history[%d]: %w", i, engine.Invalid("history", "op: "+p))
		}
		if err := e.By.Check(); err != nil {
			return nil, fmt.Errorf("history[%d]: %w", i, err)
		}
		if history.IsAbsent(e.Record) {
			return nil, fmt.Errorf("history[%d]: %w", i, engine.Invalid("history", "the record is empty"))
		}
		rec, err := m.checkRecord(e.Kind, e.Record, true)
		if errors.Is(err, errScreened) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("history[%d]: %w", i, err)
		}
		e.Record = rec
		kept = append(kept, *e)
	}
	return func(ctx context.Context) error {
		if len(d.History) == 0 {
			return nil
		}
		return m.DB().Update(ctx, func(tx kv.Txn) error {
			taken := map[[2]string]bool{}
			for _, e := range d.History {
				k := [2]string{e.Kind, e.ID}
				ok, seen := taken[k]
				if !seen {
					_, found, err := history.Last(tx, e.Kind, e.ID)
					if err != nil {
						return err
					}
					ok = !found
					taken[k] = ok
				}
				if !ok {
					continue
				}
				b, err := history.Encode(e.Kind, e.Version, history.Change{At: e.At, By: e.By, Op: e.Op}, e.Record)
				if err != nil {
					return err
				}
				if err := history.Put(tx, e.Kind, e.ID, e.Version, b, history.KeepN(m.HistoryKeep())); err != nil {
					return err
				}
			}
			return nil
		})
	}, nil
}

// IsSHA256 reports whether sha can be a file's SHA-256 as engine import
// prints it: 64 lowercase hex digits.
func IsSHA256(sha string) bool {
	if len(sha) != 64 {
		return false
	}
	for _, r := range sha {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// ImportReverted is what RevertImport did, by kind.
type ImportReverted struct {
	SHA256 string `json:"sha256"`
	history.Kinds
}

// RevertImport undoes everything the import of the file with digest sha
// changed, as the kept versions say (they carry by.sha256): every lesson,
// fact, selector and trajectory it replaced goes back to its version
// before the import, every one it created is removed. The revert's own
// changes are kept as versions (op revert), so it can be undone too.
func RevertImport(ctx context.Context, m *memory.Memory, sha string) (*ImportReverted, error) {
	if !IsSHA256(sha) {
		return nil, engine.Invalid("revert", `the path parameter "sha256" is not a file's SHA-256 (64 lowercase hex digits, as engine import prints it)`)
	}
	out := &ImportReverted{SHA256: sha}
	var err error
	if out.Lessons, err = m.Lessons.RevertImport(ctx, sha); err != nil {
		return out, err
	}
	if out.Facts, err = m.Facts.RevertImport(ctx, sha); err != nil {
		return out, err
	}
	if out.Selectors, err = m.Selectors.RevertImport(ctx, sha); err != nil {
		return out, err
	}
	if out.Trajectories, err = m.Trajectories.RevertImport(ctx, sha); err != nil {
		return out, err
	}
	return out, nil
}
