package fact

import (
	"context"
	"errors"
	"fmt"
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
	want := []float64{0.6, 0.68, 0.744, 0.7952}
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

	// Two contradictions lower the confirmed fact, the third prunes it
	// (0.7952 → 0.3976 → 0.1988 → 0.0994). The rival starts at 0.6.
	rival := Observation{Domain: "www.example.com", Type: Quirk, Key: "modals", Value: "uses native dialogs"}
	wantOld := []float64{0.3976, 0.1988}
	for i, w := range wantOld {
		out, err := s.Observe(ctx, rival)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Contradicted) != 1 || !near(out.Contradicted[0].Confidence, w) {
			t.Fatalf("contradiction %d: %+v, want old value at %v", i+1, out.Contradicted, w)
		}
		if wantRival := []float64{0.6, 0.68}[i]; !near(out.Fact.Confidence, wantRival) {
			t.Fatalf("contradiction %d: rival at %v, want %v", i+1, out.Fact.Confidence, wantRival)
		}
	}
	out, err := s.Observe(ctx, rival)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Pruned) != 1 || out.Pruned[0].Value != "uses shadow DOM for modals" || len(out.Contradicted) != 0 {
		t.Fatalf("third contradiction: pruned %+v contradicted %+v", out.Pruned, out.Contradicted)
	}
	if last := events[len(events)-1]; last.Name != EventPruned {
		t.Errorf("last event %q, want %q", last.Name, EventPruned)
	}
	all, err := s.List(ctx, "example.com")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Value != "uses native dialogs" || all[0].Sources != 3 {
		t.Fatalf("after pruning: %+v", all)
	}
}

// TestCurveNumbers pins browser-agent-driver's numbers: a new fact at 0.6, a
// confirmation adds 0.2·(1−c), a contradiction halves the old value and
// starts the rival at 0.6.
func TestCurveNumbers(t *testing.T) {
	if Initial != 0.6 || Gain != 0.2 || Decay != 0.5 || Floor != 0.1 || DefaultMinConfidence != 0.5 {
		t.Fatalf("curve = initial %v gain %v decay %v floor %v prompt %v, want 0.6 0.2 0.5 0.1 0.5",
			Initial, Gain, Decay, Floor, DefaultMinConfidence)
	}
	for _, c := range []struct{ from, want float64 }{{0.6, 0.68}, {0, 0.2}, {0.5, 0.6}, {1, 1}} {
		if got := confirm(c.from); !near(got, c.want) {
			t.Errorf("confirm(%v) = %v, want %v", c.from, got, c.want)
		}
	}
	for _, c := range []struct{ from, want float64 }{{0.6, 0.3}, {0.2, 0.1}, {1, 0.5}} {
		if got := contradict(c.from); !near(got, c.want) {
			t.Errorf("contradict(%v) = %v, want %v", c.from, got, c.want)
		}
	}
}

// TestPruneBoundary: a fact at exactly 0.1 after a contradiction is kept,
// one just below is pruned.
func TestPruneBoundary(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	s := New(db, Options{Now: clock(t0)})
	for _, c := range []struct {
		from float64
		kept bool
	}{{0.2, true}, {0.1998, false}} {
		host := fmt.Sprintf("h%v.example", c.from)
		if _, _, err := s.Put(ctx, Fact{Domain: host, Type: Timing, Key: "load", Value: "old", Confidence: c.from}); err != nil {
			t.Fatal(err)
		}
		out, err := s.Observe(ctx, Observation{Domain: host, Type: Timing, Key: "load", Value: "new"})
		if err != nil {
			t.Fatal(err)
		}
		if !near(out.Fact.Confidence, 0.6) {
			t.Errorf("from %v: rival at %v, want 0.6", c.from, out.Fact.Confidence)
		}
		if kept := len(out.Contradicted) == 1 && len(out.Pruned) == 0; kept != c.kept {
			t.Errorf("from %v: contradicted %+v pruned %+v, want kept=%v", c.from, out.Contradicted, out.Pruned, c.kept)
		}
		if c.kept && out.Contradicted[0].Confidence != 0.1 {
			t.Errorf("from %v: old value at %v, want exactly 0.1", c.from, out.Contradicted[0].Confidence)
		}
	}
	// Put at exactly the floor keeps the fact; just below does not.
	if _, kept, err := s.Put(ctx, Fact{Domain: "p.example", Type: Quirk, Key: "k", Value: "at", Confidence: 0.1}); err != nil || !kept {
		t.Fatalf("put at 0.1: kept=%v %v", kept, err)
	}
	if _, kept, err := s.Put(ctx, Fact{Domain: "p.example", Type: Quirk, Key: "k2", Value: "below", Confidence: 0.0999}); err != nil || kept {
		t.Fatalf("put at 0.0999: kept=%v %v", kept, err)
	}
}

// TestPromptBoundary: a fact seen once reaches the prompt; one at exactly
// 0.5 does, one just below does not.
func TestPromptBoundary(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	s := New(db, Options{Now: clock(t0)})
	if _, err := s.Observe(ctx, Observation{Domain: "shop.example", Type: Timing, Key: "once", Value: "seen once"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []Fact{
		{Domain: "shop.example", Type: Quirk, Key: "at", Value: "at the line", Confidence: 0.5},
		{Domain: "shop.example", Type: Quirk, Key: "below", Value: "under the line", Confidence: 0.4999},
	} {
		if _, _, err := s.Put(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Confident(ctx, "shop.example")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, f := range got {
		keys[f.Key] = true
	}
	if len(got) != 2 || !keys["once"] || !keys["at"] {
		t.Fatalf("confident = %+v, want the fact seen once and the one at 0.5", got)
	}
}

func TestOnlyConfidentFactsReachThePrompt(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	s := New(db, Options{Now: clock(t0)})
	kept := Observation{Domain: "shop.example", Type: Timing, Key: "checkout", Value: "5s after submit"}
	lost := Observation{Domain: "shop.example", Type: Selector, Key: "search box", Value: "[data-testid='search']"}
	rival := Observation{Domain: "shop.example", Type: Selector, Key: "search box", Value: "#q"}
	// The contradicted value falls to 0.3 and leaves the prompt; the rival
	// (0.6) and the uncontested fact (0.6) reach it.
	for _, o := range []Observation{kept, lost, rival} {
		if _, err := s.Observe(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Confident(ctx, "https://shop.example/cart")
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]bool{}
	for _, f := range got {
		vals[f.Value] = true
	}
	if len(got) != 2 || !vals["5s after submit"] || !vals["#q"] {
		t.Fatalf("confident = %+v, want the fact seen once and the rival, not the contradicted value", got)
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
		{"list of no host", func() error {
			_, err := s.List(ctx, "a b")
			return err
		}, `invalid fact: domain: "a b" is not a host or URL: parse "http://a b": invalid character " " in host name`},
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
	if err != nil || !near(out.Fact.Confidence, 0.84) || out.Fact.Sources != 4 {
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
	if err != nil || len(got) != 1 || !near(got[0].Confidence, 0.68) {
		t.Fatalf("first read: %+v %v", got, err)
	}
	if _, err := b.Observe(ctx, o); err != nil {
		t.Fatal(err)
	}
	got, err = a.Confident(ctx, "a.example")
	if err != nil || len(got) != 1 || !near(got[0].Confidence, 0.744) {
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
