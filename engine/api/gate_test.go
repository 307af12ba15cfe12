package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/api/problem"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/server/service"
)

// busyServer serves a handler whose lock waits end after 50ms on a real
// server over dir's socket, and returns the handler (to hold its lock as a
// long request would) and a client.
func busyServer(t *testing.T) (*handler, *service.Client) {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	h := newHandler(m, Options{LockTimeout: 50 * time.Millisecond, SpoolDir: dir})
	srv, err := service.Open(ctx, dir, h.router, service.Options{WatchInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx) }()
	t.Cleanup(func() { cancel(); <-done })
	sc, err := service.Dial(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sc.CloseIdleConnections)
	return h, sc
}

// send sends method path and returns the status, the Retry-After header
// and the problem's detail (or the body).
func send(t *testing.T, sc *service.Client, method, path string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, sc.BaseURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json") // a write, bodiless too
	}
	resp, err := sc.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if p, ok := problem.Parse(b); ok {
		return resp.StatusCode, resp.Header.Get("Retry-After"), p.Detail
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

// A request that waits for the memory lock past the lock timeout is
// answered 503, naming the request that holds it and for how long; once
// the holder is done, the same requests are served.
func TestLockWaitIs503NamingTheHolder(t *testing.T) {
	h, sc := busyServer(t)
	imp := &hold{route: "POST /v1/import"}
	if err := h.gate.acquire(context.Background(), 0, imp, true); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ method, path string }{
		{"GET", "/v1/health"}, {"GET", "/v1/recall/tier1"}, {"POST", "/v1/forget?domain=example.com"},
	} {
		code, retry, detail := send(t, sc, r.method, r.path)
		if code != http.StatusServiceUnavailable || retry == "" ||
			!strings.Contains(detail, "for the memory lock, held by POST /v1/import (for ") {
			t.Errorf("%s %s behind an import: %d (Retry-After %q) %q; want 503 naming the import", r.method, r.path, code, retry, detail)
		}
	}
	h.gate.release(imp)
	if code, _, detail := send(t, sc, "GET", "/v1/health"); code != http.StatusOK {
		t.Fatalf("health once the import is done: %d %s", code, detail)
	}

	// A long shared request (an export being read) keeps a forget out; the
	// forget, queued, keeps new requests out until its own wait ends.
	exp := &hold{route: "GET /v1/export"}
	if err := h.gate.acquire(context.Background(), 0, exp, false); err != nil {
		t.Fatal(err)
	}
	code, _, detail := send(t, sc, "POST", "/v1/forget?domain=example.com")
	if code != http.StatusServiceUnavailable || !strings.Contains(detail, "held by GET /v1/export (for ") {
		t.Fatalf("forget behind an export: %d %q", code, detail)
	}
	if code, _, detail := send(t, sc, "GET", "/v1/health"); code != http.StatusOK {
		t.Fatalf("health beside an export, no forget queued any more: %d %s", code, detail)
	}
	h.gate.release(exp)
}

// The gate: a queued exclusive request holds off new shared ones (named in
// their busy error), takes the gate once the shared ones are gone, and a
// wait that ends takes the waiter out of the queue.
func TestGateQueue(t *testing.T) {
	var g gate
	ctx := context.Background()
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 10*time.Millisecond) }
	reader := &hold{route: "GET /v1/export"}
	if err := g.acquire(ctx, 0, reader, false); err != nil {
		t.Fatal(err)
	}
	writer := &hold{route: "POST /v1/forget"}
	got := make(chan error, 1)
	go func() { got <- g.acquire(ctx, 0, writer, true) }()
	// Once the writer is queued, a new reader waits behind it.
	var err error
	for {
		c, cancel := short()
		health := &hold{route: "GET /v1/health"}
		err = g.acquire(c, 0, health, false)
		cancel()
		if err != nil {
			break
		}
		g.release(health) // it got in before the writer queued: try again
	}
	var busy *busyError
	if !errors.As(err, &busy) || !strings.Contains(err.Error(), "held by GET /v1/export (for ") ||
		!strings.Contains(err.Error(), "POST /v1/forget queued ahead") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a reader behind a queued writer: %v", err)
	}
	g.release(reader)
	if err := <-got; err != nil {
		t.Fatalf("the writer, once the reader is gone: %v", err)
	}
	c, cancel := short()
	err = g.acquire(c, 0, &hold{route: "POST /v1/import"}, true)
	cancel()
	if err == nil || !strings.Contains(err.Error(), "held by POST /v1/forget (for ") {
		t.Fatalf("a writer behind a writer: %v", err)
	}
	g.release(writer)
	if err := g.acquire(ctx, 0, &hold{route: "GET /v1/health"}, false); err != nil || len(g.queued) != 0 {
		t.Fatalf("after both: %v, %d queued", err, len(g.queued))
	}
}
