// Package servetest starts `engine serve` for the clients' tests as a user
// would on a fresh machine (default data dir under a new HOME, no ENGINE_*
// variables, a TCP listener beside the socket), so that the Python and
// TypeScript suites reach the same server, started and stopped the same way.
package servetest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options tune Start.
type Options struct {
	// Wait bounds how long the server may take to say it serves, and to
	// stop once interrupted; zero means a minute.
	Wait time.Duration
}

// Server is a running `engine serve` that stops with the test.
type Server struct {
	Sock  string // the unix socket it serves on
	URL   string // its TCP listener, http://127.0.0.1:PORT
	Token string // the bearer token it wrote to Dir/serve.token
	Dir   string // its data dir: the default one under Home
	Home  string // the fresh HOME it runs with
	// Env holds ENGINE_TEST_SOCKET, ENGINE_TEST_URL, ENGINE_TEST_TOKEN and
	// ENGINE_TEST_HOME: what the clients' suites read to reach the server.
	Env []string
}

// serving is the line engine serve prints once its socket and listener
// are in place.
var serving = regexp.MustCompile(`^engine: serving .* on (\S+) and (http://\S+) \(pid`)

// Start builds cmd/engine and cmd/engine-agent (which serves), or takes
// ENGINE_BIN (an engine with its engine-agent beside it), starts `engine
// serve --listen 127.0.0.1:0` with ENGINE_LOG_LEVEL=error on a fresh HOME,
// and waits for the line that says it serves. If the server exits or
// opts.Wait passes first, the test fails with what the server printed.
// The server's later lines are read so it never blocks on them; it is
// interrupted and waited for when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Wait == 0 {
		opts.Wait = time.Minute
	}
	bin := os.Getenv("ENGINE_BIN")
	if bin == "" {
		out := t.TempDir()
		bin = filepath.Join(out, "engine")
		build := exec.Command("go", "build", "-o", out+string(filepath.Separator),
			"github.com/engine-dev/engine/cmd/engine", "github.com/engine-dev/engine/cmd/engine-agent")
		if msg, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/engine ./cmd/engine-agent: %v\n%s", err, msg)
		}
	}
	// No ENGINE_* variable and no --data-dir: the server holds the default
	// data dir under its HOME, which a client finds with no address.
	home := t.TempDir()
	s := &Server{Home: home, Dir: filepath.Join(home, ".local", "share", "engine")}
	srv := exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
	srv.Env = append(PlainEnv(home), "ENGINE_LOG_LEVEL=error")
	// A pipe of our own rather than StderrPipe: Wait neither closes it
	// under the reader nor waits for it (engine-agent may hold it too).
	stderr, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	srv.Stderr = w
	err = srv.Start()
	w.Close()
	if err != nil {
		stderr.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop(t, srv, opts.Wait)
		stderr.Close()
	})

	var mu sync.Mutex
	var said []string // the lines up to the serving one
	found := make(chan []string, 1)
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			mu.Lock()
			said = append(said, lines.Text())
			mu.Unlock()
			if m := serving.FindStringSubmatch(lines.Text()); m != nil {
				found <- m
				break
			}
		}
		for lines.Scan() { // the server's later lines, read so it never blocks on them
		}
	}()
	printed := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(said, "\n")
	}
	select {
	case m := <-found:
		s.Sock, s.URL = m[1], m[2]
	case <-eof:
		t.Fatalf("engine serve did not say it serves:\n%s", printed())
	case <-time.After(opts.Wait):
		srv.Process.Kill()
		t.Fatalf("engine serve did not say it serves within %v:\n%s", opts.Wait, printed())
	}
	tok, err := os.ReadFile(filepath.Join(s.Dir, "serve.token"))
	if err != nil {
		t.Fatal(err)
	}
	s.Token = strings.TrimSpace(string(tok))
	s.Env = []string{"ENGINE_TEST_SOCKET=" + s.Sock, "ENGINE_TEST_URL=" + s.URL, "ENGINE_TEST_TOKEN=" + s.Token, "ENGINE_TEST_HOME=" + s.Home}
	return s
}

// stop interrupts the server and waits for it; one that is still running
// after wait is killed and fails the test, rather than hang it.
func stop(t testing.TB, srv *exec.Cmd, wait time.Duration) {
	t.Helper()
	srv.Process.Signal(os.Interrupt)
	exited := make(chan struct{})
	go func() {
		srv.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(wait):
		srv.Process.Kill()
		<-exited
		t.Errorf("engine serve did not stop within %v of an interrupt; killed it", wait)
	}
}

// PlainEnv is this process's environment without the ENGINE_* variables
// and XDG_DATA_HOME, with HOME set to home.
func PlainEnv(home string) []string {
	var env []string
	for _, v := range os.Environ() {
		if !strings.HasPrefix(v, "ENGINE_") && !strings.HasPrefix(v, "XDG_DATA_HOME=") && !strings.HasPrefix(v, "HOME=") {
			env = append(env, v)
		}
	}
	return append(env, "HOME="+home)
}
