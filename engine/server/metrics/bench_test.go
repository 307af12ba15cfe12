package metrics_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/server/metrics"
)

// BenchmarkMiddleware is what the middleware adds to a request: a small
// POST answered by a route of a ServeMux, bare, counted, and counted and
// logged as JSON (to io.Discard: the cost of formatting the line).
func BenchmarkMiddleware(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/recall/error", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "[]\n")
	})
	const body = `{"command":"click e1","error":"element is not visible"}`
	run := func(b *testing.B, h http.Handler) {
		b.ReportAllocs()
		for b.Loop() {
			r := httptest.NewRequest(http.MethodPost, "/v1/recall/error", strings.NewReader(body))
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, mux) })
	b.Run("metrics", func(b *testing.B) { run(b, metrics.New(metrics.Options{}).Middleware(mux)) })
	b.Run("metrics+log", func(b *testing.B) {
		log := slog.New(slog.NewJSONHandler(io.Discard, nil))
		run(b, metrics.New(metrics.Options{AccessLog: log}).Middleware(mux))
	})
}
