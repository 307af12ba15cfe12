// Package metrics is what an operator sees of a running memory server:
// GET /metrics in the Prometheus text format, from a registry of its own
// (never the process-wide default), and one structured access log line
// per request.
//
// It is the only package that imports the Prometheus client. The layers
// it reports on expose plain hooks instead: the API's lock waits
// (api.Options.LockWait), the connections and every request
// (service.Options.ConnState and Middleware), and the memory's store size
// and recall index work (memory.Memory.StoreSize, memory.RecallIndexStats),
// which it reads at each scrape.
//
// A request is counted under the pattern its ServeMux matched ("POST
// /v1/lessons/{id}"), never its path: a client that makes up paths adds no
// series (they all count as route "unmatched"). The access log holds no
// path, query, header or body either: tokens travel in headers and query
// strings, and secrets in bodies.
package metrics

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/server/service"
)

// Unmatched is the route of a request no pattern matched: a made-up path,
// or a request refused before routing (no token).
const Unmatched = "unmatched"

// Options configure New.
type Options struct {
	// Memory is the served memory: its store's size is reported.
	// Optional.
	Memory *memory.Memory
	// AccessLog receives one line per request ("request", at Info); nil
	// logs none. Its dropped lines are engine_access_log_dropped_total.
	AccessLog *AccessLog
	// Namespace is the namespace of requests that name none (the server's
	// --namespace), as the access log names it.
	Namespace string
}

// Metrics holds a server's registry and its instruments. Its methods are
// safe for concurrent use.
type Metrics struct {
	reg      *prometheus.Registry
	log      *slog.Logger // AccessLog's logger, or nil
	ns       string
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
	lockWait *prometheus.HistogramVec
	conns    *prometheus.GaugeVec
	accepted *prometheus.CounterVec
}

// durationBuckets span a cached recall (well under a millisecond) to an
// import or export of a big store.
var durationBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// New makes the registry and registers every series.
func New(opts Options) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		ns:  opts.Namespace,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "engine_http_requests_total",
			Help: "Requests answered, by the route pattern that matched (unmatched: none did), method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "engine_http_request_duration_seconds",
			Help:    "Time from a request reaching the server to its handler returning, by route, method and status.",
			Buckets: durationBuckets,
		}, []string{"route", "method", "status"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "engine_http_requests_in_flight",
			Help: "Requests being handled.",
		}),
		lockWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "engine_lock_wait_seconds",
			Help:    "Time a request waited for the memory's request lock: shared (every ordinary request) or exclusive (import, forget, prune, revert).",
			Buckets: durationBuckets,
		}, []string{"mode"}),
		conns: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "engine_open_connections",
			Help: "Client connections open, by listener (unix, tcp).",
		}, []string{"listener"}),
		accepted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "engine_connections_total",
			Help: "Client connections accepted, by listener (unix, tcp).",
		}, []string{"listener"}),
	}
	// The lock modes and listeners are known: their series exist from the
	// start, at zero.
	for _, mode := range []string{"shared", "exclusive"} {
		m.lockWait.WithLabelValues(mode)
	}
	for _, l := range []string{"unix", "tcp"} {
		m.conns.WithLabelValues(l)
		m.accepted.WithLabelValues(l)
	}
	if opts.AccessLog != nil {
		m.log = opts.AccessLog.Logger()
	}
	dropped := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "engine_access_log_dropped_total",
		Help: "Access log lines dropped: their queue was full (the log's writer fell behind) or the write failed.",
	}, func() float64 {
		if opts.AccessLog == nil {
			return 0
		}
		return float64(opts.AccessLog.Dropped())
	})
	m.reg.MustRegister(m.requests, m.duration, m.inFlight, m.lockWait, m.conns, m.accepted, dropped,
		&memoryCollector{m: opts.Memory},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is the registry the series are in, for a test or another
// exposition.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format (GET /metrics).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// LockWait records a request's wait for the API's lock (api.Options.LockWait).
func (m *Metrics) LockWait(exclusive bool, waited time.Duration) {
	mode := "shared"
	if exclusive {
		mode = "exclusive"
	}
	m.lockWait.WithLabelValues(mode).Observe(waited.Seconds())
}

// ConnState counts open connections (service.Options.ConnState).
func (m *Metrics) ConnState(c net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		l := service.Listener(c)
		m.accepted.WithLabelValues(l).Inc()
		m.conns.WithLabelValues(l).Inc()
	case http.StateClosed, http.StateHijacked:
		m.conns.WithLabelValues(service.Listener(c)).Dec()
	}
}

// Middleware counts and times every request and writes its access log line
// (service.Options.Middleware). It passes next the request it got, so the
// muxes below record the pattern they matched on it.
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		m.inFlight.Inc()
		defer m.inFlight.Dec()
		var in *countingBody
		if r.Body != nil && r.Body != http.NoBody {
			in = &countingBody{ReadCloser: r.Body}
			r.Body = in
		}
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		took := time.Since(start)

		route, method := routeOf(r)
		status := rec.status
		if status == 0 {
			status = http.StatusOK // net/http's answer to a handler that wrote nothing
		}
		code := statusLabel(status)
		m.requests.WithLabelValues(route, method, code).Inc()
		m.duration.WithLabelValues(route, method, code).Observe(took.Seconds())
		if m.log == nil {
			return
		}
		var bytesIn int64
		if in != nil {
			bytesIn = in.n
		}
		m.log.LogAttrs(context.Background(), slog.LevelInfo, "request",
			slog.String("method", method),
			slog.String("route", route),
			slog.Int("status", status),
			slog.Float64("duration_ms", float64(took.Microseconds())/1000),
			slog.String("namespace", m.namespaceOf(r)),
			slog.Int64("bytes_in", bytesIn),
			slog.Int64("bytes_out", rec.n),
			slog.String("remote", remoteOf(r)),
		)
	})
}

// routeOf reads the pattern the muxes matched: its path is the route, its
// method (or, for a pattern without one, the request's, among the
// methods HTTP defines) the method.
func routeOf(r *http.Request) (route, method string) {
	p := r.Pattern
	if m, rest, ok := strings.Cut(p, " "); ok {
		method, p = m, strings.TrimLeft(rest, " \t")
		if method == http.MethodGet && r.Method == http.MethodHead {
			method = http.MethodHead
		}
	} else {
		method = knownMethod(r.Method)
	}
	// A host in a pattern is ours, not the client's; none of ours has one.
	if i := strings.IndexByte(p, '/'); i > 0 {
		p = p[i:]
	}
	// "/" is a catch-all: what it answers is a path nothing else matched.
	if p == "" || p == "/" {
		p = Unmatched
	}
	return p, method
}

// knownMethod is method when HTTP defines it, else "OTHER": a client's
// made-up method adds no series.
func knownMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "OTHER"
}

// statusLabel is the status as a label: a code net/http sends, whatever a
// handler passed.
func statusLabel(status int) string {
	if status < 100 || status > 999 {
		return "other"
	}
	return itoa3(status)
}

func itoa3(n int) string {
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}

// maxLoggedNamespace bounds a namespace name in the log (a bad one is
// refused with 400, but may be long).
const maxLoggedNamespace = 64

// namespaceOf is the namespace r ran in: its Engine-Namespace header, else
// the server's ("-": the default).
func (m *Metrics) namespaceOf(r *http.Request) string {
	ns := r.Header.Get(api.HeaderNamespace)
	if ns == "" {
		ns = m.ns
	}
	if ns == "" {
		ns = "-"
	}
	if len(ns) > maxLoggedNamespace {
		ns = ns[:maxLoggedNamespace] + "…"
	}
	return ns
}

// remoteOf is "unix" for a request over the socket, else the client's IP
// (without its port).
func remoteOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil || host == "" {
		return "unix"
	}
	return host
}

// countingBody counts the bytes a handler read of a request body.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

// recorder keeps a response's status and counts its body's bytes. It
// passes on Flush (streamed responses) and Unwrap (http.ResponseController:
// deadlines, full duplex); a handler that hijacks the connection has none
// here.
type recorder struct {
	http.ResponseWriter
	status int
	n      int64
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
		if code == http.StatusRequestEntityTooLarge {
			// http.MaxBytesReader tells the server to close the connection
			// rather than read on through an unexported method the wrapper
			// hides from it; this header does the same.
			w.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

// Flush sends what is buffered (an MCP event stream, a JSONL export).
func (w *recorder) Flush() { w.FlushError() }

// FlushError is Flush with the error of the write, for
// http.ResponseController.
func (w *recorder) FlushError() error {
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap is the ResponseWriter below, for http.ResponseController.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// memoryCollector reads the memory's figures at each scrape: the store's
// size on disk and the recall index's compiles.
type memoryCollector struct {
	m *memory.Memory
}

var (
	storeBytesDesc = prometheus.NewDesc("engine_store_bytes",
		"Bytes the store takes on disk (badger: its directory's files); absent for a store that cannot tell (etcd reports its own).", nil, nil)
	indexDesc = prometheus.NewDesc("engine_recall_index_rebuild_seconds",
		"Compiles of the lesson recall index in this process and their time: build (a site's index compiled from the store: its first recall, or the first after another writer changed it) and fold (an overlay of this process's own writes folded into a fresh compile).",
		[]string{"kind"}, nil)
)

func (c *memoryCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- storeBytesDesc
	ch <- indexDesc
}

func (c *memoryCollector) Collect(ch chan<- prometheus.Metric) {
	if c.m != nil {
		if n, ok := c.m.StoreSize(); ok {
			ch <- prometheus.MustNewConstMetric(storeBytesDesc, prometheus.GaugeValue, float64(n))
		}
	}
	st := memory.RecallIndexStats()
	ch <- prometheus.MustNewConstSummary(indexDesc, uint64(st.Builds), st.BuildTime.Seconds(), nil, "build")
	ch <- prometheus.MustNewConstSummary(indexDesc, uint64(st.Folds), st.FoldTime.Seconds(), nil, "fold")
}
