package inspect_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/server/inspect"
)

// BenchmarkRunPage500 renders the page of a 500-step run: 500 model calls
// (a 3 KiB system prompt, the same at every step, and a 1 KiB page message;
// clipped: both at the 4000 bytes llm.jsonl keeps, the system prompt
// different at every step), 50 failed steps with their screenshots and the
// lessons and trajectory shown, through the API over real badger. Target:
// ≤ 200 ms.
func BenchmarkRunPage500(b *testing.B) {
	for _, clipped := range []bool{false, true} {
		b.Run(map[bool]string{false: "typical", true: "clipped"}[clipped], func(b *testing.B) { benchRunPage(b, clipped) })
	}
}

func benchRunPage(b *testing.B, clipped bool) {
	ctx := context.Background()
	w := newWorld(b)
	w.clipped = clipped
	w.fill(b)
	must(w.c.CreateRun(ctx, api.CreateRun{RunID: "run_long", Goal: "add 2 padel rackets to the cart", StartURL: "https://shop.example/"}))
	w.writeRun(b, "run_long", 500, 10, false, []string{w.siteLesson, "gone_lesson"}, w.trajID)
	h := inspect.Handler(w.c, inspect.Options{RunsDir: w.runsDir})
	req := httptest.NewRequest(http.MethodGet, "/runs/run_long", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `id="step-500"`) {
		b.Fatalf("%d %.300s", rec.Code, rec.Body.String())
	}
	size := rec.Body.Len()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
	b.ReportMetric(float64(size)/1024, "KiB/page")
}
