package engine

import "time"

// Checked is what a memory that refers to a page was last checked against:
// the page's path, the structural fingerprints (engine/memory/fingerprint) of the
// element it acts on (empty for a memory of no element) and of the page,
// and when. Selectors and site-bound lessons keep one; a difference from
// the page now is what a stale mark's reason names.
type Checked struct {
	Path        string    `json:"path,omitempty"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	Page        string    `json:"page,omitempty"`
	At          time.Time `json:"at,omitzero"`
}

// Stale marks a memory that stopped holding on its page: when, in which
// run, at which step of a trajectory (1-based; 0 for the other kinds) and
// why. A stale memory is left out of prompts and replay until a later
// success re-validates it.
type Stale struct {
	At     time.Time `json:"at"`
	Run    string    `json:"run,omitempty"`
	Step   int       `json:"step,omitempty"`
	Reason string    `json:"reason"`
}
