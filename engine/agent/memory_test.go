package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/selector"
)

// runEvents reads a run's memory_events.jsonl.
func runEvents(t *testing.T, res *Result) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(res.Dir, EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func named(evs []map[string]any, name string) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e["event"] == name {
			out = append(out, e)
		}
	}
	return out
}

// A run's post-run learning prunes first, and the run's event log says so
// when a stale learned lesson went; a run with nothing stale logs no
// lessons_pruned (the seed emits it when lessons are removed).
func TestRunPrunesBeforeLearning(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t)
	res := mustRun(t, config(t, db, newShop(), &fakeModel{p: naive}))
	if got := named(runEvents(t, res), event.LessonsPruned); len(got) != 0 {
		t.Fatalf("nothing stale, yet %v", got)
	}
	// A learned lesson last used 100 days ago, used once: stale.
	then := time.Now().AddDate(0, 0, -100)
	old := memory.New(db, memory.Options{Now: func() time.Time { return then }})
	l, _, err := old.Lessons.Record(ctx, lesson.Lesson{Lesson: "Wait for the spinner on other.test", Category: lesson.SiteSpecific,
		Domain: "other.test", Source: lesson.SourceLearned}, "")
	if err != nil {
		t.Fatal(err)
	}
	before, err := lesson.New(db, lesson.Options{}).List(ctx, lesson.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	res = mustRun(t, config(t, db, newShop(), &fakeModel{p: naive}))
	got := named(runEvents(t, res), event.LessonsPruned)
	if len(got) != 1 || got[0]["pruned_count"] != 1.0 || got[0]["remaining_count"] != float64(len(before)-1) {
		t.Fatalf("lessons_pruned in the run's events: %v (lessons before: %d)", got, len(before))
	}
	if _, err := lesson.New(db, lesson.Options{}).Get(ctx, l.ID); err == nil {
		t.Fatal("the stale lesson survived the run")
	}
}

// staleSearch is the shop after a change: the remembered search box is
// covered by a promotion, whatever the model does.
type staleSearch struct{ *shop }

func (s staleSearch) Act(ctx context.Context, a engine.Action) error {
	if a.Ref == "e2" {
		return intercepted("div#promo")
	}
	return s.shop.Act(ctx, a)
}

// An action on an element whose selector memory offered fails on the
// page's side: the selector gets a failure and its score drops. A failure
// of engine origin (a name the page does not have) records none.
func TestRunRecordsSelectorFailure(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t)
	if res := mustRun(t, config(t, db, newShop(), &fakeModel{p: naive})); !res.Success {
		t.Fatalf("cold run: %+v", res)
	}
	find := func() selector.Selector {
		t.Helper()
		ss, err := selector.New(db, selector.Options{}).Lookup(ctx, "http://shop.test/", "searchbox", "Search products")
		if err != nil || len(ss) != 1 {
			t.Fatalf("selectors for Search products: %+v, %v", ss, err)
		}
		return ss[0]
	}
	was := find()
	if was.Failures != 0 {
		t.Fatalf("before: %+v", was)
	}
	m := &fakeModel{p: naive}
	cfg := config(t, db, newShop(), m)
	cfg.Browser = staleSearch{newShop()}
	res := mustRun(t, cfg)
	if res.Success {
		t.Fatalf("the changed shop cannot be searched: %+v", res)
	}
	now := find()
	if now.Failures != 1 || now.Score() >= was.Score() || now.LastFailure.IsZero() || now.Successes != was.Successes {
		t.Fatalf("after a browser-side failure on the offered element: was %+v, now %+v", was, now)
	}
	// Offered no more once its score is not positive: the next context
	// leaves it out.
	known, err := selector.New(db, selector.Options{}).Known(ctx, "http://shop.test/", 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range known {
		if s.Name == "Search products" && now.Score() <= 0 {
			t.Fatalf("a selector with score %d still offered", now.Score())
		}
	}
	if got := named(runEvents(t, res), "selector_recorded"); len(got) == 0 {
		t.Fatal("no selector_recorded event for the failure")
	}
}
