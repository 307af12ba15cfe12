package lesson

import (
	"context"
	"fmt"
	"testing"
)

// ReadIndexStats counts a recall's compile of a site's index, and the
// folds of this process's own writes into it, with their time.
func TestIndexStatsCount(t *testing.T) {
	defer func(m int) { overlayMin = m }(overlayMin)
	overlayMin = 1 // fold at every second write of a small bucket
	e := newEnv(t)
	ctx := context.Background()
	rec := func(i int) {
		e.record(Lesson{Lesson: fmt.Sprintf("Dismiss banner %d first.", i), Category: ErrorRecovery, FailedCommand: "click",
			ErrorPattern: fmt.Sprintf("banner %d would receive the click", i), Domain: "shop.example"}, "")
	}
	rec(0)
	before := ReadIndexStats()
	if _, err := e.s.RecallError(ctx, "click e1", "banner 0 would receive the click", "shop.example"); err != nil {
		t.Fatal(err)
	}
	built := ReadIndexStats()
	if built.Builds <= before.Builds || built.BuildTime <= before.BuildTime {
		t.Fatalf("a recall of a site with no compiled index: stats %+v → %+v, want a build counted and timed", before, built)
	}
	for i := 1; i <= 8; i++ {
		rec(i)
	}
	folded := ReadIndexStats()
	if folded.Folds <= built.Folds || folded.FoldTime <= built.FoldTime {
		t.Fatalf("8 own writes to a cached bucket: stats %+v → %+v, want folds counted and timed", built, folded)
	}
}
