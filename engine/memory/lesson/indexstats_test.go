package lesson

import (
	"context"
	"fmt"
	"sync"
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

// Writers of one site racing each other and its recalls keep its cached
// index: each write is applied to it (sitecache's Advance and Prepare,
// whatever order the writers and readers arrive in), so the site is
// compiled once, and the index then answers as a fresh compile would.
func TestConcurrentWritesKeepTheIndex(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const writers, each = 4, 40
	rec := func(w, i int) Lesson {
		return Lesson{Lesson: fmt.Sprintf("Close the overlay %d-%d first.", w, i), Category: ErrorRecovery, FailedCommand: "click",
			ErrorPattern: fmt.Sprintf("overlay %d-%d would receive the click", w, i), Domain: "shop.example"}
	}
	e.record(rec(-1, 0), "")
	if _, err := e.s.RecallError(ctx, "click e1", "overlay -1-0 would receive the click", "shop.example"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.RecallDomain(ctx, "shop.example"); err != nil {
		t.Fatal(err)
	}
	before := ReadIndexStats()
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	done := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, _, err := e.s.Record(ctx, rec(w, i), ""); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var readers sync.WaitGroup
	readers.Add(1)
	go func() { // recalls meanwhile, each at the snapshot it opens
		defer readers.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if _, err := e.s.RecallError(ctx, "click e1", fmt.Sprintf("overlay %d-%d would receive the click", i%writers, i%each), "shop.example"); err != nil {
				errs <- err
				return
			}
			if _, err := e.s.RecallDomain(ctx, "shop.example"); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for w := range writers {
		for _, i := range []int{0, each - 1} {
			got, err := e.s.RecallError(ctx, "click e1", fmt.Sprintf("overlay %d-%d would receive the click", w, i), "shop.example")
			if err != nil || len(got) == 0 || got[0].Lesson != rec(w, i).Lesson {
				t.Fatalf("recall of %d-%d after the writes: %v, %v", w, i, got, err)
			}
		}
	}
	if after := ReadIndexStats(); after.Builds != before.Builds {
		t.Errorf("%d writes racing recalls made %d compiles of the cached site, want none", writers*each, after.Builds-before.Builds)
	}
}
