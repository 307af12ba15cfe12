package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/archive"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/server/service"
)

// bigImport is an export document of n lessons of ~1 KB each whose error
// patterns start with prefix: at 2,500 (~2.5 MB) it is past what one
// badger transaction takes, so the import goes through kv's undo journal.
func bigImport(t *testing.T, prefix string, n int) []byte {
	t.Helper()
	d := archive.Document{Format: archive.Format, Version: archive.Version, ExportedAt: time.Now().UTC()}
	// The size is split between the text (a lesson over 600 characters is
	// quarantined as not advice) and the error pattern.
	text := strings.Repeat("scroll the list into view before clicking on its rows; ", 10)
	pad := strings.Repeat("x", 420)
	for i := range n {
		d.Lessons = append(d.Lessons, lesson.Lesson{Lesson: fmt.Sprintf("%s %d", text, i), Category: lesson.ErrorRecovery,
			FailedCommand: "scroll", ErrorPattern: fmt.Sprintf("%s %d %s", prefix, i, pad), UseCount: 1,
			CreatedAt: "2026-03-01", LastUsed: "2026-03-01", Source: lesson.SourceLearned, TriggeredDomains: []string{}})
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// countPrefix counts the lessons the server holds whose error pattern
// starts with prefix.
func countPrefix(t *testing.T, ctx context.Context, c *api.Client, prefix string) int {
	t.Helper()
	n := 0
	if _, err := c.EachLesson(ctx, api.LessonFilter{Category: lesson.ErrorRecovery}, 0, func(l lesson.Lesson) error {
		if strings.HasPrefix(l.ErrorPattern, prefix+" ") {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// logBuf collects a server's log lines.
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

// serveLogged is serveDir with the server's and the handler's log lines
// kept, checked at the end: no handler may be left running.
func serveLogged(t *testing.T) (*served, *logBuf) {
	t.Helper()
	dir := t.TempDir()
	log := &logBuf{}
	lg := slog.New(slog.NewTextHandler(log, nil))
	ctx := context.Background()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// These tests are about what a cut-off request leaves behind, not
	// latency: a request queued behind a big import waits as long as the
	// test would (a busy machine under -race commits 2,500 lessons slowly).
	srv, err := service.Open(ctx, dir, api.Handler(m, api.Options{Logger: lg, LockTimeout: hang}), service.Options{WatchInterval: -1, Logger: lg})
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &served{dir: dir, m: m, srv: srv, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- srv.Serve(sctx) }()
	t.Cleanup(func() {
		s.stop(t)
		if l := log.String(); strings.Contains(l, "still running") || strings.Contains(l, "level=ERROR") {
			t.Errorf("server log:\n%s", l)
		}
	})
	return s, log
}

// rawRequest connects to dir's socket and writes head and body, then
// closes the connection without reading an answer.
func rawRequest(t *testing.T, dir, head string, body []byte) {
	t.Helper()
	c, err := net.Dial("unix", service.SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(body); err != nil {
		t.Fatal(err)
	}
}

// Clients that go away during an import's upload, or right after it (while
// the server may be committing it): the import is all or nothing, the
// server stays healthy, and the next requests — a whole import among them —
// work.
func TestImportCutOffByTheClient(t *testing.T) {
	s, _ := serveLogged(t)
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	c := dialAPI(t, s.dir)
	// n lessons are ~1 MB, more than the socket's buffers hold; the import
	// cut off after it is sent is past one transaction (the undo journal).
	const n, big = 1000, 2500
	head := func(body []byte) string {
		return fmt.Sprintf("POST /v1/import?source=cut HTTP/1.1\r\nHost: engine\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	}

	// 1. The connection closes half way through the body.
	half := bigImport(t, "half", n)
	rawRequest(t, s.dir, head(half), half[:len(half)/2])

	// 2. The client cancels its request while the upload streams: the
	// server has read part of it (more than any socket buffer holds).
	streamed := bigImport(t, "streamed", n)
	pr, pw := io.Pipe()
	sc, err := service.Dial(ctx, s.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.CloseIdleConnections()
	rctx, rcancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, sc.BaseURL+"/v1/import?source=streamed", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	doErr := make(chan error, 1)
	go func() {
		resp, err := sc.HTTP.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("answered %s", resp.Status)
		}
		doErr <- err
	}()
	if _, err := pw.Write(streamed[:len(streamed)/2]); err != nil {
		t.Fatal(err)
	}
	// The client gives up: it cancels and stops feeding the body (the
	// transport waits for its body reader to return).
	rcancel()
	pw.CloseWithError(errors.New("the client gave up"))
	if err := <-doErr; err == nil || errors.Is(err, service.ErrServerGone) {
		t.Errorf("the cancelled upload: %v, want the client's own error", err)
	}

	// 3. The whole body is sent and the client goes at once: the server
	// may see the request cancelled before, during or after its commit.
	whole := bigImport(t, "whole", big)
	rawRequest(t, s.dir, head(whole), whole)

	// Exclusive routes run one at a time, so a new import (exclusive too)
	// runs after whatever the cut-off ones did; the first two wrote nothing,
	// the third all or nothing.
	again := bigImport(t, "again", n)
	res, err := c.Import(ctx, again, "again", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Imported[0]; got.Kind != "lessons" || got.Count != n {
		t.Errorf("import after the cut-off ones: %v", res.Imported)
	}
	for _, p := range []string{"half", "streamed"} {
		if got := countPrefix(t, ctx, c, p); got != 0 {
			t.Errorf("%d lessons of the %s import are there, want none", got, p)
		}
	}
	switch got := countPrefix(t, ctx, c, "whole"); got {
	case 0, big:
		t.Logf("the import whose client left at once: %d of %d lessons", got, big)
	default:
		t.Errorf("%d of %d lessons of the import whose client left are there: half written", got, big)
	}
	if got := countPrefix(t, ctx, c, "again"); got != n {
		t.Errorf("%d of %d lessons of the whole import", got, n)
	}
	if _, err := c.RecallError(ctx, "scroll e4", "again 7", ""); err != nil {
		t.Fatal(err)
	}
}

// A client that reads part of GET /v1/export (larger than the socket's
// buffers, so the server is blocked writing it) and goes away: the export
// ends, its share of the handler's lock is released (an exclusive import
// runs after it), and the next export is whole.
func TestExportCutOffByTheClient(t *testing.T) {
	s, _ := serveLogged(t)
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	c := dialAPI(t, s.dir)
	const n = 1000 // ~1 MB of export, more than the socket's buffers hold
	if _, err := c.Import(ctx, bigImport(t, "held", n), "held", true); err != nil {
		t.Fatal(err)
	}

	// 1. Over a raw connection: read 64 KiB of the answer, then close.
	conn, err := net.Dial("unix", service.SocketPath(s.dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, "GET /v1/export HTTP/1.1\r\nHost: engine\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %s", resp.Status)
	}
	if _, err := io.CopyN(io.Discard, resp.Body, 64<<10); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	// 2. Through the client: cancel the request after 64 KiB of the body.
	sc, err := service.Dial(ctx, s.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.CloseIdleConnections()
	rctx, rcancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, sc.BaseURL+"/v1/export", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = sc.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(io.Discard, resp.Body, 64<<10); err != nil {
		t.Fatal(err)
	}
	rcancel()
	if _, err := io.Copy(io.Discard, resp.Body); !errors.Is(err, context.Canceled) {
		t.Errorf("reading the rest of a cancelled export: %v, want context.Canceled", err)
	}
	resp.Body.Close()

	// An exclusive route waits for every shared one: it would hang if a
	// cut-off export still held its share.
	if _, err := c.Import(ctx, bigImport(t, "after", 10), "after", true); err != nil {
		t.Fatal(err)
	}
	d, err := c.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held, after := 0, 0
	for _, l := range d.Lessons {
		switch {
		case strings.HasPrefix(l.ErrorPattern, "held "):
			held++
		case strings.HasPrefix(l.ErrorPattern, "after "):
			after++
		}
	}
	if held != n || after != 10 {
		t.Errorf("the export after the cut-off ones holds %d and %d lessons, want %d and 10", held, after, n)
	}
}
