package run

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/internal/touch"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

var t0 = time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time       { return c.t }
func (c *clock) tick(d time.Duration) { c.t = c.t.Add(d) }

// counting wraps a store and counts manifest reads.
type counting struct {
	kv.Store
	gets atomic.Int64
}

type countingReader struct {
	kv.Reader
	c *counting
}

func (r countingReader) Get(k []byte) ([]byte, error) {
	if strings.HasPrefix(string(k), "run/") {
		r.c.gets.Add(1)
	}
	return r.Reader.Get(k)
}

func (c *counting) View(ctx context.Context, fn func(kv.Reader) error) error {
	return c.Store.View(ctx, func(r kv.Reader) error { return fn(countingReader{r, c}) })
}

func openDisk(t *testing.T, dir string) kv.Store {
	t.Helper()
	db := badgertest.OpenDir(t, dir)
	return db
}

func newStore(t *testing.T) (*Store, *clock, *counting) {
	t.Helper()
	db := openDisk(t, t.TempDir())
	t.Cleanup(func() { db.Close() })
	c := &clock{t0}
	cs := &counting{Store: db}
	return New(cs, Options{Now: c.now, Rand: rand.New(rand.NewPCG(1, 2))}), c, cs
}

func ids(ms []Manifest) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.RunID)
	}
	return strings.Join(out, ",")
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	s, c, _ := newStore(t)
	m, err := s.Start(ctx, Start{SessionID: "proj_123", Goal: "Build a todo app", StartURL: "https://Example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.RunID, fmt.Sprintf("run_%d_", t0.UnixMilli())) || len(m.RunID) != len("run__")+13+6 {
		t.Fatalf("generated id %q is not run_<ms>_<6 chars>", m.RunID)
	}
	if m.Status != Running || m.Domain != "example.com" || m.TurnCount != 0 || m.ArtifactPaths == nil {
		t.Fatalf("started manifest = %+v", m)
	}
	if _, err := s.Start(ctx, Start{RunID: m.RunID, Goal: "again", Domain: "example.com"}); !errors.Is(err, ErrExists) {
		t.Fatalf("second start with the same id = %v, want ErrExists", err)
	}
	c.tick(30 * time.Second)
	m, err = s.Update(ctx, m.RunID, Progress{CurrentURL: "https://example.com/project/1", TurnCount: 3, ArtifactPaths: []string{"shot1.png"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.CurrentURL != "https://example.com/project/1" || m.TurnCount != 3 || !m.UpdatedAt.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("updated manifest = %+v", m)
	}
	c.tick(15 * time.Second)
	m, err = s.Complete(ctx, m.RunID, Completion{Success: true, Summary: "Created project", TurnCount: 8, ArtifactPaths: []string{"shot1.png", "trace.zip"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != Completed || m.Success == nil || !*m.Success || m.FinalURL != "https://example.com/project/1" ||
		!m.CompletedAt.Equal(t0.Add(45*time.Second)) || !reflect.DeepEqual(m.ArtifactPaths, []string{"shot1.png", "trace.zip"}) {
		t.Fatalf("completed manifest = %+v", m)
	}
	if _, err := s.Complete(ctx, m.RunID, Completion{}); !errors.Is(err, ErrFinished) {
		t.Fatalf("completing twice = %v, want ErrFinished", err)
	}
	if _, err := s.Update(ctx, m.RunID, Progress{TurnCount: 9}); !errors.Is(err, ErrFinished) {
		t.Fatalf("updating a finished run = %v, want ErrFinished", err)
	}
	if _, err := s.Get(ctx, "run_nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get unknown = %v", err)
	}
	running, _ := s.List(ctx, Filter{Status: Running})
	done, _ := s.List(ctx, Filter{Status: Completed})
	if len(running) != 0 || ids(done) != m.RunID {
		t.Fatalf("status index not moved: running=%s completed=%s", ids(running), ids(done))
	}

	sess := m.Session()
	if sess.ID != "proj_123" || sess.RunID != m.RunID || sess.Outcome != "Created project" || !sess.Success ||
		sess.DurationMS != 45000 || sess.TurnsUsed != 8 || sess.FinalURL != m.FinalURL {
		t.Fatalf("session of the run = %+v", sess)
	}
}

func TestFailedRun(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newStore(t)
	m, _ := s.Start(ctx, Start{RunID: "r1", Goal: "g", Domain: "x.com"})
	m, err := s.Complete(ctx, m.RunID, Completion{Success: false, Reason: "login wall"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != Failed || *m.Success || m.Reason != "login wall" {
		t.Fatalf("failed run = %+v", m)
	}
	if m.Session().Outcome != "login wall" {
		t.Fatalf("a failed run's session outcome should be its reason: %+v", m.Session())
	}
}

func TestListFiltersNewestFirstAndUsesIndexes(t *testing.T) {
	ctx := context.Background()
	s, c, cs := newStore(t)
	start := func(id, sess, host string) {
		t.Helper()
		c.tick(time.Minute)
		if _, err := s.Start(ctx, Start{RunID: id, SessionID: sess, Goal: "g " + id, Domain: host}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		start(fmt.Sprintf("a%02d", i), "", "a.com")
	}
	start("b1", "p1", "www.b.com")
	start("c1", "p1", "c.com")
	start("b2", "", "shop.b.com")
	start("b3", "p2", "b.com")
	if _, err := s.Complete(ctx, "b1", Completion{Success: true}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		f        Filter
		want     string
		maxReads int64
	}{
		{Filter{Domain: "b.com"}, "b3,b2,b1", 3},
		{Filter{Domain: "shop.b.com"}, "b2", 3},
		{Filter{SessionID: "p1"}, "c1,b1", 2},
		{Filter{SessionID: "p1", Status: Running}, "c1", 2},
		{Filter{Status: Completed}, "b1", 1},
		{Filter{Limit: 3}, "b3,b2,c1", 3},
		{Filter{Domain: "a.com", Limit: 2}, "a49,a48", 2},
	} {
		cs.gets.Store(0)
		got, err := s.List(ctx, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if ids(got) != tc.want {
			t.Errorf("List(%+v) = %s, want %s", tc.f, ids(got), tc.want)
		}
		if n := cs.gets.Load(); n > tc.maxReads {
			t.Errorf("List(%+v) read %d manifests, want at most %d", tc.f, n, tc.maxReads)
		}
	}
	if _, err := s.List(ctx, Filter{Status: "done"}); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("unknown status = %v, want invalid", err)
	}
}

func TestResumeAndFork(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newStore(t)
	m, _ := s.Start(ctx, Start{RunID: "run_1", SessionID: "proj_123", Goal: "Build a todo app", StartURL: "https://example.com"})
	r, err := s.Resume(ctx, m.RunID, "Add dark mode")
	if err != nil {
		t.Fatal(err)
	}
	if *r != (Scenario{Goal: "Add dark mode", StartURL: "https://example.com", SessionID: "proj_123", ParentRunID: "run_1"}) {
		t.Fatalf("resume of a run without a final URL = %+v", r)
	}
	s.Complete(ctx, m.RunID, Completion{Success: true, FinalURL: "https://example.com/project/123"})
	r, _ = s.Resume(ctx, m.RunID, "")
	if *r != (Scenario{Goal: "Build a todo app", StartURL: "https://example.com/project/123", SessionID: "proj_123", ParentRunID: "run_1"}) {
		t.Fatalf("resume = %+v", r)
	}
	f, err := s.Fork(ctx, m.RunID, "Build a different app")
	if err != nil {
		t.Fatal(err)
	}
	if f.Goal != "Build a different app" || f.StartURL != "https://example.com/project/123" || f.ParentRunID != "run_1" ||
		!strings.HasPrefix(f.SessionID, "fork_") || f.SessionID == "proj_123" {
		t.Fatalf("fork = %+v", f)
	}
	if _, err := s.Fork(ctx, "nope", "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("fork of unknown run = %v", err)
	}
}

func TestInvalidStarts(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newStore(t)
	for _, tc := range []struct {
		in   Start
		want string
	}{
		{Start{Domain: "x.com"}, "goal is empty"},
		{Start{Goal: "g"}, "no domain"},
		{Start{Goal: "g", Domain: "x.com", RunID: "a/b"}, `run id "a/b"`},
		{Start{Goal: "g", Domain: "x.com", RunID: ".."}, `run id ".."`},
		{Start{Goal: "g", Domain: "x.com", RunID: "a..b"}, `no ".."`},
		{Start{Goal: "g", Domain: "x.com", RunID: ".hidden"}, `run id ".hidden"`},
		{Start{Goal: "g", Domain: "x.com", RunID: "-rf"}, `run id "-rf"`},
		{Start{Goal: "g", Domain: "x.com", RunID: "a b"}, `run id "a b"`},
		{Start{Goal: "g", Domain: "x.com", RunID: strings.Repeat("x", 300)}, "300 characters long (at most 64)"},
		{Start{Goal: "g", Domain: "x.com", RunID: strings.Repeat("x", 65)}, "at most 64"},
		{Start{Goal: "g", StartURL: "http://"}, "no domain"},
		{Start{Goal: "g", StartURL: "about:blank"}, `no domain: start_url "about:blank" names no web site: give the domain too`},
		{Start{Goal: "g", Domain: "x.com", StartURL: "not a url"}, "start_url"},
	} {
		if _, err := s.Start(ctx, tc.in); !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Start(%+v) = %v, want invalid: %s", tc.in, err, tc.want)
		}
	}
}

func TestPrepareImportRoundTripAndForget(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openDisk(t, dir)
	c := &clock{t0}
	s := New(db, Options{Now: c.now})
	for i, host := range []string{"a.com", "www.a.com", "b.com"} {
		c.tick(time.Minute)
		m, err := s.Start(ctx, Start{RunID: fmt.Sprint("r", i), SessionID: "p", Goal: "g", Domain: host})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			s.Complete(ctx, m.RunID, Completion{Success: true, FinalURL: "https://a.com/done"})
		}
	}
	all, err := s.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Import into a fresh on-disk store: the same runs come back.
	db2 := openDisk(t, t.TempDir())
	defer db2.Close()
	s2 := New(db2, Options{Now: c.now})
	p, err := s2.Prepare(all)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Import(ctx, p); err != nil {
		t.Fatal(err)
	}
	back, _ := s2.All(ctx)
	if !reflect.DeepEqual(back, all) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", back, all)
	}
	if _, err := s2.Prepare([]Manifest{all[0], all[0]}); err == nil || !strings.Contains(err.Error(), "repeats runs[0]") {
		t.Fatalf("duplicate ids = %v", err)
	}
	bad := all[0]
	bad.Status = "done"
	if _, err := s2.Prepare([]Manifest{all[1], bad}); !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "runs[1]") {
		t.Fatalf("bad status = %v", err)
	}

	gone, err := s2.ForgetSite(ctx, "a.com")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(gone, ",") != "r0,r1" {
		t.Fatalf("forgot %v, want r0,r1", gone)
	}
	left, _ := s2.List(ctx, Filter{SessionID: "p"})
	if ids(left) != "r2" {
		t.Fatalf("after forgetting a.com: %s", ids(left))
	}
	// No index entry outside the site range still points at a forgotten run.
	err = db2.View(ctx, func(r kv.Reader) error {
		return r.Scan([]byte("runidx/"), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			if id := keyspace.LastPart(k); id != "r2" {
				t.Errorf("index entry %s left for forgotten run", k)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestValidRunIDs(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newStore(t)
	for _, id := range []string{"run_1", "a.b-c_D9", "7", strings.Repeat("x", 64), s.NewID()} {
		if _, err := s.Start(ctx, Start{RunID: id, Goal: "g", Domain: "x.com"}); err != nil {
			t.Errorf("Start(%q) = %v", id, err)
		}
	}
}

// A run can be on any page: about:blank after back on the first page, a
// data: URL, chromium's error page, a local file. The registry records it
// as it is, completes the run there, and resumes it at the last web page.
func TestNonWebPagesAreRunStates(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newStore(t)
	m, err := s.Start(ctx, Start{RunID: "r1", Goal: "g", StartURL: "https://shop.example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, m.RunID, Progress{CurrentURL: "https://shop.example.com/cart", TurnCount: 1}); err != nil {
		t.Fatal(err)
	}
	for i, u := range []string{"about:blank", "data:text/html,<h1>hi</h1>", "chrome-error://chromewebdata/", "file:///etc/passwd"} {
		got, err := s.Update(ctx, m.RunID, Progress{CurrentURL: u, TurnCount: i + 2})
		if err != nil {
			t.Fatalf("Update(%q) = %v", u, err)
		}
		if got.CurrentURL != u || got.Domain != "shop.example.com" {
			t.Fatalf("after Update(%q): current %q, domain %q", u, got.CurrentURL, got.Domain)
		}
	}
	if _, err := s.Update(ctx, m.RunID, Progress{CurrentURL: "no scheme here"}); !engine.IsInvalid(err) {
		t.Fatalf("Update with a non-URL = %v, want invalid", err)
	}
	done, err := s.Complete(ctx, m.RunID, Completion{Success: false, FinalURL: "about:blank", Reason: "gave_up", ArtifactPaths: []string{"/d/runs/r1/final.png"}})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != Failed || done.FinalURL != "about:blank" || len(done.ArtifactPaths) != 1 {
		t.Fatalf("completed = %+v", done)
	}
	// final and current are about:blank and file:, so the session history
	// and resume name the start URL: the only web page the manifest holds.
	if sess := done.Session(); sess.FinalURL != "https://shop.example.com/" || sess.Domain != "shop.example.com" {
		t.Fatalf("session final URL = %q, want the start URL", sess.FinalURL)
	}
	sc, err := s.Resume(ctx, m.RunID, "")
	if err != nil {
		t.Fatal(err)
	}
	if sc.StartURL != "https://shop.example.com/" {
		t.Fatalf("resume starts at %q", sc.StartURL)
	}
}

// Clone shares nothing with the manifest: every field filled, the copy
// changed through and through, the original is as it was. A field added
// to Manifest is filled too, so a slice or pointer Clone does not copy
// fails here.
func TestManifestClone(t *testing.T) {
	fill := func() *Manifest {
		m := &Manifest{}
		touch.All(m)
		return m
	}
	m, want := fill(), fill()
	c := m.Clone()
	if !reflect.DeepEqual(c, m) {
		t.Fatalf("clone %+v, want %+v", c, m)
	}
	touch.All(c)
	if reflect.DeepEqual(c, m) {
		t.Fatal("touch changed nothing")
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("changing the clone changed the manifest: %+v, want %+v", m, want)
	}
}
