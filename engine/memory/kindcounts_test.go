package memory_test

import (
	"testing"

	"github.com/engine-dev/engine/engine/memory"
)

func TestKindCountsStringSingular(t *testing.T) {
	for _, tc := range []struct {
		c    memory.KindCounts
		want string
	}{
		{memory.KindCounts{{Kind: "lessons", Count: 4}, {Kind: "facts", Count: 1}}, "4 lessons, 1 fact"},
		{memory.KindCounts{{Kind: "trajectories", Count: 1}, {Kind: "runs", Count: 0}, {Kind: "planner iterations", Count: 1}}, "1 trajectory, 1 planner iteration"},
		{memory.KindCounts{{Kind: "trajectories", Count: 2}}, "2 trajectories"},
		{memory.KindCounts{{Kind: "lessons", Count: 0}}, "nothing"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.c, got, tc.want)
		}
	}
}
