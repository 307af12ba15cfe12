package service_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/api/problem"
	"github.com/engine-dev/engine/engine/server/service"
)

// deadline separates "happened" from "hung" (see docs/design/testing.md):
// far longer than anything here takes.
const deadline = 20 * time.Second

// waitFor polls cond until it holds, failing the test after deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
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

func (l *logBuf) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// running is a server whose Serve runs in a goroutine.
type running struct {
	*service.Server
	cancel context.CancelFunc
	done   chan error
}

// stop cancels Serve and waits for it to return.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err // for a second stop (cleanup)
		return err
	case <-time.After(deadline):
		t.Fatal("Serve did not return after its context was cancelled")
		return nil
	}
}

func serve(t *testing.T, dir string, h http.Handler, opts service.Options) *running {
	t.Helper()
	s, err := service.Open(context.Background(), dir, h, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Server: s, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- s.Serve(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// hello answers "hello" (and the path) to every request.
var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, "hello "+r.URL.Path)
})

func get(t *testing.T, c *service.Client, path string) (int, string) {
	t.Helper()
	resp, err := c.HTTP.Get(c.BaseURL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read: %v", path, err)
	}
	return resp.StatusCode, string(b)
}

func dial(t *testing.T, dir string) *service.Client {
	t.Helper()
	c, err := service.Dial(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// staleSocket leaves a socket at path that nobody answers on, as a killed
// server does: a listener closed without unlinking its file.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("stale socket not left: %v", err)
	}
}

func TestSocketAndTokenModesAndAuth(t *testing.T) {
	dir := t.TempDir()
	// Whatever the umask, the socket and the token are 0600.
	old := syscall.Umask(0)
	s, err := service.Open(context.Background(), dir, hello, service.Options{Listen: "127.0.0.1:0"})
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		typ  os.FileMode
	}{{service.SocketPath(dir), os.ModeSocket}, {service.TokenPath(dir), 0}} {
		fi, err := os.Lstat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Type() != c.typ || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want %v with 0600", c.path, fi.Mode(), c.typ)
		}
	}
	if !s.TokenCreated() || len(s.Token()) != 64 {
		t.Fatalf("first start: token %q created %v", s.Token(), s.TokenCreated())
	}
	tok := s.Token()
	s.Close()
	if _, err := os.Lstat(service.SocketPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left after Close: %v", err)
	}

	r := serve(t, dir, hello, service.Options{Listen: "127.0.0.1:0"})
	if r.TokenCreated() || r.Token() != tok {
		t.Fatalf("restart: token %q created %v, want the first one reused", r.Token(), r.TokenCreated())
	}

	// The unix socket needs no token.
	if code, body := get(t, dial(t, dir), "/x"); code != 200 || body != "hello /x" {
		t.Fatalf("unix: %d %q", code, body)
	}

	url := "http://" + r.Addr().String() + "/x"
	for _, c := range []struct{ name, header, wantErr string }{
		{"no header", "", ""},
		{"wrong token", "Bearer " + strings.Repeat("0", 64), "invalid_token"},
		{"other scheme", "Basic " + tok, ""},
	} {
		req, _ := http.NewRequest("GET", url, nil)
		if c.header != "" {
			req.Header.Set("Authorization", c.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p problem.Problem
		derr := json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != 401 || derr != nil || p.Status != 401 || p.Title == "" || p.Type == "" || p.Detail == "" {
			t.Errorf("%s: %d %+v (%v), want 401 with a problem", c.name, resp.StatusCode, p, derr)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("%s: Content-Type %q", c.name, ct)
		}
		if wa := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(wa, "Bearer") || !strings.Contains(wa, c.wantErr) {
			t.Errorf("%s: WWW-Authenticate %q", c.name, wa)
		}
	}

	rc, err := service.DialRemote("http://"+r.Addr().String(), tok)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.CloseIdleConnections()
	if code, body := get(t, rc, "/x"); code != 200 || body != "hello /x" {
		t.Fatalf("tcp with token: %d %q", code, body)
	}
}

func TestTokenFileOthersCanReadIsRefused(t *testing.T) {
	dir := t.TempDir()
	tok, created, err := service.EnsureToken(dir)
	if err != nil || !created {
		t.Fatal(created, err)
	}
	if again, created, err := service.EnsureToken(dir); err != nil || created || again != tok {
		t.Fatalf("second EnsureToken: %q %v %v", again, created, err)
	}
	os.Chmod(service.TokenPath(dir), 0o644)
	_, err = service.Open(context.Background(), dir, hello, service.Options{Listen: "127.0.0.1:0"})
	if !engine.IsInvalid(err) || !strings.Contains(err.Error(), "serve.token") {
		t.Fatalf("open with a 0644 token: %v", err)
	}
	os.WriteFile(service.TokenPath(dir), []byte("short\n"), 0o600)
	os.Chmod(service.TokenPath(dir), 0o600)
	if _, _, err := service.EnsureToken(dir); !engine.IsInvalid(err) {
		t.Fatalf("garbage token: %v", err)
	}
	// No listener was left behind by the failed Open.
	if _, err := os.Lstat(service.SocketPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket after failed open: %v", err)
	}
}

// An --listen that is not HOST:PORT (with a port up to 65535) is bad
// input, refused before the token is made.
func TestListenMustBeHostPort(t *testing.T) {
	for _, addr := range []string{"bogus", "127.0.0.1:99999", "127.0.0.1:-1", "127.0.0.1:no-such-service"} {
		dir := t.TempDir()
		_, err := service.Open(context.Background(), dir, hello, service.Options{Listen: addr})
		if !engine.IsInvalid(err) || !strings.Contains(err.Error(), "--listen "+addr+": want HOST:PORT") {
			t.Errorf("listen %s: %v", addr, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("listen %s refused but wrote %v", addr, ents)
		}
	}
}

// TestRemoteListenNeedsAllowRemote checks that an address other hosts
// reach is refused, before anything is written, unless AllowRemote; and
// that 0.0.0.0 then binds IPv4 only.
func TestRemoteListenNeedsAllowRemote(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		dir := t.TempDir()
		_, err := service.Open(context.Background(), dir, hello, service.Options{Listen: addr})
		if !engine.IsInvalid(err) || !strings.Contains(err.Error(), "--allow-remote") || !strings.Contains(err.Error(), "not only loopback") {
			t.Fatalf("listen %s: %v", addr, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("listen %s refused but wrote %v", addr, ents)
		}
	}
	s, err := service.Open(context.Background(), t.TempDir(), hello, service.Options{Listen: "0.0.0.0:0", AllowRemote: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ta := s.Addr().(*net.TCPAddr); ta.IP.To4() == nil {
		t.Fatalf("0.0.0.0 bound %s, not IPv4 only", ta)
	}
}

func TestStaleSocketIsReplaced(t *testing.T) {
	dir := t.TempDir()
	staleSocket(t, service.SocketPath(dir))
	var log logBuf
	serve(t, dir, hello, service.Options{Logger: log.logger()})
	if code, _ := get(t, dial(t, dir), "/"); code != 200 {
		t.Fatalf("after replacing a stale socket: %d", code)
	}
	// Said once: the check before binding and the one before the rename
	// are one replacement.
	if n := strings.Count(log.String(), "replacing stale socket"); n != 1 {
		t.Errorf("%d lines say so: %s", n, log.String())
	}
}

func TestNonSocketAtPathIsRefused(t *testing.T) {
	for _, kind := range []string{"file", "dir"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			path := service.SocketPath(dir)
			if kind == "file" {
				os.WriteFile(path, []byte("mine"), 0o644)
			} else {
				os.Mkdir(path, 0o755)
			}
			_, err := service.Open(context.Background(), dir, hello, service.Options{})
			if !engine.IsInvalid(err) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a socket") {
				t.Fatalf("got %v, want a clear refusal naming %s", err, path)
			}
			if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() == os.ModeSocket {
				t.Fatalf("the %s was touched: %v", kind, err)
			}
			// Clients find no server through it, and say what is there.
			_, err = service.Dial(context.Background(), dir)
			var ns *service.NotSocketError
			if !errors.Is(err, service.ErrNotServed) || !errors.As(err, &ns) || ns.Path != path || !strings.Contains(err.Error(), path+" is not a socket (a ") {
				t.Fatalf("Dial on a %s: %v, want a not-served *NotSocketError naming %s", kind, err, path)
			}
		})
	}
}

func TestSocketPathTooLong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	_, err := service.Open(context.Background(), dir, hello, service.Options{})
	if !engine.IsInvalid(err) || !strings.Contains(err.Error(), service.SocketPath(dir)) {
		t.Fatalf("got %v, want an error naming the socket path", err)
	}
}

func TestDialNotServed(t *testing.T) {
	dir := t.TempDir()
	_, err := service.Dial(context.Background(), dir)
	if !errors.Is(err, service.ErrNotServed) || !strings.Contains(err.Error(), "no socket") {
		t.Fatalf("no socket: %v", err)
	}
	staleSocket(t, service.SocketPath(dir))
	_, err = service.Dial(context.Background(), dir)
	if !errors.Is(err, service.ErrNotServed) || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("stale socket: %v", err)
	}
}

// A data dir that cannot hold a socket is named as the data dir: a file
// (bad input), a file above it, or a directory the user may not read.
func TestDialNamesABadDataDir(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := service.Dial(ctx, file); !engine.IsInvalid(err) || err.Error() != "invalid data dir: "+file+" is not a directory" {
		t.Errorf("a file: %v", err)
	}
	under := filepath.Join(file, "data")
	if _, err := service.Dial(ctx, under); engine.IsInvalid(err) || err == nil || err.Error() != "data dir "+under+" cannot be made: "+file+" is not a directory" {
		t.Errorf("under a file: %v", err)
	}
	if os.Geteuid() == 0 {
		t.Skip("root reads any directory")
	}
	locked := filepath.Join(t.TempDir(), "locked")
	if err := os.Mkdir(locked, 0o000); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o700)
	if _, err := service.Dial(ctx, locked); err == nil || errors.Is(err, service.ErrNotServed) ||
		err.Error() != "data dir "+locked+" cannot be read: permission denied (check its owner and mode)" {
		t.Errorf("unreadable: %v", err)
	}
}

func TestDialRemoteChecksItsInput(t *testing.T) {
	for _, c := range []struct{ url, token string }{
		{"", "t"}, {"localhost:8080", "t"}, {"ftp://h:1", "t"}, {"http://h:1", ""},
	} {
		if _, err := service.DialRemote(c.url, c.token); !engine.IsInvalid(err) {
			t.Errorf("DialRemote(%q, %q): %v, want invalid input", c.url, c.token, err)
		}
	}
}

// A slow request in flight when the context is cancelled finishes and gets
// its answer; meanwhile the socket is gone and new connections are refused.
func TestGracefulShutdown(t *testing.T) {
	dir := t.TempDir()
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(entered)
			<-release
		}
		io.WriteString(w, "done "+r.URL.Path)
	})
	r := serve(t, dir, h, service.Options{Listen: "127.0.0.1:0"})
	tcpAddr := r.Addr().String()
	c := dial(t, dir)

	type answer struct {
		code int
		body string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := c.HTTP.Get(c.BaseURL + "/slow")
		if err != nil {
			got <- answer{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- answer{resp.StatusCode, string(b), err}
	}()
	<-entered
	r.cancel()

	waitFor(t, "the socket to be removed", func() bool {
		_, err := os.Lstat(service.SocketPath(dir))
		return errors.Is(err, os.ErrNotExist)
	})
	waitFor(t, "TCP to refuse connections", func() bool {
		c, err := net.Dial("tcp", tcpAddr)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	if _, err := service.Dial(context.Background(), dir); !errors.Is(err, service.ErrNotServed) {
		t.Fatalf("Dial while shutting down: %v", err)
	}
	select {
	case err := <-r.done:
		t.Fatalf("Serve returned (%v) while a request was in flight", err)
	default:
	}

	close(release)
	a := <-got
	if a.err != nil || a.code != 200 || a.body != "done /slow" {
		t.Fatalf("in-flight request: %+v", a)
	}
	if err := r.stop(t); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// A request still running after the shutdown timeout is cut off: its
// context is cancelled, its client gets an error, Serve returns.
func TestShutdownTimeoutForcesClose(t *testing.T) {
	dir := t.TempDir()
	entered, cancelled := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done()
		close(cancelled)
	})
	var log logBuf
	r := serve(t, dir, h, service.Options{ShutdownTimeout: 50 * time.Millisecond, Logger: log.logger()})
	c := dial(t, dir)
	errc := make(chan error, 1)
	go func() {
		resp, err := c.HTTP.Get(c.BaseURL + "/stuck")
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	<-entered
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	// Serve returned after the handler did: the caller may close the
	// memory now.
	select {
	case <-cancelled:
	default:
		t.Fatal("Serve returned before the cut-off handler returned")
	}
	select {
	case err := <-errc:
		if !errors.Is(err, service.ErrServerGone) || !strings.Contains(err.Error(), "went away") {
			t.Fatalf("client of a cut-off request: %v", err)
		}
	case <-time.After(deadline):
		t.Fatal("the client of a cut-off request hangs")
	}
	if !strings.Contains(log.String(), "shutdown timeout") {
		t.Errorf("log: %s", log.String())
	}
}

// A response cut short (Close while it streams) is a went-away error too,
// not a short body.
func TestStreamCutShortIsGone(t *testing.T) {
	dir := t.TempDir()
	flushed := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "part")
		w.(http.Flusher).Flush()
		close(flushed)
		<-r.Context().Done()
	})
	r := serve(t, dir, h, service.Options{})
	c := dial(t, dir)
	resp, err := c.HTTP.Get(c.BaseURL + "/export")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-flushed
	r.Close()
	b, err := io.ReadAll(resp.Body)
	if string(b) != "part" || !errors.Is(err, service.ErrServerGone) {
		t.Fatalf("read %q, %v; want \"part\" then a went-away error", b, err)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// A handler that ignores its cancelled context does not hold Serve up for
// ever: Serve logs it and returns.
func TestHandlerIgnoringCancellationDoesNotBlockShutdown(t *testing.T) {
	dir := t.TempDir()
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	})
	var log logBuf
	r := serve(t, dir, h, service.Options{ShutdownTimeout: 20 * time.Millisecond, Logger: log.logger()})
	c := dial(t, dir)
	go func() {
		if resp, err := c.HTTP.Get(c.BaseURL + "/"); err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "handlers still running") {
		t.Errorf("log: %s", log.String())
	}
}

// The socket file deleted, or replaced by a stale one, under a running
// server is re-created, and clients reach the server again.
func TestSocketDeletedOrReplacedIsRecreated(t *testing.T) {
	dir := t.TempDir()
	var log logBuf
	serve(t, dir, hello, service.Options{WatchInterval: 10 * time.Millisecond, Logger: log.logger()})
	sock := service.SocketPath(dir)

	steps := []struct {
		name    string
		breakIt func()
	}{
		{"deleted", func() { os.Remove(sock) }},
		{"replaced", func() {
			tmp := filepath.Join(t.TempDir(), "s")
			staleSocket(t, tmp)
			if err := os.Rename(tmp, sock); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for i, st := range steps {
		before, _ := os.Lstat(sock)
		st.breakIt()
		waitFor(t, "the socket to be re-created after being "+st.name, func() bool {
			fi, err := os.Lstat(sock)
			return err == nil && !os.SameFile(fi, before) && fi.Mode().Perm() == 0o600 &&
				strings.Count(log.String(), "re-created") == i+1
		})
		if code, body := get(t, dial(t, dir), "/again"); code != 200 || body != "hello /again" {
			t.Fatalf("after %s: %d %q", st.name, code, body)
		}
		if !strings.Contains(log.String(), "socket file "+st.name+"; re-created") {
			t.Errorf("log: %s", log.String())
		}
	}
}

// A regular file put where the socket was is never deleted: the server logs
// (once) that it cannot re-create its socket.
func TestWatchdogLeavesANonSocketAlone(t *testing.T) {
	dir := t.TempDir()
	var log logBuf
	r := serve(t, dir, hello, service.Options{WatchInterval: 5 * time.Millisecond, Logger: log.logger()})
	sock := service.SocketPath(dir)
	os.Remove(sock)
	os.WriteFile(sock, []byte("mine"), 0o644)
	waitFor(t, "the watchdog to report the file", func() bool {
		return strings.Contains(log.String(), "cannot re-create")
	})
	// Many more checks pass; the line is not repeated.
	time.Sleep(50 * time.Millisecond) // not synchronisation: lets the watchdog run more checks
	if n := strings.Count(log.String(), "cannot re-create"); n != 1 {
		t.Errorf("logged %d times: %s", n, log.String())
	}
	r.stop(t)
	if b, err := os.ReadFile(sock); err != nil || string(b) != "mine" {
		t.Fatalf("the file was touched: %q %v", b, err)
	}
}

func TestCloseBeforeServe(t *testing.T) {
	dir := t.TempDir()
	s, err := service.Open(context.Background(), dir, hello, service.Options{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	addr := s.Addr().String()
	s.Close()
	if err := s.Serve(context.Background()); err == nil {
		t.Fatal("Serve after Close succeeded")
	}
	if _, err := os.Lstat(service.SocketPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket after Close: %v", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("TCP still accepts after Close")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "serve.token" {
			t.Errorf("left in the data dir: %s", e.Name())
		}
	}
}

// A graceful stop serves every client that connected before the socket
// file went, even those whose connection the server had not yet accepted
// or whose request it had not yet read; a client that comes later finds
// no socket (so engine/server/attach can look elsewhere and resend safely).
func TestGracefulStopServesQueuedConnections(t *testing.T) {
	dir := t.TempDir()
	r := serve(t, dir, hello, service.Options{})
	sock := service.SocketPath(dir)
	const n = 16
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	stopped := make(chan error, 1)
	go func() { stopped <- r.stop(t) }()
	waitFor(t, "the socket file to go", func() bool {
		_, err := os.Lstat(sock)
		return errors.Is(err, os.ErrNotExist)
	})
	if _, err := net.Dial("unix", sock); err == nil {
		t.Fatal("a client connected after the socket file went")
	}
	for i, c := range conns {
		if _, err := io.WriteString(c, "GET /late HTTP/1.1\r\nHost: engine\r\nConnection: close\r\n\r\n"); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		c.SetReadDeadline(time.Now().Add(deadline))
		b, err := io.ReadAll(c)
		if err != nil || !strings.Contains(string(b), "hello /late") {
			t.Fatalf("connection %d, made before the stop: %q, %v; want it served", i, b, err)
		}
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// TestBrowserSession: ?token= on a path Options.Sessions accepts starts a
// session whose cookie is a random id, not the token; the cookie opens
// those paths only, never works as a bearer, and a cross-origin
// state-changing request is refused on every path, the socket's too.
func TestBrowserSession(t *testing.T) {
	dir := t.TempDir()
	pages := func(r *http.Request) bool { return !strings.HasPrefix(r.URL.Path, "/v1/") }
	r := serve(t, dir, hello, service.Options{Listen: "127.0.0.1:0", Sessions: pages})
	base := "http://" + r.Addr().String()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path string, cookie *http.Cookie, h ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		if cookie != nil {
			req.AddCookie(cookie)
		}
		for i := 0; i+1 < len(h); i += 2 {
			req.Header.Set(h[i], h[i+1])
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}

	// Opening the printed URL starts a session and drops the token from the URL.
	resp := do("GET", "/lessons?tier=1&token="+r.Token(), nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/lessons?tier=1" {
		t.Fatalf("open with token: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == service.CookieName {
			cookie = c
		}
	}
	if cookie == nil || cookie.Value == "" || strings.Contains(cookie.Value, r.Token()) || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" {
		t.Fatalf("cookie: %+v (token %s)", cookie, r.Token())
	}
	session := &http.Cookie{Name: service.CookieName, Value: cookie.Value}
	// With the cookie, pages work by every method; with a wrong one, 401.
	for _, m := range []string{"GET", "POST"} {
		if resp := do(m, "/x", session); resp.StatusCode != 200 {
			t.Errorf("%s with the cookie: %d", m, resp.StatusCode)
		}
		for _, v := range []string{strings.Repeat("0", 64), r.Token()} {
			resp := do(m, "/x", &http.Cookie{Name: service.CookieName, Value: v})
			if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "invalid_token") {
				t.Errorf("%s with cookie %s: %d %q", m, v, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
		}
		// Paths Sessions refuses take the bearer header only.
		if resp := do(m, "/v1/x", session); resp.StatusCode != 401 {
			t.Errorf("%s /v1/x with the cookie: %d", m, resp.StatusCode)
		}
		if resp := do(m, "/v1/x", nil, "Authorization", "Bearer "+r.Token()); resp.StatusCode != 200 {
			t.Errorf("%s /v1/x with the token: %d", m, resp.StatusCode)
		}
		// The session id is no bearer token.
		if resp := do(m, "/x", nil, "Authorization", "Bearer "+cookie.Value); resp.StatusCode != 401 {
			t.Errorf("%s with the session as bearer: %d", m, resp.StatusCode)
		}
	}
	// ?token= on a path Sessions refuses starts nothing.
	if resp := do("GET", "/v1/x?token="+r.Token(), nil); resp.StatusCode != 401 || len(resp.Cookies()) != 0 {
		t.Errorf("/v1/x?token=: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	// A wrong token in the URL sets nothing.
	resp = do("GET", "/?token="+strings.Repeat("1", 64), nil)
	if resp.StatusCode != 401 || len(resp.Cookies()) != 0 {
		t.Fatalf("wrong token in the URL: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	// The redirect stays on this server whatever the path.
	for _, p := range []string{"//evil.example/x", `/\evil.example/x`} {
		resp := do("GET", p+"?token="+r.Token(), nil)
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/evil.example/x" {
			t.Errorf("%s: %d, Location %q", p, resp.StatusCode, loc)
		}
	}
	// Cross-origin state-changing requests are 403 whatever they carry;
	// reads and same-origin ones pass.
	other := "http://127.0.0.1:1"
	for _, tc := range []struct {
		method string
		auth   *http.Cookie
		h      []string
		want   int
	}{
		{"POST", session, []string{"Sec-Fetch-Site", "same-site"}, 403},
		{"POST", session, []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"DELETE", session, []string{"Origin", other}, 403},
		{"PUT", nil, []string{"Origin", other, "Authorization", "Bearer " + r.Token()}, 403},
		{"PATCH", session, []string{"Origin", "null"}, 403},
		{"POST", session, []string{"Sec-Fetch-Site", "same-origin", "Origin", base}, 200},
		{"POST", session, []string{"Origin", base}, 200},
		{"GET", session, []string{"Sec-Fetch-Site", "cross-site"}, 200},
	} {
		resp := do(tc.method, "/x", tc.auth, tc.h...)
		if resp.StatusCode != tc.want {
			t.Errorf("%s %v: %d, want %d", tc.method, tc.h, resp.StatusCode, tc.want)
		}
		if tc.want == 403 && resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s %v: Content-Type %q", tc.method, tc.h, resp.Header.Get("Content-Type"))
		}
	}
	// The socket needs neither, but refuses cross-origin writes too.
	c := dial(t, dir)
	if code, _ := get(t, c, "/x"); code != 200 {
		t.Fatalf("unix: %d", code)
	}
	req, _ := http.NewRequest("POST", c.BaseURL+"/x", nil)
	req.Header.Set("Sec-Fetch-Site", "same-site")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("unix, cross-origin POST: %d", resp.StatusCode)
	}
}

// Without Options.Sessions no request takes a cookie and ?token= starts
// nothing.
func TestNoSessionsWithoutOption(t *testing.T) {
	r := serve(t, t.TempDir(), hello, service.Options{Listen: "127.0.0.1:0"})
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get("http://" + r.Addr().String() + "/?token=" + r.Token())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || len(resp.Cookies()) != 0 {
		t.Fatalf("?token= without Sessions: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
}

// grantKey marks a request an Authenticator admitted, with the token's
// label, for the handler to see.
type grantKey struct{}

// TestAuthenticateScopedTokens: a token Options.Authenticate accepts is
// admitted with its grant in the request's context (serve.token with
// none); one it refuses is 401; a store that cannot answer is 503; and a
// browser session started with such a token checks it again on every
// request, so revoking the token ends the session.
func TestAuthenticateScopedTokens(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	live := map[string]string{"scoped-token": "tenant-a"}
	failing := false
	auth := func(ctx context.Context, tok string) (func(context.Context) context.Context, bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			return nil, false, errors.New("store unreachable")
		}
		label, ok := live[tok]
		if !ok {
			return nil, false, nil
		}
		return func(ctx context.Context) context.Context { return context.WithValue(ctx, grantKey{}, label) }, true, nil
	}
	who := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		label, _ := r.Context().Value(grantKey{}).(string)
		io.WriteString(w, "as "+cmp.Or(label, "owner"))
	})
	r := serve(t, dir, who, service.Options{Listen: "127.0.0.1:0", Authenticate: auth, Sessions: func(*http.Request) bool { return true }})
	base := "http://" + r.Addr().String()
	send := func(bearer string, cookie *http.Cookie, path string) (int, string, *http.Response) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b), resp
	}
	if code, body, _ := send(r.Token(), nil, "/x"); code != 200 || body != "as owner" {
		t.Errorf("serve.token: %d %q", code, body)
	}
	if code, body, _ := send("scoped-token", nil, "/x"); code != 200 || body != "as tenant-a" {
		t.Errorf("a scoped token: %d %q", code, body)
	}
	if code, _, _ := send("other-token", nil, "/x"); code != 401 {
		t.Errorf("an unknown token: %d", code)
	}
	_, _, resp := send("", nil, "/x?token=scoped-token")
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == service.CookieName {
			cookie = &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	if resp.StatusCode != http.StatusSeeOther || cookie == nil {
		t.Fatalf("a session of a scoped token: %d %v", resp.StatusCode, resp.Cookies())
	}
	if code, body, _ := send("", cookie, "/x"); code != 200 || body != "as tenant-a" {
		t.Errorf("the session: %d %q", code, body)
	}
	mu.Lock()
	failing = true
	mu.Unlock()
	if code, _, _ := send("scoped-token", nil, "/x"); code != http.StatusServiceUnavailable {
		t.Errorf("a store that cannot answer: %d", code)
	}
	mu.Lock()
	failing = false
	delete(live, "scoped-token") // revoked
	mu.Unlock()
	if code, _, _ := send("", cookie, "/x"); code != 401 {
		t.Errorf("the session of a revoked token: %d", code)
	}
	if code, _, _ := send("scoped-token", nil, "/x"); code != 401 {
		t.Errorf("a revoked token: %d", code)
	}
}

// Options.Public lets the requests it names through a TCP listener without
// the token (the API's description: api.Public); every other request still
// needs it.
func TestPublicRequestsNeedNoToken(t *testing.T) {
	dir := t.TempDir()
	r := serve(t, dir, hello, service.Options{Listen: "127.0.0.1:0", Public: api.Public})
	base := "http://" + r.Addr().String()
	for path, want := range map[string]int{"/v1/openapi.json": 200, "/v1/health": 401, "/v1/lessons": 401, "/v1/openapi.json/x": 401, "/v1/%6fpenapi.json": 401} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s without a token: %d, want %d", path, resp.StatusCode, want)
		}
	}
	req, _ := http.NewRequest("POST", base+"/v1/openapi.json", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("POST /v1/openapi.json without a token: %d, want 401", resp.StatusCode)
	}
}

// TestListenHostNameThatNeverResolves: a --listen host name whose DNS
// server never answers fails the start, naming the lookup, instead of
// holding it without a word. The resolver's server is a UDP socket that
// reads nothing.
func TestListenHostNameThatNeverResolves(t *testing.T) {
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	saved := net.DefaultResolver
	// The lookup outlives the test (it is abandoned, not cancelled), so
	// its dial reads no global (a net.Dialer reads net.DefaultResolver,
	// which the test puts back when it ends).
	to := silent.LocalAddr().(*net.UDPAddr)
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return net.DialUDP("udp", nil, to)
	}}
	defer func() { net.DefaultResolver = saved }()

	done := make(chan error, 1)
	go func() {
		s, err := service.Open(context.Background(), t.TempDir(), hello, service.Options{Listen: "memory.engine-test.invalid:0", ResolveTimeout: 200 * time.Millisecond})
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), `the host name "memory.engine-test.invalid" did not resolve within 200ms`) {
			t.Fatalf("Open: %v", err)
		}
	case <-time.After(deadline):
		t.Fatal("Open still resolving")
	}
}

// TestDataDirDeletedStopsServer: a server whose data dir is deleted under
// it stops on its own with an error naming the dir, rather than serve on
// a memory it can neither write nor close.
func TestDataDirDeletedStopsServer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	r := serve(t, dir, hello, service.Options{WatchInterval: 10 * time.Millisecond})
	if code, _ := get(t, dial(t, dir), "/before"); code != 200 {
		t.Fatalf("before: %d", code)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.done:
		r.done <- err
		if err == nil || !strings.Contains(err.Error(), "data dir "+dir+" was deleted while serving") {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(deadline):
		t.Fatal("Serve still running after its data dir was deleted")
	}
}
