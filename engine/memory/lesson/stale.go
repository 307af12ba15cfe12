package lesson

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/fingerprint"
	"github.com/engine-dev/engine/engine/memory/internal/check"
	"github.com/engine-dev/engine/kv"
)

// EventStale: site-bound lessons were marked stale or checked again.
// Fields: stale (ids marked), checked (how many recorded their page).
const EventStale = "lesson_stale"

// Checked is what the memory was last checked against (one type for every kind).
type Checked = engine.Checked

// Stale is why and since when the memory stopped holding (one type for every kind).
type Stale = engine.Stale

// PageCheck says a run learned lesson ID (again) from a failure on the
// page at Path with fingerprint Page: the lesson records the page and, if
// it was stale, is re-validated (its recovery worked there again).
type PageCheck struct {
	ID   string `json:"id"`
	Path string `json:"path"`
	Page string `json:"page"`
}

// PageFailure says a step shown lesson ID then failed on the page's side:
// Action (its verb) on Element (its accessible name, "" for none), on the
// page at Path with fingerprint Page.
type PageFailure struct {
	ID      string `json:"id"`
	Action  string `json:"action"`
	Element string `json:"element,omitempty"`
	Path    string `json:"path"`
	Page    string `json:"page"`
}

// PageMarks is one run's findings about its lessons' pages, sent at its
// end in one request.
type PageMarks struct {
	Checked []PageCheck   `json:"checked,omitempty"`
	Failed  []PageFailure `json:"failed,omitempty"`
}

// PageMarked is what MarkPages did.
type PageMarked struct {
	Checked int      `json:"checked"`
	Stale   []string `json:"stale"`
}

// recommends reports whether lesson text recommends the failed action: it
// names the action's element (3 characters or more), or its verb when the
// verb is not the one the lesson is about failing.
func recommends(l *Lesson, action, element string) bool {
	text := strings.ToLower(l.Lesson)
	if n := strings.ToLower(strings.Join(strings.Fields(element), " ")); len(n) >= 3 && strings.Contains(text, n) {
		return true
	}
	v := strings.ToLower(strings.TrimSpace(action))
	if v == "" || v == strings.ToLower(l.FailedCommand) {
		return false
	}
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\b`).MatchString(text)
}

// MarkPages records, in one transaction, what one run found about its
// site-bound lessons' pages (lessons bound to no site are skipped, and so
// is an id no longer kept):
//   - a PageCheck records the page the lesson was learned on and clears a
//     stale mark (re-validation);
//   - a PageFailure marks the lesson stale when the action failed on the
//     lesson's own page (the same path), that page's fingerprint is not the
//     one it was learned on, and the lesson recommends the action; a stale
//     lesson keeps its first mark, and one learned before fingerprints (no
//     Checked) is never marked.
//
// Checks apply before failures: a lesson learned again in the same run is
// not marked by it.
func (s *Store) MarkPages(ctx context.Context, in PageMarks) (*PageMarked, error) {
	for _, c := range in.Checked {
		if err := checkMark(c.ID, c.Path, c.Page); err != nil {
			return nil, err
		}
	}
	for _, f := range in.Failed {
		if err := checkMark(f.ID, f.Path, f.Page); err != nil {
			return nil, err
		}
		if p := check.Text("action", f.Action, check.MaxWord, false); p != "" {
			return nil, engine.Invalid("lesson page", p)
		}
		if p := check.Text("element", f.Element, check.MaxLine, false); p != "" {
			return nil, engine.Invalid("lesson page", p)
		}
	}
	now := s.opts.Now().UTC()
	run := s.opts.Provenance.Run
	out := &PageMarked{Stale: []string{}}
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		out.Checked, out.Stale = 0, out.Stale[:0]
		checked := map[string]bool{}
		update := func(id string, change func(l *Lesson) bool) error {
			old, err := load(tx, id)
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			n := *old
			if n.Domain == "" || !change(&n) {
				return nil
			}
			if err := s.keep(tx, OpStale, old); err != nil {
				return err
			}
			return put(tx, old, &n)
		}
		for _, c := range in.Checked {
			err := update(c.ID, func(l *Lesson) bool {
				l.Checked = &Checked{Path: domain.PathScope(c.Path), Page: c.Page, At: now}
				l.Stale = nil
				return true
			})
			if err != nil {
				return err
			}
			checked[c.ID] = true
			out.Checked++
		}
		for _, f := range in.Failed {
			if checked[f.ID] {
				continue
			}
			path := domain.PathScope(f.Path)
			err := update(f.ID, func(l *Lesson) bool {
				c := l.Checked
				if l.Stale != nil || c == nil || c.Path != path || c.Page == "" || c.Page == f.Page || !recommends(l, f.Action, f.Element) {
					return false
				}
				what := f.Action
				if f.Element != "" {
					what += fmt.Sprintf(" %q", f.Element)
				}
				l.Stale = &Stale{At: now, Run: run, Reason: fmt.Sprintf("%s failed on %s; %s", what, path,
					fingerprint.Compare(engine.Checked{Page: c.Page}, engine.Checked{Page: f.Page}))}
				out.Stale = append(out.Stale, l.ID)
				return true
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lesson: mark pages: %w", err)
	}
	if out.Checked > 0 || len(out.Stale) > 0 {
		s.opts.Events.Emit(EventStale, map[string]any{"stale": out.Stale, "checked": out.Checked})
	}
	return out, nil
}

// OpStale is the op of a version replaced by MarkPages.
const OpStale = "stale"

func checkMark(id, path, page string) error {
	if strings.TrimSpace(id) == "" {
		return engine.Invalid("lesson page", "id is empty")
	}
	if p := check.Text("path", path, check.MaxLine, false); p != "" {
		return engine.Invalid("lesson page", p)
	}
	if p := check.Fingerprint("page", page); p != "" {
		return engine.Invalid("lesson page", p)
	}
	return nil
}

// checkPages checks a lesson's Checked and Stale (an import's).
func checkPages(l *Lesson) error {
	if c := l.Checked; c != nil {
		if p := check.Checked(*c, check.MaxLine); p != "" {
			return engine.Invalid("lesson", p)
		}
	}
	if st := l.Stale; st != nil {
		if p := check.Stale(*st, false); p != "" {
			return engine.Invalid("lesson", p)
		}
	}
	return nil
}

// StaleList returns the stale lessons that apply on host ("" = every
// site), in list order.
func (s *Store) StaleList(ctx context.Context, host string) ([]Lesson, error) {
	all, err := s.List(ctx, Filter{Domain: host})
	if err != nil {
		return nil, err
	}
	out := []Lesson{}
	for _, l := range all {
		if l.Stale != nil {
			out = append(out, l)
		}
	}
	return out, nil
}

// fresh returns ls without its stale lessons: what recall answers.
// Recall's indexes keep stale lessons (a mark is rare and short-lived), so
// RecallError and RecallDomain filter what they found, the one place every
// prompt and API answer gets its lessons from.
//
// Without a stale lesson (the common case) it returns ls itself, and
// allocates nothing.
func fresh(ls []Lesson) []Lesson {
	first := -1
	for i := range ls {
		if ls[i].Stale != nil {
			first = i
			break
		}
	}
	if first < 0 {
		return ls
	}
	out := make([]Lesson, first, len(ls)-1)
	copy(out, ls[:first])
	for i := first + 1; i < len(ls); i++ {
		if ls[i].Stale == nil {
			out = append(out, ls[i])
		}
	}
	return out
}
