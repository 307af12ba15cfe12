package archive

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/fact"
	"github.com/engine-dev/engine/engine/internal/check"
	"github.com/engine-dev/engine/engine/selector"
	"github.com/engine-dev/engine/engine/trajectory"
	"github.com/engine-dev/engine/kv"
)

// The fact, selector and trajectory stores validate as they write, one
// record at a time; these checks are the same rules applied before the
// first write, so that bad input writes nothing.

// textProblem checks fields of imported text (see check.Text); it returns
// the first problem, or "".
func textProblem(fields ...textField) string {
	for _, f := range fields {
		if p := check.Text(f.name, f.v, f.max, f.multiline); p != "" {
			return p
		}
	}
	return ""
}

type textField struct {
	name, v   string
	max       int
	multiline bool
}

func checkFact(f fact.Fact) error {
	if _, err := domain.Host(f.Domain); err != nil {
		return engine.Invalid("fact", fmt.Sprintf("domain: %v", err))
	}
	if p := textProblem(textField{"the key", f.Key, check.MaxLine, false}, textField{"the value", f.Value, check.MaxText, true}); p != "" {
		return engine.Invalid("fact", p)
	}
	if _, err := fact.ParseType(string(f.Type)); err != nil {
		return err
	}
	if strings.TrimSpace(f.Key) == "" {
		return engine.Invalid("fact", "the key is empty")
	}
	if strings.TrimSpace(f.Value) == "" {
		return engine.Invalid("fact", "the value is empty")
	}
	if math.IsNaN(f.Confidence) || f.Confidence < 0 || f.Confidence > 1 {
		return engine.Invalid("fact", fmt.Sprintf("confidence %v is outside [0, 1]", f.Confidence))
	}
	if f.Sources < 0 {
		return engine.Invalid("fact", fmt.Sprintf("sources %d is negative", f.Sources))
	}
	return nil
}

func checkSelector(s selector.Selector) error {
	if _, err := domain.Host(s.Domain); err != nil {
		return engine.Invalid("selector", fmt.Sprintf("domain: %v", err))
	}
	if p := textProblem(textField{"the role", s.Role, check.MaxWord, false}, textField{"the accessible name", s.Name, check.MaxLine, false},
		textField{"the selector", s.Selector, check.MaxText, false}, textField{"the path", s.Path, check.MaxLine, false}); p != "" {
		return engine.Invalid("selector", p)
	}
	switch {
	case strings.TrimSpace(s.Role) == "":
		return engine.Invalid("selector", "the element's role is empty (button, link, textbox, ...)")
	case strings.TrimSpace(s.Name) == "":
		return engine.Invalid("selector", "the element's accessible name is empty")
	case strings.TrimSpace(s.Selector) == "":
		return engine.Invalid("selector", "the selector is empty")
	case s.Successes < 0 || s.Failures < 0:
		return engine.Invalid("selector", fmt.Sprintf("successes %d and failures %d must not be negative", s.Successes, s.Failures))
	case s.Successes+s.Failures == 0:
		return engine.Invalid("selector", "a selector needs at least one success or failure")
	}
	return nil
}

// sameSelector reports whether two records are the same selector of the
// same element on the same page scope.
func sameSelector(a, b selector.Selector) bool {
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	return a.Domain == b.Domain && a.Path == b.Path && norm(a.Role) == norm(b.Role) &&
		norm(a.Name) == norm(b.Name) && strings.TrimSpace(a.Selector) == strings.TrimSpace(b.Selector)
}

// replaySelector stores an imported selector through the selector store's
// only write, Record: one observation per success and failure, each at the
// time the record says it happened, so counts and times come back as they
// were. A selector the store already holds keeps the larger of its and the
// import's counts (only the difference is replayed), so importing the same
// export twice changes nothing. (The selector store has no Put yet; see
// docs-drafts/runs.md.)
func replaySelector(ctx context.Context, db kv.Store, s selector.Selector, have *selector.Selector) error {
	type call struct {
		at     time.Time
		failed bool
	}
	successes, failures := s.Successes, s.Failures
	if have != nil {
		successes = max(0, successes-have.Successes)
		failures = max(0, failures-have.Failures)
	}
	var calls []call
	first := s.FirstSeen
	for i := range successes {
		at := first
		if i == successes-1 && !s.LastSuccess.IsZero() {
			at = s.LastSuccess
		}
		calls = append(calls, call{at, false})
	}
	for i := range failures {
		at := first
		if i == failures-1 && !s.LastFailure.IsZero() {
			at = s.LastFailure
		}
		calls = append(calls, call{at, true})
	}
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].at.Before(calls[j].at) })
	var at time.Time
	st := selector.New(db, selector.Options{Now: func() time.Time { return at }})
	for _, c := range calls {
		at = c.at
		if at.IsZero() {
			at = time.Now()
		}
		_, err := st.Record(ctx, selector.Observation{
			Domain: s.Domain, Path: s.Path, Role: s.Role, Name: s.Name, Selector: s.Selector, Failed: c.failed,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func checkTrajectory(t trajectory.Trajectory) error {
	if _, err := domain.Host(t.Domain); err != nil {
		return engine.Invalid("trajectory", fmt.Sprintf("domain: %v", err))
	}
	if strings.TrimSpace(t.Goal) == "" {
		return engine.Invalid("trajectory", "the goal is empty")
	}
	if p := textProblem(textField{"the goal", t.Goal, check.MaxText, true}); p != "" {
		return engine.Invalid("trajectory", p)
	}
	if t.ID != "" {
		if p := check.ID("id", t.ID); p != "" {
			return engine.Invalid("trajectory", p)
		}
	}
	if len(t.Steps) == 0 {
		return engine.Invalid("trajectory", "a trajectory needs at least one step; this one has none")
	}
	if t.DurationMs < 0 {
		return engine.Invalid("trajectory", fmt.Sprintf("duration_ms %d is negative", t.DurationMs))
	}
	for i, st := range t.Steps {
		if strings.TrimSpace(st.Action) == "" {
			return engine.Invalid("trajectory", fmt.Sprintf("step %d has no action", i+1))
		}
		if p := textProblem(textField{"its action", st.Action, check.MaxWord, false}, textField{"its role", st.Role, check.MaxWord, false},
			textField{"its name", st.Name, check.MaxLine, false}, textField{"its selector", st.Selector, check.MaxText, false},
			textField{"its value", st.Value, check.MaxText, true}, textField{"its url", st.URL, check.MaxText, false}); p != "" {
			return engine.Invalid("trajectory", fmt.Sprintf("step %d: %s", i+1, p))
		}
	}
	return nil
}

// expired reports whether a trajectory recorded at t has outlived the
// trajectory store's default lifetime at now (the store would refuse it).
func expired(recordedAt, now time.Time) bool {
	return !recordedAt.IsZero() && !recordedAt.Truncate(time.Second).Add(trajectory.DefaultTTL).After(now)
}
