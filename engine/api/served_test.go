package api_test

// The API served by a real memory server: engine/server/service on the data dir's
// unix socket over real badger on disk. engine/server/service cannot import
// engine/api, so the tests of the two together live here.

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/server/service"
)

// hang separates "happened" from "hung" in these tests: never a
// performance claim.
const hang = 60 * time.Second

// served is a memory server over a memory opened on disk.
type served struct {
	dir    string
	m      *memory.Memory
	srv    *service.Server
	cancel context.CancelFunc
	done   chan error
}

// serveDir opens the memory in dir and serves api.Handler on dir's socket
// until stop (or the test's end).
func serveDir(t testing.TB, dir string, mopts memory.Options) *served {
	t.Helper()
	ctx := context.Background()
	m, err := memory.Open(ctx, dir, mopts)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := service.Open(ctx, dir, api.Handler(m, api.Options{}), service.Options{WatchInterval: -1})
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &served{dir: dir, m: m, srv: srv, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- srv.Serve(sctx) }()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop shuts the server down (gracefully) and closes the memory; it may be
// called more than once.
func (s *served) stop(t testing.TB) {
	t.Helper()
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(hang):
		t.Fatal("the server did not shut down")
	}
	if err := s.m.Close(); err != nil {
		t.Errorf("close memory: %v", err)
	}
}

// dialAPI is an API client of dir's server over its socket.
func dialAPI(t testing.TB, dir string) *api.Client {
	t.Helper()
	sc, err := service.Dial(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sc.CloseIdleConnections)
	return api.NewClient(sc.HTTP, sc.BaseURL, api.ClientOptions{})
}

// The load the server must take: loadClients clients at once, each sending
// loadRequests mixed requests over the socket.
const (
	loadClients  = 8
	loadRequests = 1000
)

// Shared lessons every client dedups and uses: error_recovery lessons bound
// to no site, so uses on two sites promote them (once each).
const loadShared = 4

func sharedLesson(k int) lesson.Lesson {
	return lesson.Lesson{Lesson: fmt.Sprintf("wait for the overlay %d to go", k), Category: lesson.ErrorRecovery,
		FailedCommand: "click", ErrorPattern: fmt.Sprintf("intercepts pointer events %d", k)}
}

// Race lessons nobody records before the load: every client records them,
// so exactly one record of each creates it and every other is a dedup.
const loadRace = 2

func raceLesson(k int) lesson.Lesson {
	return lesson.Lesson{Lesson: fmt.Sprintf("reload when stale %d", k), Category: lesson.ErrorRecovery,
		FailedCommand: "type", ErrorPattern: fmt.Sprintf("element is detached %d", k)}
}

// The hosts uses are counted on: three sites, as promotion needs.
var loadHosts = []string{"shop.example", "www.shop.example", "news.example", "mail.example"}

// tally is what one client did and saw.
type tally struct {
	requests   int
	created    int               // new lessons recorded (Created)
	newIDs     []string          // their ids
	dedups     [loadShared]int   // records of a shared lesson
	uses       [loadShared]int   // uses (not helped)
	helped     [loadShared]int   // uses with helped
	counts     [loadShared][]int // the use_count each write on a shared lesson answered
	raceRecs   [loadRace]int     // records of a race lesson
	raceMade   [loadRace]int     // ... that created it
	raceCounts [loadRace][]int
	hosts      [loadShared]map[string]bool // sites a shared lesson was used on
}

// TestServedLoad: 8 clients × 1,000 mixed requests (recall on an error,
// recall on a domain, record new lessons and dedups of shared patterns,
// uses with and without help, lists) over the real socket to a server over
// real badger: no request fails, and afterwards the store, reopened from
// disk, holds exactly what the clients did — every shared lesson's use and
// helped counts, each write's answer a distinct count, one creation per
// raced pattern, one promotion per shared lesson, every new lesson.
//
// The full size takes ~1 s; under -race (make test) each client sends 250
// and with -short 100, unless ENGINE_LOAD_FULL=1 (~15 s with -race).
func TestServedLoad(t *testing.T) {
	requests := loadRequests
	switch {
	case os.Getenv("ENGINE_LOAD_FULL") == "1":
	case testing.Short():
		requests = 100
	case raceEnabled:
		requests = 250
	}
	dir := t.TempDir()
	var (
		evMu     sync.Mutex
		promoted = map[string]int{}
	)
	sink := event.Func(func(e event.Event) {
		if e.Name == event.LessonPromoted {
			evMu.Lock()
			promoted[fmt.Sprint(e.Fields["lesson"])]++
			evMu.Unlock()
		}
	})
	s := serveDir(t, dir, memory.Options{Events: sink})
	ctx, cancel := context.WithTimeout(context.Background(), 10*hang)
	defer cancel()

	setup := dialAPI(t, dir)
	seeds, err := setup.Lessons(ctx, api.LessonFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var sharedIDs [loadShared]string
	for k := range loadShared {
		r, err := setup.RecordLesson(ctx, sharedLesson(k))
		if err != nil {
			t.Fatal(err)
		}
		if !r.Created || r.Lesson.UseCount != 0 {
			t.Fatalf("shared lesson %d: created %v, use_count %d", k, r.Created, r.Lesson.UseCount)
		}
		sharedIDs[k] = r.Lesson.ID
	}

	tallies := make([]*tally, loadClients)
	errs := make(chan error, loadClients)
	var wg sync.WaitGroup
	for i := range loadClients {
		c := dialAPI(t, dir)
		tl := &tally{}
		for k := range tl.hosts {
			tl.hosts[k] = map[string]bool{}
		}
		tallies[i] = tl
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- loadClient(ctx, c, i, requests, sharedIDs, tl)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// What the clients did, summed.
	var (
		total, created      int
		newIDs              []string
		wantUse, wantHelped [loadShared]int
		counts              [loadShared][]int
		raceRecs, raceMade  [loadRace]int
		raceCounts          [loadRace][]int
		sites               [loadShared]map[string]bool
	)
	for k := range sites {
		sites[k] = map[string]bool{}
	}
	for _, tl := range tallies {
		total += tl.requests
		created += tl.created
		newIDs = append(newIDs, tl.newIDs...)
		for k := range loadShared {
			wantUse[k] += tl.dedups[k] + tl.uses[k] + tl.helped[k]
			wantHelped[k] += tl.helped[k]
			counts[k] = append(counts[k], tl.counts[k]...)
			for h := range tl.hosts[k] {
				sites[k][h] = true
			}
		}
		for k := range loadRace {
			raceRecs[k] += tl.raceRecs[k]
			raceMade[k] += tl.raceMade[k]
			raceCounts[k] = append(raceCounts[k], tl.raceCounts[k]...)
		}
	}
	if total != loadClients*requests {
		t.Fatalf("%d requests made, want %d", total, loadClients*requests)
	}
	t.Logf("%d requests: %d new lessons, shared uses %v (helped %v), race records %v", total, created, wantUse, wantHelped, raceRecs)

	// Each write on a lesson answered a distinct use_count: together the
	// answers are 1..n, so no update was lost or applied twice.
	for k := range loadShared {
		if err := oneToN(counts[k]); err != nil {
			t.Errorf("shared lesson %d: the use counts answered: %v", k, err)
		}
	}
	for k := range loadRace {
		if raceMade[k] != 1 {
			t.Errorf("race lesson %d: created by %d of its %d records, want 1", k, raceMade[k], raceRecs[k])
		}
		if err := oneToN(raceCounts[k]); err != nil {
			t.Errorf("race lesson %d: the use counts answered by its dedups: %v", k, err)
		}
	}

	// The store, reopened from disk after the server stopped, holds exactly
	// that.
	s.stop(t)
	m, err := memory.Open(context.Background(), dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for k, id := range sharedIDs {
		l, err := m.Lessons.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if l.UseCount != wantUse[k] || l.Helped != wantHelped[k] {
			t.Errorf("shared lesson %d: use_count %d helped %d, want %d and %d", k, l.UseCount, l.Helped, wantUse[k], wantHelped[k])
		}
		if l.Category != lesson.BestPractice {
			t.Errorf("shared lesson %d: category %s, want it promoted to best_practice", k, l.Category)
		}
		var want []string
		for h := range sites[k] {
			want = append(want, domain.Site(h))
		}
		want = uniqSorted(want)
		if got := uniqSorted(slices.Clone(l.TriggeredDomains)); !slices.Equal(got, want) || len(got) != len(l.TriggeredDomains) {
			t.Errorf("shared lesson %d: triggered_domains %v, want %v", k, l.TriggeredDomains, want)
		}
		evMu.Lock()
		if n := promoted[l.Lesson]; n != 1 {
			t.Errorf("shared lesson %d: promoted %d times, want once", k, n)
		}
		evMu.Unlock()
	}
	for k := range loadRace {
		r := raceLesson(k)
		got, err := m.Lessons.RecallError(ctx, "type e3", r.ErrorPattern, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0].ErrorPattern != r.ErrorPattern || got[0].UseCount != raceRecs[k]-1 {
			t.Errorf("race lesson %d: recalled %+v, want use_count %d", k, got, raceRecs[k]-1)
		}
	}
	for _, id := range newIDs {
		if _, err := m.Lessons.Get(ctx, id); err != nil {
			t.Errorf("new lesson %s: %v", id, err)
		}
	}
	all, err := m.Lessons.List(ctx, lesson.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, l := range all {
		if ids[l.ID] {
			t.Errorf("lesson %s listed twice (a stale index entry)", l.ID)
		}
		ids[l.ID] = true
	}
	if want := len(seeds.Lessons) + loadShared + loadRace + created; len(all) != want || len(ids) != want {
		t.Errorf("%d lessons (%d distinct), want %d: %d seeds, %d shared, %d raced, %d new", len(all), len(ids), want, len(seeds.Lessons), loadShared, loadRace, created)
	}
	// The error recall index agrees with the records: each shared lesson is
	// recalled first on its own error, with its final count.
	for k, id := range sharedIDs {
		got, err := m.Lessons.RecallError(ctx, "click e12", "element intercepts pointer events "+fmt.Sprint(k), "")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0].ID != id || got[0].UseCount != wantUse[k] {
			t.Errorf("recall of shared lesson %d (use_count %d): %+v", k, wantUse[k], got)
		}
	}
}

// loadClient sends n mixed requests as client i, counting what it did in tl.
func loadClient(ctx context.Context, c *api.Client, i, n int, shared [loadShared]string, tl *tally) error {
	for j := range n {
		k := (i + j) % loadShared
		host := loadHosts[(i+j/10)%len(loadHosts)]
		var err error
		switch j % 10 {
		case 0, 8: // Trigger A
			var ls []lesson.Lesson
			ls, err = c.RecallError(ctx, "click e12", fmt.Sprintf("element intercepts pointer events %d", k), host)
			if err == nil && !slices.ContainsFunc(ls, func(l lesson.Lesson) bool { return l.ID == shared[k] }) {
				err = fmt.Errorf("recall did not return shared lesson %d", k)
			}
		case 1: // Trigger B
			_, err = c.RecallDomain(ctx, host)
		case 2: // a new lesson
			var r *api.RecordedLesson
			r, err = c.RecordLesson(ctx, lesson.Lesson{Lesson: fmt.Sprintf("client %d learned %d", i, j), Category: lesson.SiteSpecific,
				FailedCommand: "fill", ErrorPattern: fmt.Sprintf("client %d error %d", i, j), Domain: host})
			if err == nil {
				if !r.Created {
					err = fmt.Errorf("new lesson %d/%d: not created", i, j)
				}
				tl.created++
				tl.newIDs = append(tl.newIDs, r.Lesson.ID)
			}
		case 3: // the same pattern again: a dedup
			var r *api.RecordedLesson
			r, err = c.RecordLesson(ctx, sharedLesson(k))
			if err == nil {
				if r.Created || r.Lesson.ID != shared[k] {
					err = fmt.Errorf("dedup of shared lesson %d: created %v, id %s", k, r.Created, r.Lesson.ID)
				}
				tl.dedups[k]++
				tl.counts[k] = append(tl.counts[k], r.Lesson.UseCount)
			}
		case 4, 9, 5: // a use, or a use that helped
			helped := j%10 == 5
			var l *lesson.Lesson
			l, err = c.UseLesson(ctx, shared[k], api.UseRequest{Domain: host, Helped: helped})
			if err == nil {
				if helped {
					tl.helped[k]++
				} else {
					tl.uses[k]++
				}
				tl.hosts[k][host] = true
				tl.counts[k] = append(tl.counts[k], l.UseCount)
			}
		case 6:
			_, err = c.Lessons(ctx, api.LessonFilter{Domain: host, Limit: 10})
		case 7: // a pattern every client records: one creates it
			r := k % loadRace
			var rec *api.RecordedLesson
			rec, err = c.RecordLesson(ctx, raceLesson(r))
			if err == nil {
				tl.raceRecs[r]++
				if rec.Created {
					tl.raceMade[r]++
				} else {
					tl.raceCounts[r] = append(tl.raceCounts[r], rec.Lesson.UseCount)
				}
			}
		}
		if err != nil {
			return fmt.Errorf("client %d, request %d: %w", i, j, err)
		}
		tl.requests++
	}
	return nil
}

// oneToN checks that counts are exactly 1..len(counts), in any order.
func oneToN(counts []int) error {
	s := slices.Sorted(slices.Values(counts))
	for i, n := range s {
		if n != i+1 {
			return fmt.Errorf("%d answers, sorted %v: position %d is %d", len(s), s, i, n)
		}
	}
	return nil
}

func uniqSorted(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
