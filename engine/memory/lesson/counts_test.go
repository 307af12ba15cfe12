package lesson

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
)

// The used rule: the action after a lesson was shown followed it when its
// verb is one the lesson's recovery asks for, or its element (or key) is
// one the lesson names.
func TestUsedBy(t *testing.T) {
	escape := Seeds()[2].Lesson // "If an overlay … press Escape to dismiss it …"
	fill := Seeds()[0].Lesson   // "If fill fails, click(ref) to focus the input, then type(text) …"
	enter := Seeds()[1].Lesson  // "… press Enter to submit. Avoid clicking submit buttons …"
	for _, c := range []struct {
		text        string
		kind        engine.ActionKind
		name, value string
		want        bool
	}{
		// The example: the Escape lesson did not lead to a click on "Accept cookies".
		{escape, engine.ActClick, "Accept cookies", "", false},
		{escape, engine.ActPress, "", "Escape", true},
		{escape, engine.ActPress, "", "Tab", false}, // a key press, but not the key named
		{escape, engine.ActType, "Search", "x", false},
		// The condition ("If fill fails") is not the recovery.
		{fill, engine.ActFill, "Search", "x", false},
		{fill, engine.ActClick, "Search products", "", true},
		{fill, engine.ActType, "Search products", "padel", true},
		// Negated verbs are not asked for.
		{enter, engine.ActClick, "Go", "", false},
		{enter, engine.ActPress, "", "Enter", true},
		{enter, engine.ActPress, "", "Escape", false},
		// Names: capitalised words not starting a sentence, or quoted.
		{"Dismiss the cookie overlay first.", engine.ActClick, "Accept", "", false},
		{"Dismiss the cookie overlay with the Accept button.", engine.ActClick, "Accept cookies", "", true},
		{`On this shop, use "Sign in" before checkout.`, engine.ActClick, "sign in", "", true},
		{"Wait for the results list before clicking a result.", engine.ActWait, "", "", true},
		{"Don't click the banner; scroll down instead.", engine.ActClick, "Banner", "", false},
		{"Don't click the banner; scroll down instead.", engine.ActScroll, "", "", true},
		{"Go back and retry.", engine.ActBack, "", "", true},
		{"", engine.ActClick, "x", "", false},
	} {
		if got := UsedBy(c.text, c.kind, c.name, c.value); got != c.want {
			t.Errorf("UsedBy(%q, %s %q %q) = %v, want %v (recovery %+v)", c.text, c.kind, c.name, c.value, got, c.want, RecoveryOf(c.text))
		}
	}
}

func TestRecoveryOf(t *testing.T) {
	r := RecoveryOf(Seeds()[0].Lesson)
	if !slices.Equal(r.Verbs, []engine.ActionKind{engine.ActClick, engine.ActType}) || len(r.Names) != 0 {
		t.Errorf("fill seed: %+v", r)
	}
	r = RecoveryOf(Seeds()[2].Lesson)
	if !slices.Equal(r.Verbs, []engine.ActionKind{engine.ActPress}) || !slices.Equal(r.Names, []string{"Escape"}) {
		t.Errorf("escape seed: %+v", r)
	}
}

// Attribute adds a run's counts to its lessons in one call, keeps each
// lesson's previous version, proves a candidate that helped, refuses
// counts that cannot be, and skips a lesson that is gone.
func TestAttributeLessons(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	api := e.as(engine.Provenance{Source: engine.SourceAPI})
	cand := must2(api.Record(ctx, Lesson{Lesson: "Press Escape twice.", Category: ErrorRecovery, FailedCommand: "click", ErrorPattern: "intercepts pointer events"}, "shop.example"))
	if cand.Trust != Candidate {
		t.Fatalf("trust %s", cand.Trust)
	}
	mine := e.record(Lesson{Lesson: "Scroll down first.", Category: ErrorRecovery, FailedCommand: "click", ErrorPattern: "not visible"}, "shop.example")
	e.now = e.now.AddDate(0, 0, 3)
	n, err := e.s.Attribute(ctx, []Attribution{
		{ID: cand.ID, Counts: engine.Counts{Shown: 3, Used: 1, Helped: 1}},
		{ID: mine.ID, Counts: engine.Counts{Shown: 2}},
		{ID: cand.ID, Counts: engine.Counts{Shown: 1}},
		{ID: "gone", Counts: engine.Counts{Shown: 1}},
	})
	if err != nil || n != 3 {
		t.Fatalf("attribute: %d, %v", n, err)
	}
	got := must(e.s.Get(ctx, cand.ID))
	if got.Counts != (engine.Counts{Shown: 4, Used: 1, Helped: 1}) || got.UseCount != cand.UseCount || got.Trust != Trusted || got.LastUsed != "2026-03-15" {
		t.Errorf("candidate after attribution: %+v use %d trust %s last %s", got.Counts, got.UseCount, got.Trust, got.LastUsed)
	}
	if m := must(e.s.Get(ctx, mine.ID)); m.Counts != (engine.Counts{Shown: 2}) || m.LastUsed != mine.LastUsed {
		t.Errorf("shown only: %+v last %s", m.Counts, m.LastUsed)
	}
	vs := must(e.s.History(ctx, cand.ID))
	if len(vs) < 2 || vs[0].Op != OpAttribute || vs[0].Lesson.Counts.Shown != 3 || vs[1].Op != OpAttribute || vs[1].Lesson.Counts.Shown != 0 {
		t.Errorf("versions: %+v", vs)
	}
	if len(e.eventsNamed(event.LessonTrusted)) == 0 {
		t.Error("no lesson_trusted event for the candidate that helped")
	}
	for _, bad := range []engine.Counts{{Shown: 1, Used: 2}, {Used: 1, Helped: 1}, {Shown: -1}} {
		if _, err := e.s.Attribute(ctx, []Attribution{{ID: mine.ID, Counts: bad}}); !engine.IsInvalid(err) {
			t.Errorf("counts %+v: %v, want invalid", bad, err)
		}
	}
}

// Recall ranks a lesson shown UnhelpfulAfter times that never helped after
// the others of equal relevance (error recall) and after all others
// (domain recall); below the bound the order is by use as before.
func TestRecallRanksUnhelpfulLast(t *testing.T) {
	for _, shown := range []int{engine.UnhelpfulAfter - 1, engine.UnhelpfulAfter} {
		e := newEnv(t)
		ctx := context.Background()
		often := e.record(Lesson{Lesson: "Used often.", Category: SiteSpecific, FailedCommand: "click", ErrorPattern: "detached from dom", Domain: "shop.example", UseCount: 4}, "shop.example")
		seldom := e.record(Lesson{Lesson: "Used seldom.", Category: SiteSpecific, FailedCommand: "click", ErrorPattern: "element is detached", Domain: "shop.example", UseCount: 1}, "shop.example")
		if _, err := e.s.RecallError(ctx, "click e3", "element is detached from DOM", "shop.example"); err != nil {
			t.Fatal(err) // compiles the site's index first: the attribution then advances it
		}
		if _, err := e.s.Attribute(ctx, []Attribution{{ID: often.ID, Counts: engine.Counts{Shown: shown}}}); err != nil {
			t.Fatal(err)
		}
		want := []string{often.ID, seldom.ID}
		if shown >= engine.UnhelpfulAfter {
			want = []string{seldom.ID, often.ID}
		}
		for _, s := range []*Store{e.s, New(e.db, Options{Unindexed: true})} {
			errs := must(s.RecallError(ctx, "click e3", "element is detached from DOM", "shop.example"))
			if ids := idsOf(errs); !slices.Equal(ids[:2], want) {
				t.Errorf("shown %d: error recall %v, want %v first", shown, ids, want)
			}
			dom := must(s.RecallDomain(ctx, "shop.example"))
			if ids := idsOf(dom); !slices.Equal(ids, want) {
				t.Errorf("shown %d: domain recall %v, want %v", shown, ids, want)
			}
		}
	}
}

// An unhelpful lesson that matches the error's pattern still ranks before
// one that matches only the command: relevance first.
func TestUnhelpfulKeepsRelevance(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	hit := e.record(Lesson{Lesson: "Pattern hit.", Category: ErrorRecovery, FailedCommand: "click", ErrorPattern: "detached from dom", UseCount: 1}, "")
	e.record(Lesson{Lesson: "Command only.", Category: ErrorRecovery, FailedCommand: "click", ErrorPattern: "something else", UseCount: 3}, "")
	if _, err := e.s.Attribute(ctx, []Attribution{{ID: hit.ID, Counts: engine.Counts{Shown: 40}}}); err != nil {
		t.Fatal(err)
	}
	got := must(e.s.RecallError(ctx, "click e3", "element is detached from DOM", ""))
	if len(got) == 0 || got[0].ID != hit.ID {
		t.Errorf("recall %v: the pattern hit first", idsOf(got))
	}
}

// Prune removes a lesson written by a program that was shown
// PruneUnhelpfulAfter times and never helped, whatever its age and use,
// keeping its version and counting it in lessons_pruned; a seed, a
// person's lesson, one that helped once and one shown fewer times stay.
func TestPruneUnhelpful(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	learned := e.as(engine.Provenance{Source: engine.SourceLearned})
	mk := func(s *Store, text string, use int) *Lesson {
		return must2(s.Record(ctx, Lesson{Lesson: text, Category: ErrorRecovery, FailedCommand: "click", ErrorPattern: text, UseCount: use}, "shop.example"))
	}
	bad := mk(learned, "learned unhelpful", 9) // used often: the age prune would keep it
	helpedOnce := mk(learned, "learned helped once", 1)
	fewer := mk(learned, "learned shown fewer", 1)
	manual := mk(e.s, "manual unhelpful", 1)
	tier1 := must(e.s.Tier1(ctx))
	at := engine.PruneUnhelpfulAfter
	as := []Attribution{
		{ID: bad.ID, Counts: engine.Counts{Shown: at, Used: 2}},
		{ID: helpedOnce.ID, Counts: engine.Counts{Shown: at, Used: 1, Helped: 1}},
		{ID: fewer.ID, Counts: engine.Counts{Shown: at - 1}},
		{ID: manual.ID, Counts: engine.Counts{Shown: at}},
		{ID: tier1[0].ID, Counts: engine.Counts{Shown: at}},
	}
	if _, err := e.s.Attribute(ctx, as); err != nil {
		t.Fatal(err)
	}
	pruned, _, err := e.s.Prune(ctx, 0)
	if err != nil || pruned != 1 {
		t.Fatalf("prune: %d, %v; want 1", pruned, err)
	}
	if _, err := e.s.Get(ctx, bad.ID); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("unhelpful learned lesson: %v, want pruned", err)
	}
	for _, id := range []string{helpedOnce.ID, fewer.ID, manual.ID, tier1[0].ID} {
		if _, err := e.s.Get(ctx, id); err != nil {
			t.Errorf("%s: %v, want kept", id, err)
		}
	}
	vs := must(e.s.History(ctx, bad.ID))
	if len(vs) == 0 || vs[0].Op != OpPrune {
		t.Errorf("versions of the pruned lesson: %+v", vs)
	}
	evs := e.eventsNamed(event.LessonsPruned)
	if len(evs) != 1 || evs[0].Fields["pruned_count"] != 1 || evs[0].Fields["unhelpful_count"] != 1 {
		t.Errorf("lessons_pruned events: %+v", evs)
	}
}

func idsOf(ls []Lesson) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.ID
	}
	return out
}
