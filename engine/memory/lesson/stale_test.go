package lesson

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
)

// A site-bound lesson records the page it was learned on; when the action
// it recommends fails on that page after the page's fingerprint changed,
// it is marked stale (listed, left out of recall)
// until it is learned there again.
func TestLessonStaleOnChangedPage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	l := e.record(Lesson{Lesson: `If click fails with "another element would receive the click", try click "Accept cookies" instead.`,
		Category: ErrorRecovery, FailedCommand: "click", ErrorPattern: "another element would receive the click", Domain: "shop.example"}, "shop.example")
	global := e.record(Lesson{Lesson: "Press Escape to close a popup before you click.", Category: BestPractice}, "")

	// Nothing is marked before the lesson records a page.
	fail := PageFailure{ID: l.ID, Action: "click", Element: "Accept cookies", Path: "https://shop.example/", Page: "bbbbbbbb"}
	if got, err := e.s.MarkPages(ctx, PageMarks{Failed: []PageFailure{fail}}); err != nil || len(got.Stale) != 0 {
		t.Fatalf("unchecked lesson: %+v, %v", got, err)
	}
	got, err := e.s.MarkPages(ctx, PageMarks{Checked: []PageCheck{{ID: l.ID, Path: "https://shop.example/?x=1", Page: "aaaaaaaa"},
		{ID: global.ID, Path: "/", Page: "aaaaaaaa"}, {ID: "l0000000000", Path: "/", Page: "aaaaaaaa"}}})
	if err != nil || got.Checked != 3 {
		t.Fatalf("check: %+v, %v", got, err)
	}
	if g, _ := e.s.Get(ctx, l.ID); g.Checked == nil || g.Checked.Path != "/" || g.Checked.Page != "aaaaaaaa" || !g.Checked.At.Equal(e.now) {
		t.Fatalf("checked %+v", g.Checked)
	}
	if g, _ := e.s.Get(ctx, global.ID); g.Checked != nil {
		t.Fatalf("a lesson bound to no site recorded a page: %+v", g.Checked)
	}

	// Not marked: another page, the same fingerprint, an action the
	// lesson does not recommend.
	for _, f := range []PageFailure{
		{ID: l.ID, Action: "click", Element: "Accept cookies", Path: "/search", Page: "bbbbbbbb"},
		{ID: l.ID, Action: "click", Element: "Accept cookies", Path: "/", Page: "aaaaaaaa"},
		{ID: l.ID, Action: "click", Element: "Buy", Path: "/", Page: "bbbbbbbb"},
		{ID: l.ID, Action: "fill", Element: "Search", Path: "/", Page: "bbbbbbbb"},
	} {
		if got, err := e.s.MarkPages(ctx, PageMarks{Failed: []PageFailure{f}}); err != nil || len(got.Stale) != 0 {
			t.Fatalf("%+v marked: %+v, %v", f, got, err)
		}
	}
	e.s.opts.Provenance.Run = "run-7"
	got, err = e.s.MarkPages(ctx, PageMarks{Failed: []PageFailure{fail}})
	if err != nil || len(got.Stale) != 1 || got.Stale[0] != l.ID {
		t.Fatalf("mark: %+v, %v", got, err)
	}
	g, _ := e.s.Get(ctx, l.ID)
	if g.Stale == nil || g.Stale.Run != "run-7" || g.Stale.Reason != `click "Accept cookies" failed on /; the page changed: fingerprint aaaaaaaa → bbbbbbbb` {
		t.Fatalf("stale %+v", g.Stale)
	}
	// A second failure keeps the first mark.
	fail.Page = "cccccccc"
	if got, _ := e.s.MarkPages(ctx, PageMarks{Failed: []PageFailure{fail}}); len(got.Stale) != 0 {
		t.Fatalf("marked twice: %+v", got)
	}
	stale, err := e.s.StaleList(ctx, "www.shop.example")
	if err != nil || len(stale) != 1 || stale[0].ID != l.ID {
		t.Fatalf("StaleList = %+v, %v", stale, err)
	}
	if other, _ := e.s.StaleList(ctx, "other.example"); len(other) != 0 {
		t.Fatalf("StaleList of another site: %+v", other)
	}
	// Recall leaves it out; its event still names it.
	rd, err := e.s.RecallDomain(ctx, "shop.example")
	if err != nil || len(rd) != 0 {
		t.Fatalf("domain recall %+v, %v", rd, err)
	}
	e.mu.Lock()
	last := e.events[len(e.events)-1]
	e.mu.Unlock()
	if last.Name != event.DomainRecall || last.Fields["matched"] != 1 {
		t.Fatalf("domain recall event %+v", last)
	}
	re, err := e.s.RecallError(ctx, "click", "another element would receive the click: div#promo", "shop.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range re {
		if r.ID == l.ID {
			t.Fatal("error recall kept a stale lesson")
		}
	}
	// Learned again on the page (check and failure in one run: the check
	// wins): re-validated.
	got, err = e.s.MarkPages(ctx, PageMarks{Checked: []PageCheck{{ID: l.ID, Path: "/", Page: "cccccccc"}}, Failed: []PageFailure{fail}})
	if err != nil || len(got.Stale) != 0 {
		t.Fatalf("re-validate: %+v, %v", got, err)
	}
	if g, _ := e.s.Get(ctx, l.ID); g.Stale != nil || g.Checked.Page != "cccccccc" {
		t.Fatalf("after re-validation %+v %+v", g.Stale, g.Checked)
	}
	if h, err := e.s.History(ctx, l.ID); err != nil || len(h) == 0 || h[len(h)-1].Op != OpStale {
		t.Fatalf("history: %+v, %v", h, err)
	}
	// Bad input.
	for _, m := range []PageMarks{
		{Checked: []PageCheck{{ID: "", Path: "/", Page: "aa"}}},
		{Checked: []PageCheck{{ID: l.ID, Path: "/", Page: "not hex"}}},
		{Failed: []PageFailure{{ID: l.ID, Action: strings.Repeat("x", 200), Path: "/", Page: "aa"}}},
	} {
		if _, err := e.s.MarkPages(ctx, m); !errors.Is(err, engine.ErrInvalid) {
			t.Fatalf("%+v: %v", m, err)
		}
	}
}

// fresh keeps the order of the fresh lessons, and without a stale one
// answers the slice it was given, allocating nothing.
func TestFresh(t *testing.T) {
	mark := &Stale{Reason: "gone"}
	ls := []Lesson{{ID: "a"}, {ID: "b", Stale: mark}, {ID: "c"}, {ID: "d", Stale: mark}}
	if got := fresh(ls); len(got) != 2 || got[0].ID != "a" || got[1].ID != "c" {
		t.Fatalf("fresh = %+v", got)
	}
	if got := fresh(ls[1:2]); got == nil || len(got) != 0 {
		t.Fatalf("all stale: %#v", got)
	}
	all := []Lesson{{ID: "a"}, {ID: "c"}}
	if n := testing.AllocsPerRun(10, func() {
		if got := fresh(all); &got[0] != &all[0] {
			t.Fatal("not the same slice")
		}
	}); n != 0 {
		t.Fatalf("%v allocations without a stale lesson", n)
	}
}
