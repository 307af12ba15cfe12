package archive

import (
	"strings"
	"time"

	"github.com/engine-dev/engine/engine/selector"
	"github.com/engine-dev/engine/engine/trajectory"
)

// Records are checked with the stores' own Check functions (fact.Check,
// selector.Check, trajectory.Check): the rules live once, in the store that
// enforces them.

// sameSelector reports whether two records are the same selector of the
// same element on the same page scope.
func sameSelector(a, b selector.Selector) bool {
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	return a.Domain == b.Domain && selector.NormalisePath(a.Path) == selector.NormalisePath(b.Path) &&
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
	return s
}

// expired reports whether a trajectory recorded at t has outlived the
// trajectory store's default lifetime at now (the store would refuse it).
func expired(recordedAt, now time.Time) bool {
	return !recordedAt.IsZero() && !recordedAt.Truncate(time.Second).Add(trajectory.DefaultTTL).After(now)
}
