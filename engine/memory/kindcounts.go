package memory

import (
	"fmt"
	"strings"
)

// KindCounts says how many records of each kind something holds (an
// export document, a site about to be forgotten), in a fixed kind order.
type KindCounts []KindCount

// KindCount is one kind's count.
type KindCount struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// String renders "3 lessons, 1 fact, ..." (kinds with none left out; a
// count of one names its kind in the singular).
func (c KindCounts) String() string {
	var parts []string
	for _, k := range c {
		if k.Count == 1 {
			parts = append(parts, "1 "+singular(k.Kind))
		} else if k.Count > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", k.Count, k.Kind))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// singular is the singular of a kind's plural name: "trajectories" is
// "trajectory", "planner iterations" "planner iteration".
func singular(kind string) string {
	if s, ok := strings.CutSuffix(kind, "ies"); ok {
		return s + "y"
	}
	return strings.TrimSuffix(kind, "s")
}
