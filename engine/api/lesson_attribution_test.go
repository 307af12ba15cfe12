package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/lesson"
)

// POST /v1/attribution/lessons adds a run's counts to its lessons in one
// request, skips a lesson that is gone, and refuses impossible counts (400).
func TestAttributeLessonsRoute(t *testing.T) {
	ctx := context.Background()
	h := api.Handler(open(t), api.Options{})
	c := api.Local(h, api.ClientOptions{})
	defer c.Close()
	rec, err := c.RecordLesson(ctx, lesson.Lesson{Lesson: "Press Escape first.", Category: "site_specific",
		FailedCommand: "click", ErrorPattern: "intercepts pointer events", Domain: "shop.example"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.AttributeLessons(ctx, api.LessonAttribution{Lessons: []lesson.Attribution{
		{ID: rec.Lesson.ID, Counts: engine.Counts{Shown: 2, Used: 1, Helped: 1}},
		{ID: "lnothere", Counts: engine.Counts{Shown: 1}},
	}})
	if err != nil || res.Updated != 1 {
		t.Fatalf("attribute: %+v, %v", res, err)
	}
	l, err := c.Lesson(ctx, rec.Lesson.ID)
	if err != nil || l.Counts != (engine.Counts{Shown: 2, Used: 1, Helped: 1}) {
		t.Fatalf("lesson after attribution: %+v, %v", l, err)
	}
	resp := do(t, h, "POST", "/v1/attribution/lessons", "application/json", `{"lessons":[{"id":"`+rec.Lesson.ID+`","shown":1,"used":2}]}`)
	wantProblem(t, resp, http.StatusBadRequest, "lesson attribution: want 0 ≤ helped ≤ used ≤ shown")
}
