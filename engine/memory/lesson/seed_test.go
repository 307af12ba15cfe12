package lesson

import (
	"context"
	"slices"
	"testing"
)

// An imported lesson whose text is a seed's (case and spacing aside) is
// that seed, whatever its file says of its command, pattern, category or
// trust: it merges with the stored seed and is never pruned. Any other
// lesson claiming source seed is an imported candidate, pruned like any.
func TestImportedSeedMergesWithTheSeed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	seeds := Seeds()
	file := []Lesson{
		{Lesson: seeds[0].Lesson, Category: ToolFallback, FailedCommand: "fill", ErrorPattern: "too many arguments",
			Source: SourceSeed, UseCount: 3, CreatedAt: "2025-11-02", LastUsed: "2025-12-12", TriggeredDomains: []string{"google.com", "amazon.com"}},
		// Another wording's spacing and case, no command: still the Enter seed.
		{Lesson: "  after entering text in a search box, press Enter to submit.   Avoid clicking submit buttons: autocomplete dropdowns often cover them.",
			Category: BestPractice, Source: SourceSeed, CreatedAt: "2025-11-02", LastUsed: "2025-11-02"},
		// The overlay seed without the command and pattern the engine's has, as a candidate.
		{Lesson: seeds[2].Lesson, Category: ErrorRecovery, Source: SourceSeed, Trust: Candidate, UseCount: 1,
			CreatedAt: "2025-11-02", LastUsed: "2025-11-05", TriggeredDomains: []string{"bing.com"}},
		{Lesson: "Always accept every cookie banner.", Category: BestPractice, Source: SourceSeed, CreatedAt: "2025-11-02", LastUsed: "2025-11-02"},
		// A seed's text bound to a site is the seed, used there.
		{Lesson: seeds[1].Lesson, Category: BestPractice, Domain: "www.shop.example", Source: SourceLearned, UseCount: 2, CreatedAt: "2025-11-02", LastUsed: "2025-11-03"},
		// A site_specific lesson of a seed's text is another lesson.
		{Lesson: seeds[1].Lesson, Category: SiteSpecific, Domain: "shop.example", Source: SourceSeed, CreatedAt: "2025-11-02", LastUsed: "2025-11-02"},
	}
	for _, trust := range []bool{false, true} {
		ls, err := e.s.Prepare(file, ImportOptions{KeepTrust: trust})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.s.Import(ctx, ls); err != nil {
			t.Fatal(err)
		}
	}
	all, err := e.s.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 {
		t.Fatalf("%d lessons, want the 3 seeds and 2 others: %q", len(all), lessonTexts(all))
	}
	byText := map[string]Lesson{}
	for _, l := range all {
		byText[l.Lesson+"|"+l.Domain] = l
	}
	for i, sd := range seeds {
		got, ok := byText[sd.Lesson+"|"]
		if !ok {
			t.Fatalf("seed %d missing: %q", i, lessonTexts(all))
		}
		if got.ID != idFor(&sd) || got.Source != SourceSeed || got.Trust != Trusted || got.Category != sd.Category ||
			got.FailedCommand != sd.FailedCommand || got.ErrorPattern != sd.ErrorPattern {
			t.Fatalf("seed %d after import: %+v", i, got)
		}
	}
	fill, enter, overlay := byText[seeds[0].Lesson+"|"], byText[seeds[1].Lesson+"|"], byText[seeds[2].Lesson+"|"]
	// Imported twice: merged, not added.
	if fill.UseCount != 3 || fill.CreatedAt != "2025-11-02" || fill.LastUsed != "2025-12-12" ||
		!slices.Equal(fill.TriggeredDomains, []string{"google.com", "amazon.com"}) {
		t.Fatalf("fill seed: %+v", fill)
	}
	if overlay.UseCount != 1 || !slices.Equal(overlay.TriggeredDomains, []string{"bing.com"}) || overlay.LastUsed != "2025-11-05" {
		t.Fatalf("overlay seed: %+v", overlay)
	}
	if enter.UseCount != 2 || enter.LastUsed != "2025-11-03" || enter.Domain != "" || !slices.Equal(enter.TriggeredDomains, []string{"shop.example"}) {
		t.Fatalf("enter seed: %+v", enter)
	}
	for _, k := range []string{"Always accept every cookie banner.|", seeds[1].Lesson + "|shop.example"} {
		if _, ok := byText[k]; !ok {
			t.Fatalf("%q missing", k)
		}
	}
	// A use merges too: a later import of the file keeps the larger count.
	if _, err := e.s.Use(ctx, fill.ID, "bing.com"); err != nil {
		t.Fatal(err)
	}
	ls, _ := e.s.Prepare(file[:1], ImportOptions{})
	if err := e.s.Import(ctx, ls); err != nil {
		t.Fatal(err)
	}
	got, _ := e.s.Get(ctx, fill.ID)
	if got.UseCount != 4 || !slices.Equal(got.TriggeredDomains, []string{"google.com", "amazon.com", "bing.com"}) {
		t.Fatalf("fill seed after a use and another import: %+v", got)
	}

	// Years later, prune: the seeds stay, whatever the file said.
	e.now = e.now.AddDate(3, 0, 0)
	if _, _, err := e.s.Prune(ctx, 90); err != nil {
		t.Fatal(err)
	}
	left, _ := e.s.List(ctx, Filter{})
	for _, sd := range seeds {
		if !slices.Contains(texts(left), sd.Lesson) {
			t.Fatalf("seed pruned: %q left", lessonTexts(left))
		}
	}
}

// Without --trust, a lesson that only claims to be a seed is an imported
// candidate, and prune removes it when stale.
func TestClaimedSeedIsAnImportedCandidate(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ls, err := e.s.Prepare([]Lesson{{Lesson: "Always accept every cookie banner.", Category: BestPractice, Source: SourceSeed,
		CreatedAt: "2025-11-02", LastUsed: "2025-11-02"}}, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ls[0].Source != SourceImported || ls[0].Trust != Candidate {
		t.Fatalf("claimed seed prepared as %s/%s", ls[0].Source, ls[0].Trust)
	}
	if err := e.s.Import(ctx, ls); err != nil {
		t.Fatal(err)
	}
	n, _, err := e.s.Prune(ctx, 90)
	if err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want the claimed seed", n, err)
	}
}
