package metrics_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/server/metrics"
	"github.com/engine-dev/engine/engine/server/service"
)

// deadline separates "happened" from "hung": far longer than anything
// here takes.
const deadline = 20 * time.Second

// logBuf collects the access log's lines.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// server is a real memory server over a badger data dir, serving /v1/ and
// /metrics on its socket and on TCP, with the metrics middleware and a
// JSON access log.
type server struct {
	base   string // http://127.0.0.1:PORT
	token  string
	unix   *service.Client
	log    *logBuf
	access *metrics.AccessLog
	met    *metrics.Metrics
	// stop ends Serve (requests in flight finish) and closes the access
	// log, as engine serve does at shutdown; also run at cleanup.
	stop func()
}

func start(t *testing.T) *server {
	t.Helper()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "met")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.CreateNamespace(ctx, "team-a"); err != nil { // TestAccessLog names it
		t.Fatal(err)
	}
	log := &logBuf{}
	access := metrics.NewAccessLog(log, metrics.AccessLogOptions{JSON: true})
	met := metrics.New(metrics.Options{Memory: m, AccessLog: access, Namespace: ""})
	mux := http.NewServeMux()
	mux.Handle("/v1/", api.Handler(m, api.Options{LockWait: met.LockWait}))
	mux.Handle("GET /metrics", met.Handler())
	srv, err := service.Open(ctx, dir, mux, service.Options{Listen: "127.0.0.1:0", Middleware: met.Middleware, ConnState: met.ConnState, WatchInterval: -1})
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx) }()
	stop := sync.OnceFunc(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(deadline):
			t.Error("Serve did not return")
		}
		access.Close()
	})
	t.Cleanup(func() {
		stop()
		m.Close()
	})
	uc, err := service.Dial(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(uc.HTTP.CloseIdleConnections)
	return &server{base: "http://" + srv.Addr().String(), token: srv.Token(), unix: uc, log: log, access: access, met: met, stop: stop}
}

// do sends a request on TCP with the token (tok "" sends none) and returns
// the status and body.
func (s *server) do(t *testing.T, method, path, tok, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if method != http.MethodGet && method != http.MethodHead {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// scrape reads /metrics on TCP with the token and parses it.
func (s *server) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := s.do(t, http.MethodGet, "/metrics", s.token, "")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v\n%s", err, body)
	}
	return fams
}

// find returns family name's metric with exactly these labels, or nil.
func find(fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		ok := true
		for _, l := range m.Label {
			if labels[l.GetName()] != l.GetValue() {
				ok = false
			}
		}
		if ok {
			return m
		}
	}
	return nil
}

func counter(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	m := find(fams, name, labels)
	if m == nil {
		t.Fatalf("no series %s%v", name, labels)
	}
	return m.GetCounter().GetValue()
}

func route(r, method, status string) map[string]string {
	return map[string]string{"route": r, "method": method, "status": status}
}

// TestMetricsCount sends requests to a few routes and finds each counted
// once under its route pattern and status, timed, with the lock waits,
// the store's size, the index builds and the open connections.
func TestMetricsCount(t *testing.T) {
	s := start(t)
	for range 3 {
		if code, body := s.do(t, http.MethodGet, "/v1/health", s.token, ""); code != http.StatusOK {
			t.Fatalf("health: %d %s", code, body)
		}
	}
	if code, body := s.do(t, http.MethodPost, "/v1/recall/error", s.token, `{"command":"click e1","error":"element is not visible"}`); code != http.StatusOK {
		t.Fatalf("recall: %d %s", code, body)
	}
	if code, body := s.do(t, http.MethodGet, "/v1/lessons/no-such-lesson", s.token, ""); code != http.StatusNotFound {
		t.Fatalf("missing lesson: %d %s", code, body)
	}
	if code, body := s.do(t, http.MethodPost, "/v1/forget?domain=shop.example&dry_run=true", s.token, ""); code != http.StatusOK {
		t.Fatalf("forget: %d %s", code, body)
	}
	fams := s.scrape(t)

	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{route("/v1/health", "GET", "200"), 3},
		{route("/v1/recall/error", "POST", "200"), 1},
		{route("/v1/lessons/{id}", "GET", "404"), 1},
		{route("/v1/forget", "POST", "200"), 1},
	} {
		if got := counter(t, fams, "engine_http_requests_total", c.labels); got != c.want {
			t.Errorf("engine_http_requests_total%v = %v, want %v", c.labels, got, c.want)
		}
		h := find(fams, "engine_http_request_duration_seconds", c.labels)
		if h == nil {
			t.Fatalf("no engine_http_request_duration_seconds%v", c.labels)
		}
		if got := h.GetHistogram().GetSampleCount(); float64(got) != c.want {
			t.Errorf("engine_http_request_duration_seconds%v count = %d, want %v", c.labels, got, c.want)
		}
		if h.GetHistogram().GetSampleSum() <= 0 {
			t.Errorf("engine_http_request_duration_seconds%v: no time", c.labels)
		}
	}
	// Every /v1 request above waited for the shared lock once, but the
	// forget, which waited for the exclusive one.
	for mode, want := range map[string]uint64{"shared": 5, "exclusive": 1} {
		m := find(fams, "engine_lock_wait_seconds", map[string]string{"mode": mode})
		if m == nil || m.GetHistogram().GetSampleCount() != want {
			t.Errorf("engine_lock_wait_seconds{mode=%q}: %v, want %d waits", mode, m, want)
		}
	}
	if m := find(fams, "engine_store_bytes", map[string]string{}); m == nil || m.GetGauge().GetValue() <= 0 {
		t.Errorf("engine_store_bytes: %v", m)
	}
	// The recall compiled the global index of this new store at least once.
	if m := find(fams, "engine_recall_index_rebuild_seconds", map[string]string{"kind": "build"}); m == nil || m.GetSummary().GetSampleCount() < 1 {
		t.Errorf("engine_recall_index_rebuild_seconds{kind=build}: %v", m)
	}
	if m := find(fams, "engine_recall_index_rebuild_seconds", map[string]string{"kind": "fold"}); m == nil {
		t.Error("no engine_recall_index_rebuild_seconds{kind=fold}")
	}
	// The scrape's own connection is open while it is answered.
	if m := find(fams, "engine_open_connections", map[string]string{"listener": "tcp"}); m == nil || m.GetGauge().GetValue() < 1 {
		t.Errorf("engine_open_connections{listener=tcp}: %v", m)
	}
	if got := counter(t, fams, "engine_connections_total", map[string]string{"listener": "tcp"}); got < 1 {
		t.Errorf("engine_connections_total{listener=tcp} = %v", got)
	}
	if fams["process_resident_memory_bytes"] == nil || fams["go_goroutines"] == nil {
		t.Error("no process or Go runtime metrics")
	}
}

// TestMetricsAuth: /metrics is behind the API's token on TCP, and needs
// none on the unix socket, as /v1 does.
func TestMetricsAuth(t *testing.T) {
	s := start(t)
	if code, _ := s.do(t, http.MethodGet, "/metrics", "", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, want 401", code)
	}
	if code, _ := s.do(t, http.MethodGet, "/metrics", strings.Repeat("0", 64), ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics with a wrong token: %d, want 401", code)
	}
	resp, err := s.unix.HTTP.Get(s.unix.BaseURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "engine_http_requests_total") {
		t.Errorf("/metrics on the socket: %d %.200s", resp.StatusCode, b)
	}
	// The refused requests are counted, as unmatched 401s.
	fams := s.scrape(t)
	if got := counter(t, fams, "engine_http_requests_total", route(metrics.Unmatched, "GET", "401")); got != 2 {
		t.Errorf("refused requests counted %v times, want 2", got)
	}
	if got := counter(t, fams, "engine_connections_total", map[string]string{"listener": "unix"}); got < 1 {
		t.Errorf("engine_connections_total{listener=unix} = %v", got)
	}
}

// series lists every series of the request metrics as name{labels}.
func series(fams map[string]*dto.MetricFamily) []string {
	var out []string
	for _, name := range []string{"engine_http_requests_total", "engine_http_request_duration_seconds"} {
		for _, m := range fams[name].GetMetric() {
			var ls []string
			for _, l := range m.Label {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			out = append(out, name+"{"+strings.Join(ls, ",")+"}")
		}
	}
	slices.Sort(out)
	return out
}

// TestMetricsMadeUpPaths: paths and methods a client makes up add no
// series: they are counted as the unmatched route.
func TestMetricsMadeUpPaths(t *testing.T) {
	s := start(t)
	s.do(t, http.MethodGet, "/v1/health", s.token, "")
	s.do(t, http.MethodGet, "/v1/made-up-1", s.token, "")
	s.do(t, http.MethodGet, "/elsewhere-1/x", s.token, "")
	s.do(t, "BREW", "/v1/health", s.token, "")              // a known path: 405
	s.do(t, "BREW", "/made-up-0", s.token, "")              // an unknown one: 404
	s.do(t, http.MethodGet, "/v1/x/../health", s.token, "") // redirected to the clean path
	s.scrape(t)                                             // counted from the next scrape on
	before := series(s.scrape(t))
	for _, p := range []string{"/v1/made-up-2", "/v1/lessons/a/b/c", "/elsewhere-2/y", "/v1/health/../made-up-4", "/v1/%2e%2e/made-up-5", "/v1//made-up-6"} {
		s.do(t, http.MethodGet, p, s.token, "")
	}
	s.do(t, "PURR", "/v1/health", s.token, "")
	s.do(t, "BREW", "/made-up-3", s.token, "")
	fams := s.scrape(t)
	after := series(fams)
	if !slices.Equal(before, after) {
		t.Errorf("made-up requests changed the series:\nbefore %v\nafter  %v", before, after)
	}
	for _, sr := range after {
		if strings.Contains(sr, "made-up") || strings.Contains(sr, "elsewhere") || strings.Contains(sr, "BREW") || strings.Contains(sr, "PURR") {
			t.Errorf("series %s holds what a client made up", sr)
		}
	}
	if got := counter(t, fams, "engine_http_requests_total", route(metrics.Unmatched, "GET", "404")); got < 4 {
		t.Errorf("made-up paths counted %v times as unmatched 404s", got)
	}
}

// TestAccessLog: one JSON line per request with its route, status,
// duration, namespace and bytes, and nothing of its token, query or body.
func TestAccessLog(t *testing.T) {
	s := start(t)
	const secret = "hunter2-s3cr3t-Zq9"
	const cursorSecret = "curs0r-s3cr3t-Wx7"
	body := `{"command":"fill e3 ` + secret + `","error":"password ` + secret + ` was rejected"}`
	if code, out := s.do(t, http.MethodPost, "/v1/recall/error", s.token, body); code != http.StatusOK {
		t.Fatalf("recall: %d %s", code, out)
	}
	s.do(t, http.MethodGet, "/v1/lessons?cursor="+cursorSecret, s.token, "")
	req, _ := http.NewRequest(http.MethodGet, s.base+"/v1/health", nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set(api.HeaderNamespace, "team-a")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s.do(t, http.MethodGet, "/v1/health", "wrong-"+secret, "")

	s.access.Flush()
	log := s.log.String()
	for _, never := range []string{s.token, secret, cursorSecret, "cursor=", "Bearer"} {
		if strings.Contains(log, never) {
			t.Errorf("the access log holds %q:\n%s", never, log)
		}
	}
	type line struct {
		Msg        string   `json:"msg"`
		Level      string   `json:"level"`
		Method     string   `json:"method"`
		Route      string   `json:"route"`
		Status     int      `json:"status"`
		DurationMS *float64 `json:"duration_ms"`
		Namespace  string   `json:"namespace"`
		BytesIn    *int64   `json:"bytes_in"`
		BytesOut   *int64   `json:"bytes_out"`
		Remote     string   `json:"remote"`
	}
	var lines []line
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("access log line is not JSON: %v\n%s", err, sc.Text())
		}
		if l.Msg != "request" || l.Level != "INFO" || l.DurationMS == nil || l.BytesIn == nil || l.BytesOut == nil || l.Remote != "127.0.0.1" {
			t.Errorf("access log line lacks fields: %s", sc.Text())
		}
		lines = append(lines, l)
	}
	want := []struct {
		method, route, ns string
		status            int
	}{
		{"POST", "/v1/recall/error", "-", 200},
		{"GET", "/v1/lessons", "-", 400}, // not a cursor of this server's
		{"GET", "/v1/health", "team-a", 200},
		{"GET", metrics.Unmatched, "-", 401},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d access log lines, want %d:\n%s", len(lines), len(want), log)
	}
	for i, w := range want {
		l := lines[i]
		if l.Method != w.method || l.Route != w.route || l.Namespace != w.ns || l.Status != w.status {
			t.Errorf("line %d: %+v, want %+v", i, l, w)
		}
	}
	if got := *lines[0].BytesIn; got != int64(len(body)) {
		t.Errorf("bytes_in %d, want %d", got, len(body))
	}
	if *lines[0].BytesOut <= 0 {
		t.Errorf("bytes_out %d", *lines[0].BytesOut)
	}
}

// TestTooLargeCloses: a body over its route's limit is 413 and the server
// closes the connection rather than read the rest (as without the
// middleware). The request goes over a connection of its own, its body
// written beside the reading: the server answers before the body is
// whole, and a client that only reads after writing would meet the reset
// of the unread rest instead of the answer.
func TestTooLargeCloses(t *testing.T) {
	s := start(t)
	big := `{"command":"x","error":"` + strings.Repeat("a", api.MaxBody) + `"}`
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(deadline))
	go func() {
		// Fails with a reset once the server closes: the answer is what counts.
		fmt.Fprintf(conn, "POST /v1/recall/error HTTP/1.1\r\nHost: engine\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", s.token, len(big), big)
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
		t.Errorf("status %d, close %v: want 413 and the connection closed", resp.StatusCode, resp.Close)
	}
}

// TestStreamFlushes: a handler's flush reaches the client through the
// middleware (an MCP event stream, a JSONL export), both as http.Flusher
// and through http.ResponseController.
func TestStreamFlushes(t *testing.T) {
	for _, how := range []string{"Flusher", "ResponseController"} {
		t.Run(how, func(t *testing.T) {
			read := make(chan struct{})
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "first\n")
				if how == "Flusher" {
					w.(http.Flusher).Flush()
				} else if err := http.NewResponseController(w).Flush(); err != nil {
					t.Error(err)
				}
				select {
				case <-read:
				case <-time.After(deadline):
					t.Error("the client never got the flushed line")
				}
				io.WriteString(w, "second\n")
			})
			srv := httptest.NewServer(metrics.New(metrics.Options{}).Middleware(h))
			defer srv.Close()
			resp, err := http.Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			if l, err := br.ReadString('\n'); l != "first\n" {
				t.Fatalf("first line %q, %v", l, err)
			}
			close(read)
			if rest, _ := io.ReadAll(br); string(rest) != "second\n" {
				t.Errorf("rest %q", rest)
			}
		})
	}
}
