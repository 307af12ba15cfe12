package lesson

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

// env is a lesson store on a real on-disk badger with a settable clock and
// the events it emitted.
type env struct {
	t      *testing.T
	db     kv.Store
	s      *Store
	now    time.Time
	events []event.Event
	mu     sync.Mutex
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db := badgertest.Open(t)
	e := &env{t: t, db: db, now: time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)}
	// Written as by a person (engine lessons add): trusted from the start.
	// trust_test.go writes as other writers too.
	e.s = New(db, Options{Now: func() time.Time { return e.now }, Provenance: engine.Provenance{Source: engine.SourceManual}, Events: func(ev event.Event) {
		e.mu.Lock()
		e.events = append(e.events, ev)
		e.mu.Unlock()
	}})
	if err := e.s.Seed(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) record(l Lesson, host string) *Lesson {
	e.t.Helper()
	out, _, err := e.s.Record(context.Background(), l, host)
	if err != nil {
		e.t.Fatal(err)
	}
	if l.UseCount > out.UseCount {
		out = e.setUses(out.ID, l.UseCount)
	}
	return out
}

// setUses gives lesson id n uses, as an operator's import --trust of a
// counted lesson would (Record starts every lesson with the store's own
// count): the state ranking and pruning tests start from.
func (e *env) setUses(id string, n int) *Lesson {
	e.t.Helper()
	var out *Lesson
	err := e.db.Update(context.Background(), func(tx kv.Txn) error {
		old, err := load(tx, id)
		if err != nil {
			return err
		}
		l := *old
		l.UseCount = n
		out = &l
		return put(tx, old, &l)
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) eventsNamed(name string) []event.Event {
	var out []event.Event
	for _, ev := range e.events {
		if ev.Name == name {
			out = append(out, ev)
		}
	}
	return out
}

func lessonTexts(ls []Lesson) string { return strings.Join(texts(ls), " | ") }

func TestSeedsWrittenOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	all, err := e.s.List(ctx, Filter{})
	if err != nil || len(all) != 3 {
		t.Fatalf("after first open: %d lessons, %v; want the 3 seeds", len(all), err)
	}
	for _, l := range all {
		if l.Source != SourceSeed || l.CreatedAt != "2026-03-12" || l.ID == "" {
			t.Errorf("seed %+v", l)
		}
	}
	// Removing a seed by hand sticks: seeding happens on the first open only.
	if err := e.s.Remove(ctx, all[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	if all, _ = e.s.List(ctx, Filter{}); len(all) != 2 {
		t.Fatalf("seeding again brought a removed seed back: %d lessons", len(all))
	}
}

func TestTier1EligibilityOrderAndCap(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// Not eligible: Tier 2 categories, and eligible categories bound to a site.
	e.record(Lesson{Lesson: "recover", Category: ErrorRecovery, FailedCommand: "click", ErrorPattern: "x y", UseCount: 50}, "")
	e.record(Lesson{Lesson: "amazon cookie", Category: SiteSpecific, Domain: "amazon.com", UseCount: 50}, "")
	e.record(Lesson{Lesson: "bound bp", Category: BestPractice, Domain: "amazon.com", UseCount: 50}, "")
	// Eligible, more used than the seeds (use_count 0).
	e.record(Lesson{Lesson: "most used", Category: BestPractice, UseCount: 7}, "")
	// Equal use with the seeds: seeds first.
	e.record(Lesson{Lesson: "learned zero", Category: ToolFallback, FailedCommand: "hover", ErrorPattern: "not hoverable"}, "")

	t1, err := e.s.Tier1(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := texts(t1)
	if len(got) != 5 || got[0] != "most used" || got[4] != "learned zero" {
		t.Fatalf("tier 1 = %q", got)
	}
	for _, l := range t1[1:4] {
		if l.Source != SourceSeed {
			t.Fatalf("seeds must come before learned lessons of equal use: %q", got)
		}
	}
	ev := e.eventsNamed(event.Tier1Loaded)
	if len(ev) != 1 || ev[0].Fields["count"] != 5 {
		t.Fatalf("tier1_loaded events: %+v", ev)
	}

	for i := range 12 {
		e.record(Lesson{Lesson: fmt.Sprintf("bp %d", i), Category: BestPractice, UseCount: 100 + i}, "")
	}
	t1, _ = e.s.Tier1(ctx)
	if len(t1) != DefaultTier1Cap || t1[0].Lesson != "bp 11" {
		t.Fatalf("cap: got %d lessons starting %q", len(t1), t1[0].Lesson)
	}
	// Using a lesson moves it in the order.
	for range 200 {
		if _, err := e.s.Use(ctx, t1[len(t1)-1].ID, ""); err != nil {
			t.Fatal(err)
		}
	}
	t1b, _ := e.s.Tier1(ctx)
	if t1b[0].ID != t1[len(t1)-1].ID {
		t.Fatalf("after 200 uses %q should lead Tier 1, got %q", t1[len(t1)-1].Lesson, t1b[0].Lesson)
	}
}

// The design's walkthrough example 1: fill fails, the seed tip is recalled.
func TestRecallErrorSeedExample(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	got, err := e.s.RecallError(ctx, "fill", "too many arguments: expected 2, received 3", "www.google.com")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0].Lesson, "If fill fails") {
		t.Fatalf("recall = %q", lessonTexts(got))
	}
	// Case-insensitive, and a wrapped command line names the same verb.
	got, _ = e.s.RecallError(ctx, "playwright-cli FILL e37 padel rackets", "Too Many Arguments", "")
	if len(got) != 1 {
		t.Fatalf("case-insensitive recall = %q", lessonTexts(got))
	}
	ev := e.eventsNamed(event.ErrorRecall)
	if len(ev) != 2 || ev[0].Fields["matched"] != 1 || ev[0].Fields["command"] != "fill" ||
		ev[0].Fields["error_snippet"] != "too many arguments: expected 2, received 3" {
		t.Fatalf("error_recall events: %+v", ev)
	}
	// A hover error matches no lesson.
	if got, _ = e.s.RecallError(ctx, "hover e5", "element is detached", ""); len(got) != 0 {
		t.Fatalf("unrelated error recalled %q", lessonTexts(got))
	}
	// A click error of another kind still gets the click seed, on its
	// command alone.
	if got, _ = e.s.RecallError(ctx, "click e5", "element is detached", ""); len(got) != 1 || got[0].FailedCommand != "click" {
		t.Fatalf("click error recalled %q", lessonTexts(got))
	}
	// A recall is not a use.
	l, _ := e.s.Get(ctx, idFor(&Lesson{Category: ToolFallback, FailedCommand: "fill", ErrorPattern: "too many arguments"}))
	if l.UseCount != 0 {
		t.Fatalf("recall changed use_count to %d", l.UseCount)
	}
}

func TestRecallErrorRanksAndCaps(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.record(Lesson{Lesson: "cmd only", Category: ErrorRecovery, FailedCommand: "type", UseCount: 9}, "")
	e.record(Lesson{Lesson: "pattern only", Category: ErrorRecovery, ErrorPattern: "not an input"}, "")
	e.record(Lesson{Lesson: "both", Category: ErrorRecovery, FailedCommand: "type", ErrorPattern: "not an input"}, "")
	e.record(Lesson{Lesson: "both, for this site", Category: ErrorRecovery, FailedCommand: "type", ErrorPattern: "is not an input", Domain: "shop.example"}, "")
	e.record(Lesson{Lesson: "both, other site", Category: ErrorRecovery, FailedCommand: "type", ErrorPattern: "an input", Domain: "other.example"}, "")
	e.record(Lesson{Lesson: "other pattern", Category: ErrorRecovery, FailedCommand: "type", ErrorPattern: "detached"}, "")

	got, err := e.s.RecallError(ctx, "type e4 hello", "element is not an input", "www.shop.example")
	if err != nil {
		t.Fatal(err)
	}
	if want := "both, for this site | both | pattern only"; lessonTexts(got) != want {
		t.Fatalf("ranked recall = %q, want %q", lessonTexts(got), want)
	}
	// Without the site, its lesson is not shown; the other site's never is.
	got, _ = e.s.RecallError(ctx, "type", "element is not an input", "")
	if want := "both | pattern only | cmd only"; lessonTexts(got) != want {
		t.Fatalf("recall without domain = %q, want %q", lessonTexts(got), want)
	}
}

// The design's example 2 and the subdomain rule: www.amazon.com gets
// amazon.com's lessons; notamazon.com does not.
func TestRecallDomain(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.record(Lesson{Lesson: "Click the cookie acceptance banner first.", Category: SiteSpecific, Domain: "amazon.com", UseCount: 4}, "")
	e.record(Lesson{Lesson: "smile only", Category: SiteSpecific, Domain: "smile.amazon.com"}, "")
	e.record(Lesson{Lesson: "not amazon", Category: SiteSpecific, Domain: "notamazon.com"}, "")

	got, _ := e.s.RecallDomain(ctx, "https://www.amazon.com/s?k=x")
	if lessonTexts(got) != "Click the cookie acceptance banner first." {
		t.Fatalf("www.amazon.com recalled %q", lessonTexts(got))
	}
	got, _ = e.s.RecallDomain(ctx, "smile.amazon.com")
	if lessonTexts(got) != "smile only | Click the cookie acceptance banner first." {
		t.Fatalf("smile.amazon.com recalled %q (the exact host first)", lessonTexts(got))
	}
	got, _ = e.s.RecallDomain(ctx, "notamazon.com")
	if lessonTexts(got) != "not amazon" {
		t.Fatalf("notamazon.com recalled %q", lessonTexts(got))
	}
	ev := e.eventsNamed(event.DomainRecall)
	if len(ev) != 3 || ev[1].Fields["domain"] != "smile.amazon.com" || ev[1].Fields["matched"] != 2 {
		t.Fatalf("domain_recall events: %+v", ev)
	}
	if _, err := e.s.RecallDomain(ctx, ""); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("empty domain: %v", err)
	}
}

func TestRecordDedupWidenAndPromote(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	l := Lesson{Lesson: "When click fails with 'intercepts pointer events', press Escape first.",
		Category: ErrorRecovery, FailedCommand: "click", ErrorPattern: "intercepts pointer events", Source: SourceLearned}
	// Learned on google.com: bound to it by the learner.
	first, created, err := e.s.record(ctx, Lesson{Lesson: l.Lesson, Category: l.Category, FailedCommand: l.FailedCommand,
		ErrorPattern: l.ErrorPattern, Domain: "google.com"}, "www.google.com", SourceLearned, false)
	if err != nil || !created || first.Domain != "google.com" || first.UseCount != 0 {
		t.Fatalf("first record: %+v created=%v err=%v", first, created, err)
	}
	// The walkthrough's example 3, across five domains.
	hosts := []string{"bing.com", "amazon.com", "yahoo.com", "reddit.com", "www.reddit.com"}
	var got *Lesson
	for i, h := range hosts {
		got, created, err = e.s.Record(ctx, Lesson{Lesson: "other wording", Category: ErrorRecovery,
			FailedCommand: "CLICK", ErrorPattern: "Intercepts Pointer Events", Domain: h}, h)
		if err != nil || created {
			t.Fatalf("record on %s: created=%v err=%v (want a dedup)", h, created, err)
		}
		if i == 0 && got.Domain != "" {
			t.Fatalf("seen on a second site, the lesson should widen to every site; domain=%q", got.Domain)
		}
		if got.ID != first.ID || got.Lesson != l.Lesson {
			t.Fatalf("dedup replaced the lesson: %+v", got)
		}
	}
	if got.UseCount != 5 || got.Category != BestPractice ||
		!slices.Equal(got.TriggeredDomains, []string{"google.com", "bing.com", "amazon.com", "yahoo.com", "reddit.com"}) {
		t.Fatalf("after five domains: %+v", got)
	}
	promos := e.eventsNamed(event.LessonPromoted)
	if len(promos) != 1 || promos[0].Fields["use_count"] != 5 {
		t.Fatalf("lesson_promoted events: %+v", promos)
	}
	if w := e.eventsNamed(event.LessonWidened); len(w) != 1 || w[0].Fields["from"] != "google.com" {
		t.Fatalf("lesson_widened events: %+v", w)
	}
	if n := len(e.eventsNamed(event.LessonUsedOffSite)); n != 0 {
		t.Fatalf("%d lesson_used_off_site events for a learned lesson that widened", n)
	}
	if n := len(e.eventsNamed(event.LessonDeduplicated)); n != 5 {
		t.Fatalf("%d lesson_deduplicated events, want 5", n)
	}
	t1, _ := e.s.Tier1(ctx)
	if t1[0].ID != got.ID {
		t.Fatalf("promoted lesson not first in Tier 1: %q", lessonTexts(t1))
	}
	// One record, however many sites it moved across.
	if all, _ := e.s.List(ctx, Filter{}); len(all) != 4 {
		t.Fatalf("%d lessons stored, want 3 seeds + 1", len(all))
	}
}

// A domain someone gave a lesson is a claim: used on other sites, whatever
// its category and however often, the lesson keeps it, records each site
// in triggered_domains with an event, is never promoted, and stays in
// domain recall on its site only.
func TestSiteLessonKeepsItsDomain(t *testing.T) {
	for _, cat := range []Category{ErrorRecovery, BestPractice, SiteSpecific, ToolFallback} {
		t.Run(string(cat), func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			l := e.record(Lesson{Lesson: "Close the a.com cookie wall before clicking.", Category: cat, Domain: "a.com",
				FailedCommand: "click", ErrorPattern: "cookie wall"}, "")
			hosts := []string{"other1.com", "www.other2.com", "other3.com", "a.com", "other4.com", "other1.com"}
			for _, h := range hosts {
				var err error
				if l, err = e.s.Use(ctx, l.ID, h); err != nil {
					t.Fatal(err)
				}
				if l.Domain != "a.com" || l.Category != cat {
					t.Fatalf("used on %s: domain=%q category=%s", h, l.Domain, l.Category)
				}
			}
			if l.UseCount != 6 || !slices.Equal(l.TriggeredDomains, []string{"other1.com", "other2.com", "other3.com", "a.com", "other4.com"}) {
				t.Fatalf("after six uses: %+v", l)
			}
			off := e.eventsNamed(event.LessonUsedOffSite)
			if len(off) != 5 {
				t.Fatalf("%d lesson_used_off_site events, want 5 (one per use outside a.com): %+v", len(off), off)
			}
			if f := off[1].Fields; f["id"] != l.ID || f["domain"] != "a.com" || f["site"] != "other2.com" {
				t.Fatalf("second off-site event: %+v", f)
			}
			if n := len(e.eventsNamed(event.LessonPromoted)) + len(e.eventsNamed(event.LessonWidened)); n != 0 {
				t.Fatalf("%d promotion or widening events", n)
			}
			// Domain recall: on its site, and not on the sites it was used on.
			got, err := e.s.RecallDomain(ctx, "www.a.com")
			if err != nil || !slices.Contains(texts(got), l.Lesson) {
				t.Fatalf("recall on www.a.com: %q %v", lessonTexts(got), err)
			}
			for _, h := range []string{"other1.com", "other4.com"} {
				got, _ := e.s.RecallDomain(ctx, h)
				if slices.Contains(texts(got), l.Lesson) {
					t.Fatalf("recalled on %s: %q", h, lessonTexts(got))
				}
			}
			// Error recall: on its site only.
			if got, _ := e.s.RecallError(ctx, "click e1", "cookie wall in the way", "a.com"); !slices.Contains(texts(got), l.Lesson) {
				t.Fatalf("error recall on a.com: %q", lessonTexts(got))
			}
			if got, _ := e.s.RecallError(ctx, "click e1", "cookie wall in the way", "other1.com"); slices.Contains(texts(got), l.Lesson) {
				t.Fatalf("error recall on other1.com: %q", lessonTexts(got))
			}
			if t1, _ := e.s.Tier1(ctx); slices.Contains(texts(t1), l.Lesson) {
				t.Fatalf("a site lesson is in Tier 1: %q", lessonTexts(t1))
			}
		})
	}
}

func TestPromotionNeedsAllThreeConditions(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// Five uses on two sites only.
	l := e.record(Lesson{Lesson: "x", Category: ErrorRecovery, FailedCommand: "press", ErrorPattern: "key unknown"}, "")
	for _, h := range []string{"a.com", "b.com", "a.com", "b.com", "a.com", "b.com"} {
		l, _ = e.s.Use(ctx, l.ID, h)
	}
	if l.Category != ErrorRecovery || l.UseCount != 6 {
		t.Fatalf("promoted with 2 domains: %+v", l)
	}
	// Bound to a site (site_specific never widens): never promoted.
	s := e.record(Lesson{Lesson: "y", Category: SiteSpecific, Domain: "a.com", FailedCommand: "press", ErrorPattern: "z q"}, "")
	for _, h := range []string{"a.com", "b.com", "c.com", "d.com", "e.com"} {
		s, _ = e.s.Use(ctx, s.ID, h)
	}
	if s.Category != SiteSpecific || s.Domain != "a.com" {
		t.Fatalf("site_specific lesson changed: %+v", s)
	}
	l, _ = e.s.Use(ctx, l.ID, "c.com")
	if l.Category != BestPractice {
		t.Fatalf("third domain did not promote: %+v", l)
	}
}

func TestPrune(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.record(Lesson{Lesson: "stale", Category: ErrorRecovery, FailedCommand: "a", LastUsed: "2025-01-01", CreatedAt: "2025-01-01"}, "")
	e.record(Lesson{Lesson: "stale but proven", Category: ErrorRecovery, FailedCommand: "b", LastUsed: "2025-01-01", CreatedAt: "2025-01-01", UseCount: 5}, "")
	e.record(Lesson{Lesson: "stale seed", Category: BestPractice, Source: SourceSeed, LastUsed: "2025-01-01", CreatedAt: "2025-01-01"}, "")
	e.record(Lesson{Lesson: "89 days", Category: SiteSpecific, Domain: "a.com", LastUsed: "2025-12-13", CreatedAt: "2025-12-13"}, "")
	e.record(Lesson{Lesson: "91 days", Category: SiteSpecific, Domain: "a.com", LastUsed: "2025-12-11", CreatedAt: "2025-12-11"}, "")

	pruned, remaining, err := e.s.Prune(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if pruned != 2 || remaining != 6 {
		t.Fatalf("pruned %d, remaining %d; want 2 and 6", pruned, remaining)
	}
	all, _ := e.s.List(ctx, Filter{})
	for _, l := range all {
		if l.Lesson == "stale" || l.Lesson == "91 days" {
			t.Fatalf("%q survived pruning", l.Lesson)
		}
	}
	ev := e.eventsNamed(event.LessonsPruned)
	if len(ev) != 1 || ev[0].Fields["pruned_count"] != 2 || ev[0].Fields["remaining_count"] != 6 {
		t.Fatalf("lessons_pruned: %+v", ev)
	}
	// A use refreshes last_used: a stale lesson used today survives.
	old := e.record(Lesson{Lesson: "revived", Category: ErrorRecovery, FailedCommand: "c", LastUsed: "2025-01-01", CreatedAt: "2025-01-01"}, "")
	e.s.Use(ctx, old.ID, "")
	if pruned, _, _ = e.s.Prune(ctx, 0); pruned != 0 {
		t.Fatalf("pruned a lesson used today")
	}
	// A shorter max age prunes more.
	e.now = e.now.AddDate(0, 0, 10)
	if pruned, _, _ = e.s.Prune(ctx, 5); pruned != 2 {
		t.Fatalf("max age 5 days: pruned %d, want 2 (89 days, revived)", pruned)
	}
}

func TestErrorPattern(t *testing.T) {
	for in, want := range map[string]string{
		"too many arguments: expected 2, received 3":                 "too many arguments",
		"Another element would receive the click: <div id=cookie>":   "another element would receive the click",
		"element is not an input":                                    "element is not an input",
		"Error: stale ref e37 (the page navigated)":                  "stale ref <ref> (the page navigated)",
		`timeout after 5000ms waiting for "Search"`:                  "timeout after <n> waiting for <text>",
		"net::ERR_NAME_NOT_RESOLVED at https://x.example/\nstack...": "net::err_name_not_resolved at <url>",
		"error":                              "",
		"Error 500":                          "",
		"selector \"#q\" matched 3 elements": "selector <text> matched <n> elements",
		// Placeholders are not words: a value and one word is too thin.
		`"Europe" e37`:       "",
		`missing "x" in e37`: "missing <text> in <ref>",
		// The garbled pattern: a placeholder where the ref was.
		`"Europe…" is not a snapshot ref (refs look like e37)`: "<text> is not a snapshot ref (refs look like <ref>)",
		// Cut at 80 characters, never inside a placeholder.
		strings.Repeat("word ", 15) + `"quoted" is long`: strings.TrimSpace(strings.Repeat("word ", 15)),
		// A URL's colon does not cut the pattern short.
		"navigation to http://a.example:8080/x failed: timeout": "navigation to <url> failed",
	} {
		if got := ErrorPattern(in); got != want {
			t.Errorf("ErrorPattern(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConcurrentUsesAreNotLost(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	l := e.record(Lesson{Lesson: "hot", Category: ErrorRecovery, FailedCommand: "click", ErrorPattern: "busy busy"}, "")
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				var err error
				if i%2 == 0 {
					_, err = e.s.Use(ctx, l.ID, fmt.Sprintf("site%d.com", w))
				} else {
					_, _, err = e.s.Record(ctx, Lesson{Lesson: "hot", Category: ErrorRecovery, FailedCommand: "click", ErrorPattern: "busy busy"}, "")
				}
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	got, _ := e.s.Get(ctx, l.ID)
	if got.UseCount != workers*each || len(got.TriggeredDomains) != workers {
		t.Fatalf("use_count %d (want %d), %d domains (want %d)", got.UseCount, workers*each, len(got.TriggeredDomains), workers)
	}
}

func TestInvalidLessons(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		l    Lesson
		want string
	}{
		{Lesson{Lesson: "  ", Category: BestPractice}, "empty"},
		{Lesson{Lesson: "x", Category: "tips"}, `unknown category "tips"`},
		{Lesson{Lesson: "x", Category: SiteSpecific}, "needs a domain"},
		{Lesson{Lesson: "x", Category: BestPractice, Source: "robot"}, `unknown source "robot"`},
		{Lesson{Lesson: "x", Category: BestPractice, UseCount: -1}, "negative"},
		{Lesson{Lesson: "x", Category: BestPractice, LastUsed: "yesterday"}, `last_used "yesterday"`},
		{Lesson{Lesson: "x", Category: BestPractice, Domain: "a b"}, "domain"},
	} {
		_, _, err := e.s.Record(context.Background(), c.l, "")
		if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an invalid-lesson error mentioning %q", c.l, err, c.want)
		}
	}
	if _, err := e.s.Use(context.Background(), "lnope", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("use of a missing id: %v", err)
	}
}
