package trajectory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

var t0 = time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)

func openDisk(t testing.TB, dir string) kv.Store {
	t.Helper()
	db := badgertest.OpenDir(t, dir)
	return db
}

type env struct {
	t      *testing.T
	db     kv.Store
	s      *Store
	now    time.Time
	events []event.Event
}

func newEnv(t *testing.T, opts Options) *env {
	e := &env{t: t, now: t0}
	e.db = openDisk(t, t.TempDir())
	t.Cleanup(func() { e.db.Close() })
	opts.Now = func() time.Time { return e.now }
	opts.Events = func(ev event.Event) { e.events = append(e.events, ev) }
	e.s = New(e.db, opts)
	return e
}

func (e *env) record(tr Trajectory) Trajectory {
	e.t.Helper()
	out, err := e.s.Record(context.Background(), tr)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) match(host, goal string) *Match {
	e.t.Helper()
	m, err := e.s.Match(context.Background(), host, goal)
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func searchRun() Trajectory {
	return Trajectory{
		Domain: "https://www.shop.example/", Goal: "search padel rackets", DurationMs: 12000,
		Steps: []Step{
			{Action: "click", Role: "searchbox", Name: "Search", Selector: "#q", URL: "https://www.shop.example/", Verified: true},
			{Action: "type", Role: "searchbox", Name: "Search", Selector: "#q", Value: "padel rackets", Verified: true},
			{Action: "press", Value: "Enter", URL: "https://www.shop.example/", Verified: true},
			{Action: "click", Role: "link", Name: "First result", URL: "https://www.shop.example/s?q=padel+rackets&page=1"},
		},
	}
}

func TestTemplates(t *testing.T) {
	for _, c := range []struct {
		goal   string
		values []string
		want   string
		params string
	}{
		{"search padel rackets", []string{"padel rackets"}, "search {1}", "text:padel rackets/2"},
		{"Search for smart watch reviews", []string{"smart watch"}, "search for {1} reviews", "text:smart watch/2"},
		{"show the top 5 results", nil, "show the top {1} results", "number:5/1"},
		{`find "red shoes" under 49.90 euros`, []string{"red shoes"}, "find {1} under {2} euros", "quoted:red shoes/1 number:49.90/1"},
		{"book 2 tickets to Paris", []string{"Paris", "2"}, "book {1} tickets to {2}", "number:2/1 text:Paris/1"},
		{"don't open the menu", []string{"the"}, "don't open the menu", ""},
		{"search iphone 15 pro", []string{"iPhone 15 Pro"}, "search {1}", "text:iPhone 15 Pro/3"},
	} {
		tokens, params := templateOf(c.goal, c.values)
		var ps []string
		for _, p := range params {
			ps = append(ps, fmt.Sprintf("%s:%s/%d", p.Kind, p.Value, p.Words))
		}
		if got := templateString(tokens); got != c.want || strings.Join(ps, " ") != c.params {
			t.Errorf("templateOf(%q, %q) = %q [%s], want %q [%s]", c.goal, c.values, got, strings.Join(ps, " "), c.want, c.params)
		}
	}
}

func TestMatchSwapsTextParameter(t *testing.T) {
	e := newEnv(t, Options{})
	rec := e.record(searchRun())
	if rec.Template != "search {1}" || !strings.HasPrefix(rec.ID, "traj_") || rec.Runs != 1 {
		t.Fatalf("recorded %+v", rec)
	}
	if !rec.ExpiresAt.Equal(t0.Add(30 * 24 * time.Hour)) {
		t.Errorf("expires %v, want 30 days after %v", rec.ExpiresAt, t0)
	}

	m := e.match("shop.example", "search tennis balls")
	if m == nil {
		t.Fatal("no match for a goal of the same template")
	}
	if m.Similarity != 1 || len(m.Bindings) != 1 || !m.Bindings[0].Bound || m.Bindings[0].Value != "tennis balls" || m.Bindings[0].Recorded != "padel rackets" {
		t.Fatalf("match %v %+v", m.Similarity, m.Bindings)
	}
	if m.Steps[1].Value != "tennis balls" {
		t.Errorf("typed value = %q, want the bound one", m.Steps[1].Value)
	}
	if m.Steps[3].URL != "https://www.shop.example/s?q=tennis+balls&page=1" {
		t.Errorf("url = %q, want the query rewritten", m.Steps[3].URL)
	}
	if m.Trajectory.Steps[1].Value != "padel rackets" {
		t.Errorf("the stored steps changed: %q", m.Trajectory.Steps[1].Value)
	}
	ev := e.events[len(e.events)-1]
	if ev.Name != EventMatched || ev.Fields["id"] != rec.ID {
		t.Errorf("last event %v", ev)
	}

	// Stop words at the edges of the new value stay in the goal.
	m = e.match("shop.example", "search for tennis balls")
	if m == nil || m.Bindings[0].Value != "tennis balls" {
		t.Fatalf("with stop words: %+v", m)
	}
	if want := 2.0 / 3; math.Abs(m.Similarity-want) > 1e-9 {
		t.Errorf("similarity %v, want %v ({search,{1}} vs {search,{1},for})", m.Similarity, want)
	}
	// Two of them: 2/4 = 0.5 is not more than the threshold.
	if m := e.match("shop.example", "search for some tennis balls"); m != nil {
		t.Errorf("0.5 matched: %+v", m)
	}

	// Too many words for the parameter: no binding, no match.
	if m := e.match("shop.example", "search cheap flights from paris to new york city"); m != nil {
		t.Errorf("a sentence bound as the parameter: %+v", m.Bindings)
	}
	// The literal word alone: the unbound parameter counts as its two words.
	if m := e.match("shop.example", "search"); m != nil {
		t.Errorf("'search' alone matched with similarity %v", m.Similarity)
	}
	if m := e.match("shop.example", "buy a gift card"); m != nil {
		t.Errorf("unrelated goal matched: %+v", m)
	}
}

func TestNumbersAreParameters(t *testing.T) {
	e := newEnv(t, Options{})
	e.record(Trajectory{Domain: "news.example", Goal: "open the top 5 stories", Steps: []Step{
		{Action: "navigate", URL: "https://news.example/top?n=5&from=15"},
		{Action: "select", Role: "combobox", Name: "Show", Value: "5", Verified: true},
		{Action: "type", Role: "textbox", Name: "Note", Value: "read 5 of 15"},
	}})
	m := e.match("news.example", "open the top 9 stories")
	if m == nil || m.Similarity != 1 {
		t.Fatalf("top 9 vs top 5: %+v", m)
	}
	if b := m.Bindings[0]; b.Kind != "number" || b.Recorded != "5" || b.Value != "9" {
		t.Fatalf("binding %+v", b)
	}
	if m.Steps[0].URL != "https://news.example/top?n=9&from=15" || m.Steps[1].Value != "9" || m.Steps[2].Value != "read 9 of 15" {
		t.Errorf("steps not rewritten token-wise: %q %q %q", m.Steps[0].URL, m.Steps[1].Value, m.Steps[2].Value)
	}
	// Without a number the slot stays unbound and keeps the recorded value.
	m = e.match("news.example", "open the top stories")
	if m == nil || m.Bindings[0].Bound || m.Steps[1].Value != "5" {
		t.Fatalf("no number: %+v", m)
	}
	if want := 4.0 / 5; math.Abs(m.Similarity-want) > 1e-9 {
		t.Errorf("similarity %v, want %v", m.Similarity, want)
	}
}

func TestQuotedValues(t *testing.T) {
	e := newEnv(t, Options{})
	e.record(Trajectory{Domain: "mail.example", Goal: `send "hello there" to bob`, Steps: []Step{
		{Action: "type", Role: "textbox", Name: "Message", Value: "hello there"},
		{Action: "type", Role: "textbox", Name: "To", Value: "bob"},
	}})
	m := e.match("mail.example", `send 'see you at 5' to alice`)
	if m == nil {
		t.Fatal("no match")
	}
	got := fmt.Sprint(m.Steps[0].Value, "|", m.Steps[1].Value)
	if got != "see you at 5|alice" {
		t.Errorf("steps = %s, want the quoted value and the name swapped", got)
	}
}

func TestThresholdBoundary(t *testing.T) {
	e := newEnv(t, Options{})
	e.record(Trajectory{Domain: "a.example", Goal: "open settings page", Steps: []Step{{Action: "click", Name: "Settings"}}})
	// {open, settings, page} vs {open, settings, profile, tab}: 2/5 = 0.4.
	if m := e.match("a.example", "open settings profile tab"); m != nil {
		t.Errorf("0.4 matched")
	}
	// {open, settings, page} vs {open, settings, now}: 2/4 = 0.5, at the
	// threshold: a match needs more (browser-agent-driver's similarity > 0.5).
	if m := e.match("a.example", "open settings now"); m != nil {
		t.Errorf("exactly 0.5 matched: %+v", m)
	}
	// {open, settings, page} vs {open, settings, page, now, please}: 3/5 = 0.6.
	m := e.match("a.example", "open settings page now please")
	if m == nil || m.Similarity != 0.6 {
		t.Fatalf("0.6: %+v", m)
	}
}

// TestRecency pins the weighted rank's recency, exp(−days/14).
func TestRecency(t *testing.T) {
	day := 24 * time.Hour
	for _, c := range []struct {
		age  time.Duration
		want float64
	}{{0, 1}, {14 * day, math.Exp(-1)}, {28 * day, math.Exp(-2)}, {-day, 1}} {
		if got := Recency(c.age); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Recency(%v) = %v, want %v", c.age, got, c.want)
		}
	}
	if got := Recency(14 * day); math.Abs(got-0.36787944117144233) > 1e-12 {
		t.Errorf("at 14 days %v, want 0.3679", got)
	}
	if got := Recency(28 * day); math.Abs(got-0.1353352832366127) > 1e-12 {
		t.Errorf("at 28 days %v, want 0.1353", got)
	}
	// Similarity 1, recorded now, 60 s, all verified: 0.6 + 0.2 + 0.05 + 0.1.
	if got := WeightedScore(1, 0, 60000, 1); math.Abs(got-0.95) > 1e-12 {
		t.Errorf("weighted score %v, want 0.95", got)
	}
	// Unknown duration counts 0.5; 14 days: 0.6·0.8 + 0.2/e + 0.05 + 0.
	if got, want := WeightedScore(0.8, 14*day, 0, 0), 0.48+0.2*math.Exp(-1)+0.05; math.Abs(got-want) > 1e-12 {
		t.Errorf("weighted score %v, want %v", got, want)
	}
}

// The field decides a secret, not the text: a search that mentions
// passwords and a link named after them are stored as they are and the
// trajectory stays replayable; a value entered into a password field (by
// its name, its input type or a selector naming it) is stored as the
// placeholder whatever its words.
func TestSecretIsDecidedByTheField(t *testing.T) {
	e := newEnv(t, Options{})
	rec := e.record(Trajectory{Domain: "help.example", Goal: "find the help article on resetting a password", Steps: []Step{
		{Action: "click", Role: "searchbox", Name: "Search help articles"},
		{Action: "type", Role: "searchbox", Name: "Search help articles", Value: "reset password help"},
		{Action: "press", Value: "Enter"},
		{Action: "click", Role: "link", Name: "Reset your password", Selector: `role=link[name="Reset your password"]`},
		{Action: "click", Role: "link", Name: "Forgot PIN?"},
	}})
	for i, st := range rec.Steps {
		if st.Secret {
			t.Errorf("step %d %+v is secret", i+1, st)
		}
	}
	if rec.Steps[1].Value != "reset password help" {
		t.Errorf("search value %q", rec.Steps[1].Value)
	}
	for _, st := range []Step{
		{Action: "fill", Role: "textbox", Name: "Password", Value: "plain words"},
		{Action: "type", Role: "textbox", Name: "Answer", InputType: "password", Value: "plain words"},
		{Action: "fill", Selector: `input[type="password"]`, Value: "plain words"},
		{Action: "fill", Selector: "#card-number", Value: "plain words"},
		{Action: "type", Role: "textbox", Name: "PIN", Value: "plain words"},
	} {
		rec := e.record(Trajectory{Domain: "login.example", Goal: "log in", Steps: []Step{st}})
		if got := rec.Steps[0]; !got.Secret || got.Value != SecretPlaceholder {
			t.Errorf("%+v stored as %+v", st, got)
		}
	}
}

func TestSecretsAreNeverStored(t *testing.T) {
	e := newEnv(t, Options{})
	const pw = "hunter2-Secret!"
	rec := e.record(Trajectory{Domain: "bank.example", Goal: "log in as alice", Steps: []Step{
		{Action: "type", Role: "textbox", Name: "Email", Value: "alice@example.com"},
		{Action: "type", Role: "textbox", Name: "Password", Selector: "#pw", Value: pw},
		{Action: "type", Role: "textbox", Name: "Code", Selector: "input[type=password]", Value: "9911"},
		{Action: "type", Role: "textbox", Name: "Memo", Value: "token", Secret: true},
		{Action: "navigate", URL: "https://bank.example/cb?p=" + pw},
	}})
	for i, want := range []string{"alice@example.com", SecretPlaceholder, SecretPlaceholder, SecretPlaceholder} {
		if rec.Steps[i].Value != want {
			t.Errorf("step %d value %q, want %q", i+1, rec.Steps[i].Value, want)
		}
	}
	if !rec.Steps[1].Secret || rec.Steps[0].Secret {
		t.Errorf("secret flags %v %v", rec.Steps[0].Secret, rec.Steps[1].Secret)
	}
	if strings.Contains(rec.Steps[4].URL, pw) {
		t.Errorf("secret left in a URL: %s", rec.Steps[4].URL)
	}
	// Nothing on disk holds the secrets.
	err := e.db.View(context.Background(), func(r kv.Reader) error {
		return r.Scan([]byte(""), kv.ScanOptions{}, func(k, v []byte) error {
			for _, sec := range []string{pw, "9911"} {
				if bytes.Contains(v, []byte(sec)) || bytes.Contains(k, []byte(sec)) {
					t.Errorf("%s holds a secret", k)
				}
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestBadInput(t *testing.T) {
	e := newEnv(t, Options{})
	for _, c := range []struct {
		tr   Trajectory
		want string
	}{
		{Trajectory{Domain: "a.example", Goal: "do it"}, "invalid trajectory: a trajectory needs at least one step; this one has none"},
		{Trajectory{Domain: "a.example", Goal: "  ", Steps: []Step{{Action: "click"}}}, "invalid trajectory: the goal is empty"},
		{Trajectory{Domain: "a.example", Goal: "do it", Steps: []Step{{Action: "click"}, {Name: "x"}}}, "invalid trajectory: step 2 has no action"},
		{Trajectory{Goal: "do it", Steps: []Step{{Action: "click"}}}, "invalid trajectory: domain: empty domain"},
		{Trajectory{Domain: "a.example", Goal: "do it", Steps: []Step{{Action: "click"}}, RecordedAt: t0.Add(-31 * 24 * time.Hour)},
			"invalid trajectory: recorded_at 2026-02-09T10:00:00Z is more than 720h0m0s ago: it has expired"},
	} {
		_, err := e.s.Record(context.Background(), c.tr)
		if err == nil || !errors.Is(err, engine.ErrInvalid) || err.Error() != c.want {
			t.Errorf("%+v: err = %v, want %q", c.tr, err, c.want)
		}
	}
	if all, _ := e.s.List(context.Background(), ""); len(all) != 0 {
		t.Errorf("bad input stored %d trajectories", len(all))
	}
}

func TestExpiryAndReplacement(t *testing.T) {
	e := newEnv(t, Options{})
	first := e.record(searchRun())
	e.now = t0.Add(10 * 24 * time.Hour)
	second := searchRun()
	second.Goal = "search squash balls"
	second.Steps[1].Value = "squash balls"
	got := e.record(second)
	if got.ID != first.ID || got.Runs != 2 {
		t.Fatalf("same template again: id %s runs %d, want %s and 2", got.ID, got.Runs, first.ID)
	}
	all, err := e.s.List(context.Background(), "shop.example")
	if err != nil || len(all) != 1 || all[0].Goal != "search squash balls" {
		t.Fatalf("list after replacement: %+v %v", all, err)
	}
	e.now = t0.Add(39 * 24 * time.Hour)
	if e.match("shop.example", "search tennis balls") == nil {
		t.Fatal("expired 29 days after the replacing run")
	}
	e.now = t0.Add(41 * 24 * time.Hour)
	if m := e.match("shop.example", "search tennis balls"); m != nil {
		t.Fatalf("matched 31 days after recording")
	}
	if all, _ := e.s.List(context.Background(), "shop.example"); len(all) != 0 {
		t.Fatalf("expired trajectory listed")
	}
}

func TestWeightedRanking(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openDisk(t, dir)
	defer db.Close()
	now := t0
	clock := func() time.Time { return now }
	plain := New(db, Options{Now: clock})
	// Old, slow, unverified, but a perfect match.
	old := Trajectory{Domain: "a.example", Goal: "export monthly report as pdf", DurationMs: 600000,
		Steps: []Step{{Action: "click", Name: "Export"}}}
	if _, err := plain.Record(ctx, old); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(28 * 24 * time.Hour)
	fresh := Trajectory{Domain: "a.example", Goal: "export monthly report", DurationMs: 5000,
		Steps: []Step{{Action: "click", Name: "Export", Verified: true}}}
	if _, err := plain.Record(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	m, err := plain.Match(ctx, "a.example", "export monthly report as pdf")
	if err != nil || m == nil || m.Trajectory.Goal != old.Goal {
		t.Fatalf("unweighted: %+v %v, want the exact match", m, err)
	}
	weighted := New(db, Options{Now: clock, Weighted: true})
	ms, err := weighted.Matches(ctx, "a.example", "export monthly report as pdf", 2)
	if err != nil || len(ms) != 2 || ms[0].Trajectory.Goal != fresh.Goal {
		t.Fatalf("weighted: %+v %v, want the fresh, fast, verified one first", ms, err)
	}
	// fresh: 0.6·(3/5) + 0.2·(1) + 0.1·(1/(1+5/60)) + 0.1·1
	want := 0.6*0.6 + 0.2 + 0.1/(1+5000.0/60000) + 0.1
	if math.Abs(ms[0].Score-want) > 1e-9 {
		t.Errorf("weighted score %v, want %v", ms[0].Score, want)
	}
	// old, 28 days: 0.6·1 + 0.2·exp(−2) + 0.1·(1/(1+600/60)) + 0.
	if want := 0.6 + 0.2*math.Exp(-2) + 0.1/11; math.Abs(ms[1].Score-want) > 1e-9 {
		t.Errorf("28-day-old score %v, want %v", ms[1].Score, want)
	}
	// A trace TTL of 14 days leaves out the 28-day-old record.
	young := New(db, Options{Now: clock, Weighted: true, MaxAge: 14 * 24 * time.Hour})
	ms, err = young.Matches(ctx, "a.example", "export monthly report as pdf", 2)
	if err != nil || len(ms) != 1 || ms[0].Trajectory.Goal != fresh.Goal {
		t.Fatalf("max age 14 days: %+v %v, want only the fresh one", ms, err)
	}
}

func TestIndexCacheFollowsOtherWriters(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	a := New(db, Options{Now: func() time.Time { return t0 }})
	b := New(db, Options{Now: func() time.Time { return t0 }})
	if m, err := a.Match(ctx, "shop.example", "search tennis balls"); err != nil || m != nil {
		t.Fatalf("empty store: %+v %v", m, err)
	}
	if _, err := b.Record(ctx, searchRun()); err != nil {
		t.Fatal(err)
	}
	if m, err := a.Match(ctx, "shop.example", "search tennis balls"); err != nil || m == nil {
		t.Fatalf("a does not see b's write: %+v %v", m, err)
	}
	// Forgetting the site drops the generation key too.
	if err := db.DropPrefix(ctx, keyspace.SitePrefix("shop.example")); err != nil {
		t.Fatal(err)
	}
	if m, err := a.Match(ctx, "shop.example", "search tennis balls"); err != nil || m != nil {
		t.Fatalf("a still matches a forgotten site: %+v %v", m, err)
	}
	rec, err := b.Record(ctx, searchRun())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "shop.example", rec.ID); err != nil {
		t.Fatal(err)
	}
	if m, err := a.Match(ctx, "shop.example", "search tennis balls"); err != nil || m != nil {
		t.Fatalf("a matches a deleted trajectory: %+v %v", m, err)
	}
}

func TestHostsAndPersistence(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openDisk(t, dir)
	s := New(db, Options{Now: func() time.Time { return t0 }})
	for _, host := range []string{"mail.example.com", "example.com"} {
		if _, err := s.Record(ctx, Trajectory{Domain: host, Goal: "archive old mail", Steps: []Step{{Action: "click", Name: "Archive on " + host}}}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	db = openDisk(t, dir)
	defer db.Close()
	s = New(db, Options{Now: func() time.Time { return t0 }})
	for _, c := range []struct{ at, want string }{
		{"https://docs.example.com/x", "example.com"}, // a sibling's memory does not apply
		{"mail.example.com", "mail.example.com"},      // the host's own beats its parent's
		{"www.example.com", "example.com"},
	} {
		m, err := s.Match(ctx, c.at, "archive old mail")
		if err != nil || m == nil || m.Trajectory.Domain != c.want {
			t.Errorf("at %s got %+v %v, want the trajectory of %s", c.at, m, err, c.want)
		}
	}
	if m, _ := s.Match(ctx, "other.example", "archive old mail"); m != nil {
		t.Fatalf("another site matched")
	}
}

func TestConcurrentRecordAndMatch(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	s := New(db, Options{Now: func() time.Time { return t0 }})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := range 10 {
				_, err := s.Record(ctx, Trajectory{Domain: "a.example", Goal: fmt.Sprintf("task w%d x%d", i, j), Steps: []Step{{Action: "click"}}})
				if err != nil {
					t.Error(err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 10 {
				if _, err := s.Match(ctx, "a.example", "task w1 x3"); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	all, err := s.List(ctx, "a.example")
	if err != nil || len(all) != 40 {
		t.Fatalf("%d trajectories, %v", len(all), err)
	}
	m, err := s.Match(ctx, "a.example", "task w1 x3")
	if err != nil || m == nil || m.Trajectory.Goal != "task w1 x3" || m.Similarity != 1 {
		t.Fatalf("after concurrent writes: %+v %v", m, err)
	}
}

func TestExtraWordsDoNotUnbindTheParameter(t *testing.T) {
	e := newEnv(t, Options{})
	e.record(Trajectory{Domain: "shop.example", Goal: "search padel rackets in electronics sorted by price", Steps: []Step{
		{Action: "type", Role: "searchbox", Name: "Search", Value: "padel rackets"},
		{Action: "click", Role: "button", Name: "Sort by price"},
	}})
	// "lowest" is a second run of new words; the parameter still binds the
	// run that sits where it sits in the template (after "search").
	m := e.match("shop.example", "search tennis balls in electronics sorted by lowest price")
	if m == nil || !m.Bindings[0].Bound || m.Bindings[0].Value != "tennis balls" || m.Steps[0].Value != "tennis balls" {
		t.Fatalf("match %+v", m)
	}
	// {search,{1},in,electronics,sorted,by,price} vs the same plus "lowest".
	if want := 7.0 / 8; math.Abs(m.Similarity-want) > 1e-9 {
		t.Errorf("similarity %v, want %v", m.Similarity, want)
	}
	// The seed's example.
	e.record(Trajectory{Domain: "shop.example", Goal: "Search for smart watch reviews", Steps: []Step{
		{Action: "click", Role: "searchbox", Name: "Search", Verified: true},
		{Action: "type", Role: "searchbox", Name: "Search", Value: "smart watch", Verified: true},
	}})
	m = e.match("shop.example", "search for fitness tracker reviews")
	if m == nil || m.Trajectory.Goal != "Search for smart watch reviews" || m.Steps[1].Value != "fitness tracker" || m.Similarity != 1 {
		t.Fatalf("seed example: %+v", m)
	}
}

func TestOwnWritesUpdateTheCachedIndex(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	first := e.record(searchRun())
	if e.match("shop.example", "search tennis balls") == nil {
		t.Fatal("no match")
	}
	gen0, _ := kv.Get(ctx, e.db, keyspace.TrajectoryGen("shop.example"))
	cached, ok := shared.Get(e.s.cacheKey("shop.example"), string(gen0))
	if !ok {
		t.Fatal("index not cached after a match")
	}
	other := e.record(Trajectory{Domain: "shop.example", Goal: "open my orders", Steps: []Step{{Action: "click", Name: "Orders"}}})
	gen, err := kv.Get(ctx, e.db, keyspace.TrajectoryGen("shop.example"))
	if err != nil {
		t.Fatal(err)
	}
	now, ok := shared.Get(e.s.cacheKey("shop.example"), string(gen))
	if !ok || now == cached || len(now.raw) != 2 {
		t.Fatalf("the cache was not moved to the new generation in place (%v)", ok)
	}
	if m := e.match("shop.example", "open my orders"); m == nil || m.Trajectory.ID != other.ID {
		t.Fatalf("new trajectory not matched: %+v", m)
	}
	if err := e.s.Delete(ctx, "shop.example", first.ID); err != nil {
		t.Fatal(err)
	}
	gen, _ = kv.Get(ctx, e.db, keyspace.TrajectoryGen("shop.example"))
	if ix, ok := shared.Get(e.s.cacheKey("shop.example"), string(gen)); !ok || len(ix.raw) != 1 {
		t.Fatalf("cache after the delete: %v", ok)
	}
	if m := e.match("shop.example", "search tennis balls"); m != nil {
		t.Fatalf("deleted trajectory matched")
	}
}

// resetCache empties the process-wide index cache.
func resetCache() { shared.Clear() }

func TestIndexCacheIsSharedButNotAcrossDatabases(t *testing.T) {
	ctx := context.Background()
	now := func() time.Time { return t0 }
	db1 := openDisk(t, t.TempDir())
	defer db1.Close()
	db2 := openDisk(t, t.TempDir())
	defer db2.Close()
	if _, err := New(db1, Options{Now: now}).Record(ctx, searchRun()); err != nil {
		t.Fatal(err)
	}
	if m, _ := New(db1, Options{Now: now}).Match(ctx, "shop.example", "search tennis balls"); m == nil {
		t.Fatal("no match in db1")
	}
	// A fresh Store on the same database uses the cached index.
	gen, _ := kv.Get(ctx, db1, keyspace.TrajectoryGen("shop.example"))
	if ix, ok := shared.Get(New(db1, Options{Now: now}).cacheKey("shop.example"), string(gen)); !ok || len(ix.raw) != 1 {
		t.Fatalf("index not cached")
	}
	// Another database with the same site: an empty site has no token and
	// is never served from the cache; a different one has another token.
	if m, _ := New(db2, Options{Now: now}).Match(ctx, "shop.example", "search tennis balls"); m != nil {
		t.Fatalf("db2 matched db1's trajectory")
	}
	if _, err := New(db2, Options{Now: now}).Record(ctx, Trajectory{Domain: "shop.example", Goal: "open my orders", Steps: []Step{{Action: "click"}}}); err != nil {
		t.Fatal(err)
	}
	if m, _ := New(db2, Options{Now: now}).Match(ctx, "shop.example", "search tennis balls"); m != nil {
		t.Fatalf("db2 matched db1's trajectory after its own write")
	}
	if m, _ := New(db1, Options{Now: now}).Match(ctx, "shop.example", "open my orders"); m != nil {
		t.Fatalf("db1 matched db2's trajectory")
	}
}

func TestIndexCacheIsBounded(t *testing.T) {
	resetCache()
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	s := New(db, Options{Now: func() time.Time { return t0 }})
	for i := range cacheSites + 5 {
		host := fmt.Sprintf("site%d.example", i)
		if _, err := s.Record(ctx, Trajectory{Domain: host, Goal: "open my orders", Steps: []Step{{Action: "click"}}}); err != nil {
			t.Fatal(err)
		}
		if m, err := s.Match(ctx, host, "open my orders"); err != nil || m == nil {
			t.Fatalf("%s: %v %v", host, m, err)
		}
	}
	n := shared.Len()
	newest := shared.Has(s.cacheKey(fmt.Sprintf("site%d.example", cacheSites+4)))
	oldest := shared.Has(s.cacheKey("site0.example"))
	if n != cacheSites || !newest || oldest {
		t.Fatalf("cache holds %d sites (newest %v, oldest %v), want %d with the least recently used gone", n, newest, oldest, cacheSites)
	}
}

func TestIndexEntryRoundTrip(t *testing.T) {
	e := entry{ID: "traj_1", Host: "www.shop.example", Tokens: []string{"find", "{1}", "under", "{2}", "euros", "4.5"},
		Slots: []slotSpec{{slotQuoted, 1}, {slotNumber, 1}}, RecordedAt: 1773309600, ExpiresAt: 1775901600, DurationMs: 1234, Verified: 0.75}
	got, err := decodeEntry(e.encode())
	if err != nil || fmt.Sprint(got) != fmt.Sprint(e) {
		t.Fatalf("round trip: %+v %v, want %+v", got, err, e)
	}
	e.Slots = nil
	if got, err := decodeEntry(e.encode()); err != nil || got.Slots != nil {
		t.Fatalf("no slots: %+v %v", got, err)
	}
	for _, bad := range []string{"", "t0\x00a", "t1\x00a\x00b\x00x\x001\x002\x000.5\x00\x00go", "t1\x00a\x00b\x001\x001\x002\x000.5\x00z1\x00go"} {
		if _, err := decodeEntry([]byte(bad)); err == nil {
			t.Errorf("decoded %q", bad)
		}
	}
}

func TestParseGoal(t *testing.T) {
	show := func(s string) string {
		var out []string
		for _, p := range parseGoal(s) {
			k := map[partKind]string{pWord: "w", pNumber: "n", pQuoted: "q"}[p.kind]
			out = append(out, k+":"+p.text)
		}
		return strings.Join(out, " ")
	}
	for in, want := range map[string]string{
		`buy 1,000 items at 4.5 each, then stop.`: "w:buy n:1,000 w:items w:at n:4.5 w:each w:then w:stop",
		`it's an "unclosed quote`:                 "w:it's w:an w:unclosed w:quote",
		`find “red shoes” and 'blue hats' now`:    "w:find q:red shoes w:and q:blue hats w:now",
		`don't stop, won't stop`:                  "w:don't w:stop w:won't w:stop",
		`t-shirts for $25 (size "M")`:             "w:t-shirts w:for n:25 w:size q:M",
		`Top 5`:                                   "w:Top n:5",
		`  `:                                      "",
	} {
		if got := show(in); got != want {
			t.Errorf("parseGoal(%q) = %q, want %q", in, got, want)
		}
	}
}
