package api_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/api/problem"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/server/service"
)

// serveOpts is serveDir with the handler's options.
func serveOpts(t *testing.T, opts api.Options) *served {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if opts.SpoolDir == "" {
		opts.SpoolDir = dir
	}
	srv, err := service.Open(ctx, dir, api.Handler(m, opts), service.Options{WatchInterval: -1})
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &served{dir: dir, m: m, srv: srv, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- srv.Serve(sctx) }()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// staller is a client that sent a request's headers and part of its body,
// and sends no more.
type staller struct {
	conn   net.Conn
	answer chan string // its status line and body, once the server answers
}

// stall connects to dir's socket, sends head (with Expect: 100-continue)
// and, once the server's handler asks for the body (100 Continue), part of
// it; then it stops sending and waits for an answer.
func stall(t *testing.T, dir, head string, part []byte) *staller {
	t.Helper()
	c, err := net.Dial("unix", service.SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(2 * hang))
	if _, err := io.WriteString(c, head+"Expect: 100-continue\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("waiting for 100 Continue: %q, %v", line, err)
	}
	if blank, err := br.ReadString('\n'); err != nil || blank != "\r\n" {
		t.Fatalf("after 100 Continue: %q, %v", blank, err)
	}
	if _, err := c.Write(part); err != nil {
		t.Fatal(err)
	}
	s := &staller{conn: c, answer: make(chan string, 1)}
	go func() {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			s.answer <- "no answer: " + err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.answer <- fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}()
	return s
}

// stalledImport is a streamed import (its digest given, 4 MiB announced)
// of which the first 8 KiB arrive.
func stalledImport(t *testing.T, dir string) *staller {
	body := bigExport(20000)
	sum := sha256.Sum256(body[:4<<20])
	head := fmt.Sprintf("POST /v1/import?source=stall&sha256=%s HTTP/1.1\r\nHost: engine\r\nContent-Type: application/json\r\nContent-Length: %d\r\n",
		hex.EncodeToString(sum[:]), 4<<20)
	return stall(t, dir, head, body[:8<<10])
}

// stalledLesson is a POST /v1/lessons of which the first bytes arrive.
func stalledLesson(t *testing.T, dir string) *staller {
	head := "POST /v1/lessons HTTP/1.1\r\nHost: engine\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n"
	return stall(t, dir, head, []byte(`{"lesson":"wait for the`))
}

// A client whose body stalls (an import streaming in, a lesson) holds up
// nobody: with an exclusive request (a forget) sent after it, another
// client's health, recall, list and the forget itself are all answered
// while the stalled request still has no answer.
func TestStalledBodyHoldsNoOne(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stall func(*testing.T, string) *staller
	}{{"import", stalledImport}, {"lesson", stalledLesson}} {
		t.Run(tc.name, func(t *testing.T) {
			// The stall outlasts the test: only the others' answers end it.
			s := serveOpts(t, api.Options{BodyIdleTimeout: 2 * hang, BodyTimeout: 2 * hang})
			ctx, cancel := context.WithTimeout(context.Background(), hang)
			defer cancel()
			c := dialAPI(t, s.dir)
			if _, err := c.RecordLesson(ctx, lesson.Lesson{Lesson: "close the cookie banner first", Category: lesson.ErrorRecovery,
				FailedCommand: "click", ErrorPattern: "intercepts pointer events", Domain: "shop.example"}); err != nil {
				t.Fatal(err)
			}
			st := tc.stall(t, s.dir)
			forgot := make(chan error, 1)
			go func() {
				_, err := dialAPI(t, s.dir).Forget(ctx, "other.example", false)
				forgot <- err
			}()
			other := dialAPI(t, s.dir)
			if _, err := other.Health(ctx); err != nil {
				t.Fatalf("health beside a stalled body: %v", err)
			}
			if _, err := other.Tier1(ctx); err != nil {
				t.Fatalf("recall tier1 beside a stalled body: %v", err)
			}
			if ls, err := other.RecallError(ctx, "click e4", "intercepts pointer events", "shop.example"); err != nil || len(ls) == 0 {
				t.Fatalf("recall error beside a stalled body: %d lessons, %v", len(ls), err)
			}
			if _, err := other.Lessons(ctx, api.LessonFilter{Domain: "shop.example"}); err != nil {
				t.Fatalf("list beside a stalled body: %v", err)
			}
			if err := <-forgot; err != nil {
				t.Fatalf("forget beside a stalled body: %v", err)
			}
			select {
			case got := <-st.answer:
				t.Fatalf("the stalled request was answered before the others were: %s", got)
			default:
			}
		})
	}
}

// A body that stops coming is answered 408 (problem+json saying so) once
// its deadline passes, a pause (BodyIdleTimeout) or the whole body
// (BodyTimeout); the import writes nothing and the server serves on.
func TestStalledBodyIs408(t *testing.T) {
	const short = 50 * time.Millisecond
	for _, tc := range []struct {
		name  string
		opts  api.Options
		stall func(*testing.T, string) *staller
		want  string
	}{
		{"import pause", api.Options{BodyIdleTimeout: short, BodyTimeout: hang}, stalledImport, "request body: nothing for 50ms (read 8192 of 4194304 bytes)"},
		{"lesson pause", api.Options{BodyIdleTimeout: short, BodyTimeout: hang}, stalledLesson, "request body: nothing for 50ms (read 23 of 1000 bytes)"},
		{"import whole", api.Options{BodyIdleTimeout: hang, BodyTimeout: short}, stalledImport, "request body: not whole within 50ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serveOpts(t, tc.opts)
			st := tc.stall(t, s.dir)
			got := <-st.answer
			if !strings.HasPrefix(got, "408 "+problem.ContentType) || !strings.Contains(got, tc.want) {
				t.Fatalf("the stalled request's answer: %s; want 408 problem+json with %q", got, tc.want)
			}
			ctx, cancel := context.WithTimeout(context.Background(), hang)
			defer cancel()
			c := dialAPI(t, s.dir)
			if _, err := c.Health(ctx); err != nil {
				t.Fatal(err)
			}
			if n := countPrefix(t, ctx, c, "not visible"); n != 0 {
				t.Fatalf("%d lessons of the stalled import were written", n)
			}
		})
	}
}

// A body past its route's limit is refused 413 as it streams in, before
// any lock, whether or not it announced its length.
func TestBodyOverTheLimitIs413(t *testing.T) {
	s := serveOpts(t, api.Options{})
	sc, err := service.Dial(context.Background(), s.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.CloseIdleConnections()
	body := strings.NewReader(`{"lesson":"` + strings.Repeat("x", api.MaxBody) + `"}`)
	req, err := http.NewRequest(http.MethodPost, sc.BaseURL+"/v1/lessons", io.MultiReader(body)) // no length: chunked
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := sc.HTTP.Do(req)
	if err != nil && !errors.Is(err, io.ErrClosedPipe) {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), fmt.Sprintf("over %d bytes (the limit of this route)", api.MaxBody)) || strings.Contains(string(b), "too large") {
		t.Fatalf("a chunked body past the limit: %d %s", resp.StatusCode, b)
	}
}

// The same deadlines hold over TCP and for a handler mounted beside the
// API with ReadBodyFirst (/mcp, the inspector): a stalled body there is
// answered 408, one past its limit 413, a whole one reaches the handler.
func TestReadBodyFirstOverTCP(t *testing.T) {
	dir := t.TempDir()
	opts := api.Options{BodyIdleTimeout: 50 * time.Millisecond, BodyTimeout: hang, SpoolDir: dir}
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		fmt.Fprintf(w, "got %d bytes", len(b))
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", api.ReadBodyFirst(echo, 100, opts))
	srv, err := service.Open(context.Background(), dir, mux, service.Options{WatchInterval: -1, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	post := func(body string, length int) string {
		c, err := net.Dial("tcp", srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(hang))
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: engine\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", srv.Token(), length, body)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, b)
	}
	if got := post(`{"jsonrpc":"2.0"}`, 17); got != "200 got 17 bytes" {
		t.Errorf("a whole body: %s", got)
	}
	if got := post(`{"jsonrpc":`, 17); !strings.HasPrefix(got, "408 ") || !strings.Contains(got, "request body: nothing for 50ms (read 11 of 17 bytes)") {
		t.Errorf("a stalled body: %s", got)
	}
	if got := post(strings.Repeat("x", 101), 101); !strings.HasPrefix(got, "413 ") || !strings.Contains(got, "request body: over 100 bytes (the limit of this route)") || strings.Contains(got, "too large") {
		t.Errorf("a body past the limit: %s", got)
	}
}
