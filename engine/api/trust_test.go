package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/lesson"
)

// TestLessonTrustOverTheAPI: POST /v1/lessons without Engine-Source:
// manual writes a candidate (whatever source and trust its body claims),
// stamped with the request's run and model; with manual, a trusted lesson;
// the list filters by trust; approve trusts a candidate and says what it
// was; the learn route stamps learned and the run.
func TestLessonTrustOverTheAPI(t *testing.T) {
	ctx := context.Background()
	c := api.Local(api.Handler(open(t), api.Options{}), api.ClientOptions{})
	defer c.Close()
	run := c.WithProvenance(engine.Provenance{Run: "run-7", Model: "scripted/demo"})
	rec, err := run.RecordLesson(ctx, lesson.Lesson{Lesson: "Press Enter to submit.", Category: lesson.BestPractice, Source: lesson.SourceSeed})
	if err != nil {
		t.Fatal(err)
	}
	if l := rec.Lesson; l.Trust != lesson.Candidate || l.Source != lesson.SourceAPI || l.Provenance.Run != "run-7" || l.Provenance.Model != "scripted/demo" || l.Provenance.Source != lesson.SourceAPI {
		t.Fatalf("api record: %+v", l)
	}
	tier1, err := c.Tier1(ctx)
	if err != nil || len(tier1) != 3 {
		t.Fatalf("Tier 1 holds a candidate: %+v, %v", tier1, err)
	}
	man, err := c.WithProvenance(engine.Provenance{Source: engine.SourceManual}).RecordLesson(ctx, lesson.Lesson{Lesson: "Scroll first.", Category: lesson.ToolFallback, FailedCommand: "hover", ErrorPattern: "outside of the viewport"})
	if err != nil || man.Lesson.Trust != lesson.Trusted || man.Lesson.Source != lesson.SourceManual {
		t.Fatalf("manual record: %+v, %v", man, err)
	}
	page, err := c.Lessons(ctx, api.LessonFilter{Trust: lesson.Candidate})
	if err != nil || len(page.Lessons) != 1 || page.Lessons[0].ID != rec.Lesson.ID {
		t.Fatalf("candidates: %+v, %v", page, err)
	}
	if _, err := c.Lessons(ctx, api.LessonFilter{Trust: "maybe"}); !engine.IsInvalid(err) {
		t.Fatalf("trust=maybe: %v", err)
	}
	ap, err := c.ApproveLesson(ctx, rec.Lesson.ID)
	if err != nil || ap.Was != lesson.Candidate || ap.Trust != lesson.Trusted || ap.ID != rec.Lesson.ID {
		t.Fatalf("approve: %+v, %v", ap, err)
	}
	if ap, err = c.ApproveLesson(ctx, rec.Lesson.ID); err != nil || ap.Was != lesson.Trusted {
		t.Fatalf("approve again: %+v, %v", ap, err)
	}
	if _, err := c.ApproveLesson(ctx, "l0000000000"); err == nil || !strings.Contains(err.Error(), "no such lesson") {
		t.Fatalf("approve unknown: %v", err)
	}
	log := `{"step": 1, "action": "click", "ref": "e2", "ok": false, "error": "Element e2 is covered by another element", "url": "https://shop.example/", "origin": "browser"}
{"step": 2, "action": "press", "value": "Escape", "ok": true, "url": "https://shop.example/"}
`
	learned, err := run.Learn(ctx, "", []byte(log))
	if err != nil || len(learned) != 1 {
		t.Fatalf("learn: %+v, %v", learned, err)
	}
	if l := learned[0].Lesson; l.Trust != lesson.Candidate || l.Source != lesson.SourceLearned || l.Provenance.Source != lesson.SourceLearned || l.Provenance.Run != "run-7" || l.Provenance.Site != "shop.example" {
		t.Fatalf("learned: %+v", l)
	}
}

// TestImportStampsTheFile: POST /v1/import stamps the file's base name and
// the digest of the bytes sent on the lessons' provenance; they are
// candidates unless ?trust=true.
func TestImportStampsTheFile(t *testing.T) {
	ctx := context.Background()
	c := api.Local(api.Handler(open(t), api.Options{}), api.ClientOptions{})
	defer c.Close()
	body := []byte(`{"version": 1, "lessons": [{"lesson": "Open the menu first.", "category": "best_practice", "source": "seed"}]}`)
	sum := sha256.Sum256(body)
	if _, err := c.Import(ctx, body, "some/dir/memory.json", false); err != nil {
		t.Fatal(err)
	}
	page, err := c.Lessons(ctx, api.LessonFilter{Trust: lesson.Candidate})
	if err != nil || len(page.Lessons) != 1 {
		t.Fatalf("candidates: %+v, %v", page, err)
	}
	if l := page.Lessons[0]; l.Source != lesson.SourceImported || l.Provenance.File != "memory.json" || l.Provenance.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("imported: %+v", l)
	}
	if _, err := c.Import(ctx, body, "memory.json", true); err != nil {
		t.Fatal(err)
	}
	if page, err = c.Lessons(ctx, api.LessonFilter{Trust: lesson.Candidate}); err != nil || len(page.Lessons) != 0 {
		t.Fatalf("after import --trust: candidates %+v, %v", page, err)
	}
}
