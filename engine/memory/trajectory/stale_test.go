package trajectory

import (
	"context"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
)

// A trajectory marked stale leaves matching (also through a fresh Store,
// which reads the index back), is listed with its mark, and a newer
// successful run of its template re-validates it.
func TestMarkStaleUntilReplaced(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{Provenance: engine.Provenance{Source: engine.SourceLearned, Run: "run-2"}})
	tr := e.record(searchRun())
	if m := e.match("www.shop.example", "search tennis balls"); m == nil {
		t.Fatal("no match before the mark")
	}
	n, err := e.s.MarkStale(ctx, []StaleMark{
		{Domain: "www.shop.example", ID: tr.ID, Step: 2, Reason: `the expected element is not there: the page has no button "Search"`},
		{Domain: "www.shop.example", ID: "traj_0000000000000000", Step: 1, Reason: "gone"},
	})
	if err != nil || n != 1 {
		t.Fatalf("MarkStale = %d, %v; want 1 marked", n, err)
	}
	got, err := e.s.Get(ctx, "www.shop.example", tr.ID)
	if err != nil || got.Stale == nil || got.Stale.Step != 2 || got.Stale.Run != "run-2" || !got.Stale.At.Equal(e.now) ||
		got.Stale.Reason != `the expected element is not there: the page has no button "Search"` || !got.ExpiresAt.Equal(tr.ExpiresAt) {
		t.Fatalf("after MarkStale: %+v, %v", got.Stale, err)
	}
	if m := e.match("www.shop.example", "search tennis balls"); m != nil {
		t.Fatalf("a stale trajectory matched: %+v", m.Trajectory.ID)
	}
	fresh := New(e.db, Options{Now: func() time.Time { return e.now }})
	if m, err := fresh.Match(ctx, "www.shop.example", "search tennis balls"); err != nil || m != nil {
		t.Fatalf("a fresh store matched the stale trajectory: %v, %v", m, err)
	}
	if ts, _ := e.s.List(ctx, "shop.example"); len(ts) != 1 || ts[0].Stale == nil {
		t.Fatalf("List = %+v; want the stale one listed", ts)
	}
	// Marked again: the first mark is kept.
	if n, err := e.s.MarkStale(ctx, []StaleMark{{Domain: "www.shop.example", ID: tr.ID, Step: 4, Reason: "later"}}); err != nil || n != 0 {
		t.Fatalf("second mark: %d, %v", n, err)
	}
	// A newer successful run of the template re-validates it.
	e.now = e.now.Add(time.Hour)
	again := e.record(searchRun())
	if again.Stale != nil || again.Runs != 2 {
		t.Fatalf("replaced: %+v", again)
	}
	if m := e.match("www.shop.example", "search tennis balls"); m == nil || m.Trajectory.ID != tr.ID {
		t.Fatalf("no match after re-validation: %+v", m)
	}
	if m, err := fresh.Match(ctx, "www.shop.example", "search tennis balls"); err != nil || m == nil {
		t.Fatalf("a fresh store does not match after re-validation: %v, %v", m, err)
	}
}

func TestMarkStaleChecksAndImports(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	tr := e.record(searchRun())
	for _, m := range []StaleMark{
		{Domain: "www.shop.example", ID: tr.ID, Step: 0, Reason: "x"},
		{Domain: "www.shop.example", ID: tr.ID, Step: 1, Reason: " "},
		{Domain: "www.shop.example", ID: "", Step: 1, Reason: "x"},
		{Domain: "", ID: tr.ID, Step: 1, Reason: "x"},
	} {
		if _, err := e.s.MarkStale(ctx, []StaleMark{m}); err == nil {
			t.Errorf("%+v accepted", m)
		}
	}
	// An imported stale trajectory stays out of matching.
	imp := searchRun()
	imp.Domain, imp.Stale = "other.example", &Stale{At: e.now, Step: 1, Reason: "imported stale"}
	got := e.record(imp)
	if got.Stale == nil {
		t.Fatalf("import dropped the mark: %+v", got)
	}
	if m := e.match("other.example", "search tennis balls"); m != nil {
		t.Fatal("an imported stale trajectory matched")
	}
	imp.Stale.Reason = ""
	if _, err := e.s.Record(ctx, imp); err == nil {
		t.Fatal("a stale mark without a reason was accepted")
	}
}
