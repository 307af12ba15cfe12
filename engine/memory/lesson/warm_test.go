package lesson

import (
	"context"
	"fmt"
	"testing"
)

// Warm compiles every site's recall index (the global one too), so the
// first recalls after it compile nothing; a cancelled Warm stops without
// an error.
func TestWarm(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i, d := range []string{"a.example", "shop.example", "sub.shop.example", "", "z.example"} {
		e.record(Lesson{Lesson: fmt.Sprintf("Close the overlay %d first.", i), Category: ErrorRecovery, FailedCommand: "click",
			ErrorPattern: fmt.Sprintf("overlay %d would receive the click", i), Domain: d}, "")
	}
	indexes[partErrors].Clear()
	indexes[partHosts].Clear()
	sites, err := e.s.lessonSites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sites) != "[- a.example shop.example z.example]" {
		t.Fatalf("sites %v, want the global one first, then each site once", sites)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := e.s.Warm(cancelled); err != nil {
		t.Fatalf("a cancelled warm: %v", err)
	}
	if err := e.s.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	before := ReadIndexStats()
	for i, d := range []string{"a.example", "shop.example", "sub.shop.example", "www.z.example"} {
		if _, err := e.s.RecallError(ctx, "click e1", fmt.Sprintf("overlay %d would receive the click", i), d); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.RecallDomain(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if after := ReadIndexStats(); after.Builds != before.Builds {
		t.Errorf("recalls after Warm compiled %d indexes, want none", after.Builds-before.Builds)
	}
}
