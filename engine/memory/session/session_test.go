package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

var t0 = time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)

func openDisk(t *testing.T) kv.Store {
	t.Helper()
	db := badgertest.Open(t)
	return db
}

func goals(ss []Session) string {
	var g []string
	for _, s := range ss {
		g = append(g, s.Goal)
	}
	return strings.Join(g, ",")
}

func TestRollingHistoryKeepsNewestFivePerSite(t *testing.T) {
	ctx := context.Background()
	var evs []event.Event
	st := New(openDisk(t), Options{Events: func(e event.Event) { evs = append(evs, e) }})
	for i := range 7 {
		host := "example.com"
		if i%2 == 1 {
			host = "app.example.com" // same site
		}
		_, err := st.Record(ctx, Session{Domain: host, Goal: fmt.Sprintf("g%d", i), Success: true, Timestamp: t0.Add(time.Duration(i) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Record(ctx, Session{FinalURL: "https://other.org/x", Goal: "other", Timestamp: t0}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Recent(ctx, "www.example.com", 0)
	if err != nil {
		t.Fatal(err)
	}
	if g := goals(got); g != "g6,g5,g4,g3,g2" {
		t.Fatalf("recent = %s, want the five newest, newest first", g)
	}
	got, _ = st.Recent(ctx, "https://example.com/path", 2)
	if g := goals(got); g != "g6,g5" {
		t.Fatalf("recent 2 = %s", g)
	}
	got, _ = st.Recent(ctx, "other.org", 0)
	if g := goals(got); g != "other" || got[0].Domain != "other.org" {
		t.Fatalf("other.org = %+v: domain should come from the final URL", got)
	}
	if len(evs) != 8 || evs[0].Name != EventRecorded {
		t.Fatalf("events = %v", evs)
	}
}

func TestSameTimestampBothKept(t *testing.T) {
	ctx := context.Background()
	st := New(openDisk(t), Options{})
	for _, g := range []string{"a", "b"} {
		if _, err := st.Record(ctx, Session{Domain: "x.com", Goal: g, Timestamp: t0}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := st.Recent(ctx, "x.com", 0)
	if len(got) != 2 {
		t.Fatalf("got %d sessions, want 2", len(got))
	}
}

func TestDefaultsAndValidation(t *testing.T) {
	ctx := context.Background()
	st := New(openDisk(t), Options{Now: func() time.Time { return t0 }})
	s, err := st.Record(ctx, Session{Domain: "WWW.Example.com", Goal: "  g  "})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Timestamp.Equal(t0) || s.Domain != "www.example.com" || s.Goal != "g" || s.ID == "" {
		t.Fatalf("defaults not filled: %+v", s)
	}
	for _, tc := range []struct {
		s    Session
		want string
	}{
		{Session{Domain: "x.com"}, "goal is empty"},
		{Session{Goal: "g"}, "no domain"},
		{Session{Goal: "g", Domain: "x.com", TurnsUsed: -1}, "turns_used -1 is negative"},
		{Session{Goal: "g", Domain: "x.com", DurationMS: -5}, "duration_ms -5 is negative"},
		{Session{Goal: "g", Domain: "bad host/x"}, "domain"},
		{Session{Goal: "g", Domain: "-"}, `"-" is not a valid host name`},
	} {
		_, err := st.Record(ctx, tc.s)
		if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Record(%+v) = %v, want invalid: %s", tc.s, err, tc.want)
		}
	}
}

func TestListFiltersAcrossSites(t *testing.T) {
	ctx := context.Background()
	st := New(openDisk(t), Options{})
	rec := func(d, id, g string, min int) {
		t.Helper()
		if _, err := st.Record(ctx, Session{Domain: d, ID: id, Goal: g, Timestamp: t0.Add(time.Duration(min) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	rec("a.com", "p1", "a1", 1)
	rec("b.com", "p1", "b1", 3)
	rec("c.com", "p2", "c1", 2)
	rec("a.com", "p2", "a2", 4)
	all, err := st.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if g := goals(all); g != "a2,b1,c1,a1" {
		t.Fatalf("all = %s", g)
	}
	p1, _ := st.List(ctx, Filter{SessionID: "p1"})
	if g := goals(p1); g != "b1,a1" {
		t.Fatalf("p1 = %s", g)
	}
	yes := true
	if ok, _ := st.List(ctx, Filter{Success: &yes}); len(ok) != 0 {
		t.Fatalf("no session succeeded, got %s", goals(ok))
	}
	a, _ := st.List(ctx, Filter{Domain: "www.a.com", Limit: 1})
	if g := goals(a); g != "a2" {
		t.Fatalf("a.com limit 1 = %s", g)
	}
}

func TestImportIsIdempotentAndTrims(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t)
	st := New(db, Options{Keep: 3})
	var in []Session
	for i := range 4 {
		in = append(in, Session{Domain: "x.com", Goal: fmt.Sprintf("g%d", i), Timestamp: t0.Add(time.Duration(i) * time.Hour)})
	}
	p, err := st.Prepare(in)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := st.Import(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := st.Recent(ctx, "x.com", 0)
	if g := goals(got); g != "g3,g2,g1" {
		t.Fatalf("after import twice = %s", g)
	}
	if _, err := st.Prepare([]Session{{Domain: "x.com", Goal: "ok"}, {Domain: "x.com"}}); err == nil || !strings.Contains(err.Error(), "sessions[1]") {
		t.Fatalf("Prepare error = %v, want it to name sessions[1]", err)
	}
}

func TestConcurrentRecordsKeepCap(t *testing.T) {
	ctx := context.Background()
	st := New(openDisk(t), Options{})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if _, err := st.Record(ctx, Session{Domain: "x.com", Goal: fmt.Sprint(i), Timestamp: t0.Add(time.Duration(i) * time.Second)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, _ := st.Recent(ctx, "x.com", 0)
	if g := goals(got); g != "19,18,17,16,15" {
		t.Fatalf("after concurrent records = %s", g)
	}
}

func TestRender(t *testing.T) {
	ss := []Session{
		{ID: "proj_123", Goal: "Add auth", Outcome: "Login page added", Success: true, FinalURL: "https://example.com/login", Timestamp: t0.Add(2 * time.Hour), TurnsUsed: 5, DurationMS: 30500},
		{ID: "proj_123", Goal: "Build a todo app", Outcome: "Created project\nwith TaskList", Success: true, FinalURL: "https://example.com/project/123", Timestamp: t0.Add(time.Hour), TurnsUsed: 8, DurationMS: 45000},
		{ID: "s1", Goal: "Old task", Outcome: "It broke", Success: false, FinalURL: "https://example.com/old", Timestamp: t0, TurnsUsed: 3, DurationMS: 900},
	}
	want := `1. [2026-03-12 12:00] "Add auth": succeeded (session proj_123)
   Outcome: Login page added
   Final URL: https://example.com/login
   5 turns in 31s
2. [2026-03-12 11:00] "Build a todo app": succeeded (session proj_123)
   Outcome: Created project with TaskList
   Final URL: https://example.com/project/123
   8 turns in 45s
3. [2026-03-12 10:00] "Old task": failed: It broke
`
	if got := Render(ss); got != want {
		t.Fatalf("Render =\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(Render(ss), "example.com/old") {
		t.Fatal("an older session's final URL should not be rendered")
	}
	if Render(nil) != "" {
		t.Fatal("no sessions should render nothing")
	}
}
