package metrics_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/engine-dev/engine/engine/server/metrics"
)

// logLine is the part of an access log line (or of the dropped-lines
// warning) the tests read.
type logLine struct {
	Msg     string `json:"msg"`
	Level   string `json:"level"`
	Route   string `json:"route"`
	Status  int    `json:"status"`
	Dropped uint64 `json:"dropped"`
}

// parseLines parses every line of out as JSON.
func parseLines(t *testing.T, out string) []logLine {
	t.Helper()
	var lines []logLine
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line is not JSON: %v\n%q", err, sc.Text())
		}
		lines = append(lines, l)
	}
	return lines
}

// TestAccessLogEveryLineAtStop: many clients at once, then a clean stop;
// every answered request has its line, each line whole JSON, none dropped.
func TestAccessLogEveryLineAtStop(t *testing.T) {
	s := start(t)
	const clients, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				var resp *http.Response
				var err error
				if i%2 == 0 {
					resp, err = s.unix.HTTP.Get("http://engine/v1/health")
				} else {
					resp, err = s.unix.HTTP.Post("http://engine/v1/recall/error", "application/json",
						strings.NewReader(fmt.Sprintf(`{"command":"click e%d","error":"element is not visible"}`, c)))
				}
				if err != nil {
					errs <- err
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s.stop()

	lines := parseLines(t, s.log.String())
	routes := map[string]int{}
	for _, l := range lines {
		if l.Msg != "request" || l.Status != http.StatusOK {
			t.Errorf("unexpected line %+v", l)
		}
		routes[l.Route]++
	}
	if len(lines) != clients*each || routes["/v1/health"] != clients*each/2 || routes["/v1/recall/error"] != clients*each/2 {
		t.Errorf("%d lines (%v), want %d: half health, half recall", len(lines), routes, clients*each)
	}
	if n := s.access.Dropped(); n != 0 {
		t.Errorf("%d lines dropped", n)
	}
	fams := gather(t, s.met)
	if got := counter(t, fams, "engine_access_log_dropped_total", map[string]string{}); got != 0 {
		t.Errorf("engine_access_log_dropped_total = %v, want 0", got)
	}
}

// stalledWriter blocks every Write until release is closed, as a pipe
// whose reader stopped; it keeps what it was given.
type stalledWriter struct {
	release chan struct{}
	logBuf
}

func (w *stalledWriter) Write(p []byte) (int, error) {
	<-w.release
	return w.logBuf.Write(p)
}

// TestAccessLogFullQueue: with the writer stalled, logging never waits for
// it; what does not fit the queue is dropped and counted (Dropped, the
// Prometheus counter and, once the writer moves again, a warning line in
// the log naming how many), and every other line is written.
func TestAccessLogFullQueue(t *testing.T) {
	w := &stalledWriter{release: make(chan struct{})}
	al := metrics.NewAccessLog(w, metrics.AccessLogOptions{JSON: true, Queue: 2000})
	met := metrics.New(metrics.Options{AccessLog: al})
	const n = 100
	for i := range n {
		// Returns although nothing can be written: a blocking log would
		// hang the test here.
		al.Logger().LogAttrs(context.Background(), slog.LevelInfo, "request",
			slog.String("route", "/v1/health"), slog.Int("status", 200), slog.Int("i", i))
	}
	dropped := al.Dropped()
	if dropped == 0 || dropped >= n {
		t.Fatalf("%d of %d lines dropped with the writer stalled and a 2,000-byte queue", dropped, n)
	}
	if got := counter(t, gather(t, met), "engine_access_log_dropped_total", map[string]string{}); got != float64(dropped) {
		t.Errorf("engine_access_log_dropped_total = %v, want %d", got, dropped)
	}
	close(w.release)
	al.Close()

	var requests int
	var warned uint64
	for _, l := range parseLines(t, w.String()) {
		switch l.Msg {
		case "request":
			requests++
		case "access log lines dropped":
			if l.Level != "WARN" {
				t.Errorf("the dropped-lines line is at %s", l.Level)
			}
			warned += l.Dropped
		default:
			t.Errorf("unexpected line %+v", l)
		}
	}
	if uint64(requests)+dropped != n || warned != dropped {
		t.Errorf("%d lines written, %d dropped (the log says %d): want %d in all", requests, dropped, warned, n)
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write(p []byte) (int, error) { return 0, errors.New("broken pipe") }

// TestAccessLogWriteFails: lines the writer refuses are counted as dropped.
func TestAccessLogWriteFails(t *testing.T) {
	al := metrics.NewAccessLog(failingWriter{}, metrics.AccessLogOptions{})
	for range 5 {
		al.Logger().Info("request")
		al.Flush()
	}
	al.Close()
	al.Logger().Info("request") // after Close: written directly, and fails too
	if got := al.Dropped(); got != 6 {
		t.Errorf("Dropped = %d, want 6", got)
	}
}

// gather reads met's registry directly (after a server stopped, or with
// none).
func gather(t *testing.T, met *metrics.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	got, err := met.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	fams := map[string]*dto.MetricFamily{}
	for _, f := range got {
		fams[f.GetName()] = f
	}
	return fams
}
