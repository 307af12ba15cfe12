package agent

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/engine/memory/runfiles"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/kv"
)

// TestWarmRunAttributesSelectorsTrajectoryAndFacts: the cold run records the
// selectors and the trajectory; the warm run is shown them at every step
// and its actions use them, which its end counts (shown/used/helped) in
// one request per kind; facts, once confident, likewise.
func TestWarmRunAttributesSelectorsTrajectoryAndFacts(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t)
	cold := mustRun(t, config(t, db, newShop(), &fakeModel{p: naive}))
	if !cold.Success {
		t.Fatalf("cold run: %+v", cold)
	}
	ss, err := selector.New(db, selector.Options{}).List(ctx, "shop.test")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		if s.Shown != 0 || s.Used != 0 || s.Helped != 0 {
			t.Fatalf("cold run counted a selector it was never shown: %+v", s)
		}
	}
	afterCold := lessonCounts(t, db)
	var coldLessons []string
	for text, c := range afterCold {
		if c != (engine.Counts{}) {
			coldLessons = append(coldLessons, fmt.Sprintf("%q %d/%d/%d", text, c.Shown, c.Used, c.Helped))
		}
	}
	sort.Strings(coldLessons)
	// The cold run's three "would receive the click" failures each show
	// the Escape seed; the recoveries were a click on Accept cookies (not
	// what it says: the example), a press of Enter (a key press,
	// not the key it names) and a press of Escape (used, helped). Its
	// failed fill shows the fill seed, and the click on the search box
	// that followed is its recovery.
	wantCold := `"If an overlay or popup is blocking an element, press Escape to dismiss it before interacting with elements behind it." 3/1/1
"If fill fails, click(ref) to focus the input, then type(text) to enter text." 1/1/1`
	if strings.Join(coldLessons, "\n") != wantCold {
		t.Fatalf("cold run's lessons shown/used/helped:\n%s\nwant\n%s", strings.Join(coldLessons, "\n"), wantCold)
	}
	warm := mustRun(t, config(t, db, newShop(), &fakeModel{p: naive}))
	if !warm.Success {
		t.Fatalf("warm run: %+v", warm)
	}
	// The lessons the warm run added counts to, shown/used/helped.
	var gotLessons []string
	for text, c := range lessonCounts(t, db) {
		b := afterCold[text]
		if d := (engine.Counts{Shown: c.Shown - b.Shown, Used: c.Used - b.Used, Helped: c.Helped - b.Helped}); d != (engine.Counts{}) {
			gotLessons = append(gotLessons, fmt.Sprintf("%q %d/%d/%d", text, d.Shown, d.Used, d.Helped))
		}
	}
	sort.Strings(gotLessons)
	// The warm run fails nowhere, so its only lesson is the domain tip
	// learned by the cold run, shown at step 1; that step's action (click
	// Accept cookies) has the verb the tip asks for ("try click instead"):
	// used, and it helped. The Escape seed is never shown: no error.
	wantLessons := `"If fill fails with \"element is not an input\", try click instead." 1/1/1`
	if strings.Join(gotLessons, "\n") != wantLessons || warm.Helped != 1 {
		t.Fatalf("warm run's lessons shown/used/helped (lessons_helped %d):\n%s\nwant\n%s", warm.Helped, strings.Join(gotLessons, "\n"), wantLessons)
	}
	ss, err = selector.New(db, selector.Options{}).List(ctx, "shop.test")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range ss {
		got = append(got, fmt.Sprintf("%s %q %d/%d/%d", s.Role, s.Name, s.Shown, s.Used, s.Helped))
	}
	sort.Strings(got)
	// The warm run: click Accept cookies, click Search products, type,
	// press Enter, press Escape, click the result. Each selector is counted
	// at the steps whose context offered it, used at the actions on its
	// element, and helped at all of those (every action worked, the run
	// succeeded).
	want := `button "Accept cookies" 4/1/1
link "Padel Racket Pro 3000" 2/1/1
searchbox "Search products" 4/2/2`
	if strings.Join(got, "\n") != want {
		t.Fatalf("selectors shown/used/helped:\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
	tr, err := trajectory.New(db, trajectory.Options{}).Get(ctx, "shop.test", cold.TrajectoryID)
	if err != nil {
		t.Fatal(err)
	}
	// Shown at each of the warm run's 6 actions, each one of its steps
	// (the presses match by verb: they name no element);
	// the warm run's own recording replaced the steps and kept the counts.
	if tr.Shown != 6 || tr.Used != 6 || tr.Helped != 6 || tr.Runs != 2 {
		t.Fatalf("trajectory shown/used/helped %d/%d/%d runs %d; want 6/6/6, 2 runs", tr.Shown, tr.Used, tr.Helped, tr.Runs)
	}
	// Facts reach the prompt from their first sighting (the cold run's): the
	// warm run and a third run are shown them.
	if third := mustRun(t, config(t, db, newShop(), &fakeModel{p: naive})); !third.Success {
		t.Fatalf("third run: %+v", third)
	}
	fs, err := fact.New(db, fact.Options{}).List(ctx, "shop.test")
	if err != nil {
		t.Fatal(err)
	}
	var gotFacts []string
	for _, f := range fs {
		gotFacts = append(gotFacts, fmt.Sprintf("%s %q %d/%d/%d", f.Type, f.Key, f.Shown, f.Used, f.Helped))
	}
	sort.Strings(gotFacts)
	// The flow fact names the elements of every action (and "press
	// Enter"/"press Escape"): used at each of the two runs' 6 actions. The
	// quirks are shown at every step and used where an action touches the
	// element they name.
	wantFacts := `pattern "flow: search for {1} and open the first result" 12/12/12
quirk "another element would receive the click: div#cookie-banner" 12/2/2
quirk "another element would receive the click: div#newsletter" 12/2/2
quirk "another element would receive the click: ul#suggestions" 12/2/2
quirk "element is not an input" 12/4/4`
	if strings.Join(gotFacts, "\n") != wantFacts {
		t.Fatalf("facts shown/used/helped:\n%s\nwant\n%s", strings.Join(gotFacts, "\n"), wantFacts)
	}
	// Each quirk keeps the page it was seen on (its path and the page's
	// fingerprint); the flow, a fact of no one page, keeps none.
	for _, f := range fs {
		if c := f.Checked; (f.Type == fact.Quirk) != (c != nil && c.Path != "" && len(c.Page) == 8) {
			t.Errorf("%s %q checked against %+v", f.Type, f.Key, c)
		}
	}
}

// TestFailedRunCountsShownAndUsedNotHelped: a run that did not succeed
// still counts what it was shown and used, but helps nothing.
func TestFailedRunCountsShownAndUsedNotHelped(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t)
	sel := selector.New(db, selector.Options{})
	if _, err := sel.Record(ctx, selector.Observation{Domain: "shop.test", Role: "button", Name: "Search", Selector: "#s"}); err != nil {
		t.Fatal(err)
	}
	shown := []memctx.Shown{{Role: "button", Name: "Search", Selector: "#s"}}
	r := &runner{mem: memOf(t, db), res: &Result{Success: false}}
	for _, rec := range []record{
		{Record: runfiles.Record{Step: 1, Action: "click", Role: "link", Name: "Home", OK: true}, selectors: shown},
		{Record: runfiles.Record{Step: 2, Action: "click", Role: "Button", Name: " Search ", OK: true}, selectors: shown},
	} {
		rec.URL = "http://shop.test/"
		r.actions = append(r.actions, rec)
		r.attribute()
	}
	if err := r.credit(ctx); err != nil {
		t.Fatal(err)
	}
	ss, err := sel.List(ctx, "shop.test")
	if err != nil || len(ss) != 1 {
		t.Fatal(ss, err)
	}
	if s := ss[0]; s.Shown != 2 || s.Used != 1 || s.Helped != 0 {
		t.Fatalf("shown/used/helped %d/%d/%d; want 2/1/0", s.Shown, s.Used, s.Helped)
	}
}

// BenchmarkAttributionPerStep is the per-step bookkeeping of attribution:
// a step shown 20 selectors, 20 facts, 10 lessons and a 20-step reference
// trajectory, its action checked against each (attribute). The end of
// the run adds a map update per item shown and at most three requests.
func BenchmarkAttributionPerStep(b *testing.B) {
	var sels []memctx.Shown
	var facts []memctx.ShownFact
	var steps []trajectory.Step
	var lessons []string
	for i := range 20 {
		sels = append(sels, memctx.Shown{Role: "link", Name: fmt.Sprintf("Product %d", i), Selector: fmt.Sprintf("#p%d", i)})
		facts = append(facts, memctx.ShownFact{Domain: "shop.test", Type: fact.Pattern, Key: fmt.Sprintf("flow %d", i),
			Value: "click Accept cookies → type padel into Search products → press Enter → click Product 3"})
		steps = append(steps, trajectory.Step{Action: "click", Role: "link", Name: fmt.Sprintf("Product %d", i)})
		if i < 10 {
			lessons = append(lessons, fmt.Sprintf("l%d", i))
		}
	}
	// Each lesson's text is read for its recovery (lesson.UsedBy).
	r := &runner{res: &Result{}, recovery: map[string]lesson.Recovery{}}
	for i, id := range lessons {
		r.recovery[id] = lesson.RecoveryOf(lesson.Seeds()[i%3].Lesson + fmt.Sprintf(" Then click \"Product %d\".", i))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.actions = append(r.actions[:0], record{Record: runfiles.Record{Step: i, Action: "click", Role: "link", Name: "Product 7", OK: true,
			URL: "http://shop.test/list", Lessons: lessons, Trajectory: "traj_1"}, selectors: sels, facts: facts, refSteps: steps})
		r.attribute()
		if len(r.attributions) >= 64 {
			r.attributions = r.attributions[:0]
		}
	}
}

// lessonCounts is every lesson's counts, by text.
func lessonCounts(t *testing.T, db kv.Store) map[string]engine.Counts {
	t.Helper()
	ls, err := lesson.New(db, lesson.Options{}).List(context.Background(), lesson.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]engine.Counts{}
	for _, l := range ls {
		out[l.Lesson] = l.Counts
	}
	return out
}
