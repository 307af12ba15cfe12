package engine

// Counts is a memory's attribution: the run steps whose context showed it,
// those whose action used it, and those used ones it helped (the action
// worked and the run succeeded). Facts, selectors and trajectories keep
// them; a run sends what it adds.
type Counts struct {
	Shown  int `json:"shown,omitempty"`
	Used   int `json:"used,omitempty"`
	Helped int `json:"helped,omitempty"`
}

// Check returns an ErrInvalid error about what unless 0 ≤ helped ≤ used ≤
// shown: a step can use only what it was shown, and be helped only by what
// it used.
func (c Counts) Check(what string) error {
	if c.Shown < 0 || c.Used < 0 || c.Helped < 0 || c.Used > c.Shown || c.Helped > c.Used {
		return Invalid(what, "want 0 ≤ helped ≤ used ≤ shown")
	}
	return nil
}

// Add adds d to c.
func (c *Counts) Add(d Counts) {
	c.Shown += d.Shown
	c.Used += d.Used
	c.Helped += d.Helped
}

// UnhelpfulAfter is how many times a memory is shown without ever helping
// before it ranks after the others (Unhelpful).
const UnhelpfulAfter = 10

// PruneUnhelpfulAfter is how many times a learned memory is shown without
// ever helping before a prune removes it (PrunableUnhelpful). Seeds and a
// person's memory are never removed for it.
const PruneUnhelpfulAfter = 30

// Unhelpful reports whether c was shown UnhelpfulAfter times or more and
// never helped: recall and context rank it after the others.
func (c Counts) Unhelpful() bool { return c.Shown >= UnhelpfulAfter && c.Helped == 0 }

// PrunableUnhelpful reports whether c was shown PruneUnhelpfulAfter times
// or more and never helped: a learned memory with such counts is pruned.
func (c Counts) PrunableUnhelpful() bool { return c.Shown >= PruneUnhelpfulAfter && c.Helped == 0 }
