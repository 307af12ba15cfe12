package metrics_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
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
		log := metrics.NewAccessLog(io.Discard, metrics.AccessLogOptions{JSON: true})
		defer log.Close()
		run(b, metrics.New(metrics.Options{AccessLog: log}).Middleware(mux))
	})
}

// BenchmarkAccessLogParallel is a request's access log line with every
// core logging at once onto a pipe another goroutine drains (as a server's
// stderr read by its supervisor): slog's JSON handler writing each line
// itself (one lock and one write system call per line, the way the server
// logged before) against AccessLog's queue.
func BenchmarkAccessLogParallel(b *testing.B) {
	line := func(log *slog.Logger) {
		log.LogAttrs(context.Background(), slog.LevelInfo, "request",
			slog.String("method", "POST"), slog.String("route", "/v1/recall/error"), slog.Int("status", 200),
			slog.Float64("duration_ms", 1.234), slog.String("namespace", "-"), slog.Int64("bytes_in", 57),
			slog.Int64("bytes_out", 3), slog.String("remote", "unix"))
	}
	pipe := func(b *testing.B) *os.File {
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan struct{})
		go func() { io.Copy(io.Discard, r); close(done) }()
		b.Cleanup(func() { w.Close(); <-done; r.Close() })
		return w
	}
	b.Run("direct", func(b *testing.B) {
		log := slog.New(slog.NewJSONHandler(pipe(b), nil))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				line(log)
			}
		})
	})
	b.Run("queued", func(b *testing.B) {
		al := metrics.NewAccessLog(pipe(b), metrics.AccessLogOptions{JSON: true})
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				line(al.Logger())
			}
		})
		al.Close()
		if n := al.Dropped(); n > 0 {
			b.ReportMetric(float64(n)/float64(b.N), "dropped/op")
		}
	})
}
