package agent

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/fact"
	"github.com/engine-dev/engine/engine/selector"
	"github.com/engine-dev/engine/engine/trajectory"
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
	warm := mustRun(t, config(t, db, newShop(), &fakeModel{p: naive}))
	if !warm.Success {
		t.Fatalf("warm run: %+v", warm)
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
	// Facts reach the prompt once confirmed (the warm run's sighting): a
	// third run is shown them.
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
	// Enter"/"press Escape"): used at each of the third run's 6 actions;
	// the quirks are still unconfirmed (the later runs did not fail).
	wantFacts := `pattern "flow: search for {1} and open the first result" 6/6/6
quirk "another element would receive the click: div#cookie-banner" 0/0/0
quirk "another element would receive the click: div#newsletter" 0/0/0
quirk "another element would receive the click: ul#suggestions" 0/0/0
quirk "element is not an input" 0/0/0`
	if strings.Join(gotFacts, "\n") != wantFacts {
		t.Fatalf("facts shown/used/helped:\n%s\nwant\n%s", strings.Join(gotFacts, "\n"), wantFacts)
	}
}
