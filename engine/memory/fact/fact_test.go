package fact

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

func openDisk(t testing.TB, dir string) kv.Store {
	t.Helper()
	db := badgertest.OpenDir(t, dir)
	return db
}

func clock(t0 time.Time) func() time.Time { return func() time.Time { return t0 } }

var t0 = time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestConfidenceCurve(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	var events []event.Event
	s := New(db, Options{Now: clock(t0), Events: func(e event.Event) { events = append(events, e) }})

	obs := Observation{Domain: "https://www.example.com/a", Type: Quirk, Key: "Modals", Value: "uses shadow DOM for modals"}
	want := []float64{0.5, 0.65, 0.755, 0.8285}
	for i, w := range want {
		out, err := s.Observe(ctx, obs)
		if err != nil {
			t.Fatal(err)
		}
		if !near(out.Fact.Confidence, w) || out.Fact.Sources != i+1 {
			t.Fatalf("observation %d: confidence %v sources %d, want %v and %d", i+1, out.Fact.Confidence, out.Fact.Sources, w, i+1)
		}
		if wantRes := map[bool]string{true: "new", false: "confirmed"}[i == 0]; out.Result != wantRes {
			t.Errorf("observation %d: result %q, want %q", i+1, out.Result, wantRes)
		}
	}
	if got := events[0].Fields["result"]; events[0].Name != EventObserved || got != "new" {
		t.Errorf("first event = %v", events[0])
	}

	// Three contradictions lower the confirmed fact, the fourth prunes it.
	rival := Observation{Domain: "www.example.com", Type: Quirk, Key: "modals", Value: "uses native dialogs"}
	wantOld := []float64{0.41425, 0.207125, 0.1035625}
	for i, w := range wantOld {
		out, err := s.Observe(ctx, rival)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Contradicted) != 1 || !near(out.Contradicted[0].Confidence, w) {
			t.Fatalf("contradiction %d: %+v, want old value at %v", i+1, out.Contradicted, w)
		}
	}
	out, err := s.Observe(ctx, rival)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Pruned) != 1 || out.Pruned[0].Value != "uses shadow DOM for modals" || len(out.Contradicted) != 0 {
		t.Fatalf("fourth contradiction: pruned %+v contradicted %+v", out.Pruned, out.Contradicted)
	}
	if last := events[len(events)-1]; last.Name != EventPruned {
		t.Errorf("last event %q, want %q", last.Name, EventPruned)
	}
	all, err := s.List(ctx, "example.com")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Value != "uses native dialogs" || all[0].Sources != 4 {
		t.Fatalf("after pruning: %+v", all)
	}
}

func TestOnlyConfidentFactsReachThePrompt(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	s := New(db, Options{Now: clock(t0)})
	once := Observation{Domain: "shop.example", Type: Timing, Key: "checkout", Value: "5s after submit"}
	twice := Observation{Domain: "shop.example", Type: Selector, Key: "search box", Value: "[data-testid='search']"}
	for _, o := range []Observation{once, twice, twice} {
		if _, err := s.Observe(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Confident(ctx, "https://shop.example/cart")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Key != "search box" {
		t.Fatalf("confident = %+v, want only the twice-seen selector fact", got)
	}
}

func TestHostsAndPersistence(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openDisk(t, dir)
	s := New(db, Options{Now: clock(t0)})
	for _, o := range []Observation{
		{Domain: "example.com", Type: Quirk, Key: "a", Value: "site-wide"},
		{Domain: "mail.example.com", Type: Quirk, Key: "b", Value: "mail only"},
		{Domain: "docs.example.com", Type: Quirk, Key: "c", Value: "docs only"},
		{Domain: "notexample.com", Type: Quirk, Key: "d", Value: "other site"},
	} {
		if _, err := s.Observe(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	db = openDisk(t, dir)
	defer db.Close()
	s = New(db, Options{Now: clock(t0)})
	got, err := s.List(ctx, "mail.example.com")
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]bool{}
	for _, f := range got {
		vals[f.Value] = true
	}
	if len(got) != 2 || !vals["site-wide"] || !vals["mail only"] {
		t.Fatalf("mail.example.com sees %+v, want the site-wide and mail facts only", got)
	}
	all, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 4 {
		t.Fatalf("List(\"\") = %d facts, want 4", len(all))
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	db := badgertest.OpenMemory(t)
	defer db.Close()
	s := New(db, Options{Now: clock(t0)})
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"unknown type", func() error {
			_, err := s.Observe(ctx, Observation{Domain: "a.com", Type: "rumour", Key: "k", Value: "v"})
			return err
		}, `invalid fact: unknown type "rumour" (want one of timing, selector, pattern, quirk)`},
		{"empty key", func() error {
			_, err := s.Observe(ctx, Observation{Domain: "a.com", Type: Quirk, Key: " ", Value: "v"})
			return err
		}, "invalid fact: the key is empty"},
		{"empty value", func() error {
			_, err := s.Observe(ctx, Observation{Domain: "a.com", Type: Quirk, Key: "k"})
			return err
		}, "invalid fact: the value is empty"},
		{"confidence above 1", func() error {
			_, _, err := s.Put(ctx, Fact{Domain: "a.com", Type: Quirk, Key: "k", Value: "v", Confidence: 1.5})
			return err
		}, "invalid fact: confidence 1.5 is outside [0, 1]"},
		{"confidence below 0", func() error {
			_, _, err := s.Put(ctx, Fact{Domain: "a.com", Type: Quirk, Key: "k", Value: "v", Confidence: -0.2})
			return err
		}, "invalid fact: confidence -0.2 is outside [0, 1]"},
		{"no domain", func() error {
			_, err := s.Observe(ctx, Observation{Type: Quirk, Key: "k", Value: "v"})
			return err
		}, "invalid fact: domain: empty domain"},
	}
	for _, c := range cases {
		err := c.run()
		if err == nil || !errors.Is(err, engine.ErrInvalid) || err.Error() != c.want {
			t.Errorf("%s: err = %v, want invalid %q", c.name, err, c.want)
		}
	}
	if all, _ := s.List(ctx, ""); len(all) != 0 {
		t.Errorf("bad input stored %+v", all)
	}
}

func TestPut(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	s := New(db, Options{Now: clock(t0)})
	f, kept, err := s.Put(ctx, Fact{Domain: "a.com", Type: Pattern, Key: "login", Value: "click login → fill email", Confidence: 0.8, Sources: 3})
	if err != nil || !kept || f.Sources != 3 || !f.LastSeen.Equal(t0) {
		t.Fatalf("Put = %+v %v %v", f, kept, err)
	}
	// Confirming continues the curve from the stored confidence.
	out, err := s.Observe(ctx, Observation{Domain: "a.com", Type: Pattern, Key: "login", Value: "click login → fill email"})
	if err != nil || !near(out.Fact.Confidence, 0.86) || out.Fact.Sources != 4 {
		t.Fatalf("confirm after put: %+v %v", out.Fact, err)
	}
	// Below the floor: not kept, and the stored one is removed.
	_, kept, err = s.Put(ctx, Fact{Domain: "a.com", Type: Pattern, Key: "login", Value: "click login → fill email", Confidence: 0.05})
	if err != nil || kept {
		t.Fatalf("Put below floor: kept=%v err=%v", kept, err)
	}
	if all, _ := s.List(ctx, "a.com"); len(all) != 0 {
		t.Fatalf("after put below floor: %+v", all)
	}
}

func TestConcurrentObservations(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	s := New(db, Options{Now: clock(t0)})
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := s.Observe(ctx, Observation{Domain: "a.com", Type: Timing, Key: "load", Value: "2s"})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.List(ctx, "a.com")
	if err != nil || len(all) != 1 || all[0].Sources != n {
		t.Fatalf("after %d concurrent observations: %+v %v", n, all, err)
	}
}

func TestCachedFactsFollowWrites(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	a := New(db, Options{Now: clock(t0)})
	b := New(db, Options{Now: clock(t0)})
	o := Observation{Domain: "a.example", Type: Quirk, Key: "k", Value: "v"}
	for range 2 {
		if _, err := b.Observe(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	got, err := a.Confident(ctx, "a.example")
	if err != nil || len(got) != 1 || !near(got[0].Confidence, 0.65) {
		t.Fatalf("first read: %+v %v", got, err)
	}
	if _, err := b.Observe(ctx, o); err != nil {
		t.Fatal(err)
	}
	got, err = a.Confident(ctx, "a.example")
	if err != nil || len(got) != 1 || !near(got[0].Confidence, 0.755) {
		t.Fatalf("after another store's write: %+v %v", got, err)
	}
	if _, _, err := b.Put(ctx, Fact{Domain: "a.example", Type: Quirk, Key: "k", Value: "v", Confidence: 0.05}); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Confident(ctx, "a.example"); len(got) != 0 {
		t.Fatalf("after a put below the floor: %+v", got)
	}
	if _, err := b.Observe(ctx, o); err != nil {
		t.Fatal(err)
	}
	if err := db.DropPrefix(ctx, []byte("site/a.example/")); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.List(ctx, "a.example"); len(got) != 0 {
		t.Fatalf("after forgetting the site: %+v", got)
	}
}

// A fact seen on a page keeps the page it was last seen on (path
// normalised as selector scopes are, and the page's fingerprint); one seen
// on no page keeps none, and a confirmation on no page keeps the last.
func TestFactRemembersItsPage(t *testing.T) {
	ctx := context.Background()
	db := badgertest.OpenMemory(t)
	defer db.Close()
	now := t0
	s := New(db, Options{Now: func() time.Time { return now }})
	o := Observation{Domain: "shop.example", Type: Quirk, Key: "covered: div#cookie-banner", Value: "click fails here; Accept cookies worked",
		Path: "/search?q=padel", Page: "7e7ca121"}
	out, err := s.Observe(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	want := engine.Checked{Path: "/search", Page: "7e7ca121", At: t0}
	if c := out.Fact.Checked; c == nil || *c != want {
		t.Fatalf("checked = %+v, want %+v", c, want)
	}
	now = t0.Add(time.Hour)
	o.Path, o.Page = "/item/12", "0a0b0c0d"
	out, err = s.Observe(ctx, o)
	if err != nil || out.Result != "confirmed" {
		t.Fatalf("second sighting: %+v, %v", out, err)
	}
	if c := out.Fact.Checked; c == nil || c.Path != "/item/*" || c.Page != "0a0b0c0d" || !c.At.Equal(now) {
		t.Fatalf("after a sighting on another page: %+v", c)
	}
	o.Path, o.Page = "", ""
	if out, err = s.Observe(ctx, o); err != nil || out.Fact.Checked == nil || out.Fact.Checked.Page != "0a0b0c0d" {
		t.Fatalf("a sighting on no page forgot the last one: %+v, %v", out.Fact.Checked, err)
	}
	flow, err := s.Observe(ctx, Observation{Domain: "shop.example", Type: Pattern, Key: "flow: search", Value: "click → type"})
	if err != nil || flow.Fact.Checked != nil {
		t.Fatalf("a fact of no page: %+v, %v", flow.Fact.Checked, err)
	}
	o.Page = "NOT-HEX"
	if _, err := s.Observe(ctx, o); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("a page that is no fingerprint: %v", err)
	}
}
