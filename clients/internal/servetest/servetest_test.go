package servetest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a testing.TB whose failures are recorded, not reported,
// and whose cleanups run when the test says, so that Start's own failures
// can be checked.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	fatal    string
	errs     []string
	cleanups []func()
}

func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.fatal = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// start runs Start with ENGINE_BIN set to a shell script and runs its
// cleanups: what it returned, and its fatal and other failures.
func start(t *testing.T, script string, opts Options) (*Server, *recorder) {
	bin := filepath.Join(t.TempDir(), "engine")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ENGINE_BIN", bin)
	r := &recorder{TB: t}
	var s *Server
	done := make(chan struct{})
	go func() {
		defer close(done)
		s = Start(r, opts)
	}()
	<-done
	for _, f := range slices.Backward(r.cleanups) {
		f()
	}
	return s, r
}

// serves is a script that prints the serving line as engine serve does,
// with its token and environment in its data dir.
const serves = `dir="$HOME/.local/share/engine"
mkdir -p "$dir"
echo " tok-1 " > "$dir/serve.token"
env > "$dir/env"
echo "engine: data dir $dir" >&2
echo "engine: serving memory on $dir/engine.sock and http://127.0.0.1:4711 (pid $$)" >&2
`

// A server that says it serves is reached through what it said and the
// token it wrote; it runs with HOME and ENGINE_LOG_LEVEL=error as its only
// ENGINE_* variable, and the interrupt at the end stops it.
func TestStart(t *testing.T) {
	t.Setenv("ENGINE_DATA_DIR", "/elsewhere")
	s, r := start(t, serves+"exec sleep 1000\n", Options{})
	if r.fatal != "" || len(r.errs) > 0 {
		t.Fatalf("fatal %q, errors %q", r.fatal, r.errs)
	}
	dir := filepath.Join(s.Home, ".local", "share", "engine")
	if s.Dir != dir || s.Sock != dir+"/engine.sock" || s.URL != "http://127.0.0.1:4711" || s.Token != "tok-1" {
		t.Fatalf("%+v", s)
	}
	want := []string{"ENGINE_TEST_SOCKET=" + s.Sock, "ENGINE_TEST_URL=" + s.URL, "ENGINE_TEST_TOKEN=tok-1", "ENGINE_TEST_HOME=" + s.Home}
	if !slices.Equal(s.Env, want) {
		t.Fatalf("Env %q, want %q", s.Env, want)
	}
	env, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	var engineVars []string
	for _, v := range strings.Split(string(env), "\n") {
		if strings.HasPrefix(v, "ENGINE_") {
			engineVars = append(engineVars, v)
		}
	}
	if !slices.Equal(engineVars, []string{"ENGINE_LOG_LEVEL=error"}) || !strings.Contains(string(env), "\nHOME="+s.Home+"\n") {
		t.Fatalf("the server's environment:\n%s", env)
	}
}

// A server that exits, or keeps quiet past Wait, without saying it serves
// fails the test with what it printed.
func TestStartNotServing(t *testing.T) {
	_, r := start(t, "echo 'engine: open data dir: locked' >&2\nexit 1\n", Options{})
	if r.fatal != "engine serve did not say it serves:\nengine: open data dir: locked" || len(r.errs) > 0 {
		t.Fatalf("fatal %q, errors %q", r.fatal, r.errs)
	}
	_, r = start(t, "echo 'engine: opening' >&2\nexec sleep 1000\n", Options{Wait: time.Second})
	if r.fatal != "engine serve did not say it serves within 1s:\nengine: opening" || len(r.errs) > 0 {
		t.Fatalf("fatal %q, errors %q", r.fatal, r.errs)
	}
}

// A server that ignores the interrupt is killed once Wait passes, and
// the test fails saying so rather than hang.
func TestStopIgnoredInterrupt(t *testing.T) {
	_, r := start(t, "trap '' INT\n"+serves+"exec sleep 1000\n", Options{Wait: time.Second})
	if r.fatal != "" || !slices.Equal(r.errs, []string{"engine serve did not stop within 1s of an interrupt; killed it"}) {
		t.Fatalf("fatal %q, errors %q", r.fatal, r.errs)
	}
}
