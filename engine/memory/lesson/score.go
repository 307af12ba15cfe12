package lesson

import (
	"cmp"

	"github.com/engine-dev/engine/engine/domain"
)

// Error recall's score (Trigger A) of a lesson for a failure: the weights
// of what the lesson's entry has in common with it, added up. The compiled
// index (index.go) and the scan it replaces (scanError) both score with
// errorScore, and rank lessons of equal score with rankMatch.
const (
	weightPattern = 4 // the lesson's error_pattern occurs in the error text
	weightCommand = 2 // its failed_command is the failed command's verb
	// weightSite: it is bound to the host or a domain the host is within;
	// it counts only beside one of the others.
	weightSite = 1
)

// errorScore scores the entry m for a failure with the error et on host
// ("" when unknown); 0 means it does not match. cmdMatch is set for entries
// filed under the failing verb. A lesson bound to another site never
// matches.
func errorScore(m *matchEntry, cmdMatch bool, et *errorText, host string) int {
	if m.domain != "" && (host == "" || !domain.Within(host, m.domain)) {
		return 0
	}
	score := 0
	if et.has(m.pattern) {
		score += weightPattern
	}
	if cmdMatch {
		score += weightCommand
	}
	if score == 0 {
		return 0
	}
	if m.domain != "" {
		score += weightSite
	}
	return score
}

// rankMatch orders entries of equal score as recall ranks them: an
// unhelpful lesson (engine.Counts.Unhelpful: shown UnhelpfulAfter times,
// never helped) after the others, then more used, more helpful, more
// recently used, then by id.
func rankMatch(a, b *matchEntry) int {
	return cmp.Or(
		cmpUnhelpful(a.shown, a.helped, b.shown, b.helped),
		cmp.Compare(b.useCount, a.useCount),
		cmp.Compare(b.helped, a.helped),
		cmp.Compare(b.lastUsed, a.lastUsed),
		cmp.Compare(a.id, b.id),
	)
}

// rankCmp is rankMatch for compiled entries: the order of the index's
// ranked lists.
func rankCmp(a, b *ientry) int { return rankMatch(&a.matchEntry, &b.matchEntry) }
