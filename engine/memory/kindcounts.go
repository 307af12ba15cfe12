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

// String renders "3 lessons, 2 facts, ..." (kinds with none left out).
func (c KindCounts) String() string {
	var parts []string
	for _, k := range c {
		if k.Count > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", k.Count, k.Kind))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}
