package archive

import (
	"fmt"
	"strings"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/internal/check"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// Imported records are checked with the stores' own Check functions
// (fact.Check, selector.Check, trajectory.Check): the rules of what a record
// is live once, in the store that enforces them. On top, text that comes
// from outside is held to the input limits (valid UTF-8, no control
// characters where text goes into keys, bounded lengths; see
// engine/memory/internal/check), which the agent's own records, clipped as they
// are made, do not need.

func checkFact(f fact.Fact) error {
	if err := fact.Check(f); err != nil {
		return err
	}
	if p := textProblem(textField{"the key", f.Key, check.MaxLine, false}, textField{"the value", f.Value, check.MaxText, true}); p != "" {
		return engine.Invalid("fact", p)
	}
	return nil
}

func checkSelector(s selector.Selector) error {
	if err := selector.Check(s); err != nil {
		return err
	}
	if p := textProblem(textField{"the role", s.Role, check.MaxWord, false}, textField{"the accessible name", s.Name, check.MaxLine, false},
		textField{"the selector", s.Selector, check.MaxText, false}, textField{"the path", s.Path, check.MaxLine, false}); p != "" {
		return engine.Invalid("selector", p)
	}
	return nil
}

func checkTrajectory(t trajectory.Trajectory) error {
	if err := trajectory.Check(t); err != nil {
		return err
	}
	if p := textProblem(textField{"the goal", t.Goal, check.MaxText, true}); p != "" {
		return engine.Invalid("trajectory", p)
	}
	if t.ID != "" {
		if p := check.ID("id", t.ID); p != "" {
			return engine.Invalid("trajectory", p)
		}
	}
	for i, st := range t.Steps {
		if p := textProblem(textField{"its action", st.Action, check.MaxWord, false}, textField{"its role", st.Role, check.MaxWord, false},
			textField{"its name", st.Name, check.MaxLine, false}, textField{"its selector", st.Selector, check.MaxText, false},
			textField{"its value", st.Value, check.MaxText, true}, textField{"its url", st.URL, check.MaxText, false}); p != "" {
			return engine.Invalid("trajectory", fmt.Sprintf("step %d: %s", i+1, p))
		}
	}
	return nil
}

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

// sameSelector reports whether two records are the same selector of the
// same element on the same page scope.
func sameSelector(a, b selector.Selector) bool {
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	return a.Domain == b.Domain && domain.PathScope(a.Path) == domain.PathScope(b.Path) &&
		norm(a.Role) == norm(b.Role) && norm(a.Name) == norm(b.Name) &&
		strings.TrimSpace(a.Selector) == strings.TrimSpace(b.Selector)
}

// mergeSelector is what importing s stores when the store holds have (nil:
// none): the larger of the two counts of successes and of failures, the
// earlier first sighting and the later last success and failure. So
// importing the same export twice changes nothing.
func mergeSelector(s selector.Selector, have *selector.Selector) selector.Selector {
	if have == nil {
		return s
	}
	s.Successes = max(s.Successes, have.Successes)
	s.Failures = max(s.Failures, have.Failures)
	if s.FirstSeen.IsZero() || !have.FirstSeen.IsZero() && have.FirstSeen.Before(s.FirstSeen) {
		s.FirstSeen = have.FirstSeen
	}
	if have.LastSuccess.After(s.LastSuccess) {
		s.LastSuccess = have.LastSuccess
	}
	if have.LastFailure.After(s.LastFailure) {
		s.LastFailure = have.LastFailure
	}
	if have.Provenance != (engine.Provenance{}) {
		s.Provenance = have.Provenance // the first recorder's, as a use keeps it
	}
	if s.LastRun == "" {
		s.LastRun = have.LastRun
	}
	return s
}

// expired reports whether a trajectory recorded at t has outlived the
// trajectory store's default lifetime at now (the store would refuse it).
func expired(recordedAt, now time.Time) bool {
	return !recordedAt.IsZero() && !recordedAt.Truncate(time.Second).Add(trajectory.DefaultTTL).After(now)
}
