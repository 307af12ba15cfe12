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
