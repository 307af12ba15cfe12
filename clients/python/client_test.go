// Package python_test runs the Python client's unittest suite against a
// real engine serve: the engine binary built from this module, over its
// unix socket and its TCP listener with the token.
package python_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestPythonClient builds cmd/engine and cmd/engine-agent (which serves),
// or takes ENGINE_BIN (an engine with its engine-agent beside it), starts engine
// serve on a fresh data dir with a TCP listener, waits for the line that
// says it serves, and runs python3 -m unittest; a failing or missing
// python3 fails the test (scripts/install-deps.sh installs it).
func TestPythonClient(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not on PATH: scripts/install-deps.sh test installs it")
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
	// The server runs as a plain `engine serve` would on a fresh machine:
	// no ENGINE_* variable and no --data-dir, so it holds the default data
	// dir under its HOME, which the client finds with no address.
	home := t.TempDir()
	dir := filepath.Join(home, ".local", "share", "engine")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "serve", "--listen", "127.0.0.1:0")
	srv.Env = append(plainEnv(home), "ENGINE_LOG_LEVEL=error")
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
	}()
	serving := regexp.MustCompile(`^engine: serving .* on (\S+) and (http://\S+) \(pid`)
	lines := bufio.NewScanner(stderr)
	var sock, url string
	var said []string
	for lines.Scan() {
		said = append(said, lines.Text())
		if m := serving.FindStringSubmatch(lines.Text()); m != nil {
			sock, url = m[1], m[2]
			break
		}
	}
	if url == "" {
		t.Fatalf("engine serve did not say it serves:\n%s", strings.Join(said, "\n"))
	}
	go func() { // the server's later lines, read so it never blocks on them
		for lines.Scan() {
		}
	}()
	tok, err := os.ReadFile(filepath.Join(dir, "serve.token"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, py, "-m", "unittest", "discover", "-s", "tests", "-t", ".", "-v")
	cmd.Env = append(os.Environ(), "ENGINE_TEST_SOCKET="+sock, "ENGINE_TEST_URL="+url,
		"ENGINE_TEST_TOKEN="+strings.TrimSpace(string(tok)), "ENGINE_TEST_HOME="+home, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	t.Logf("python3 -m unittest:\n%s", out)
	if err != nil {
		t.Fatalf("the Python client's tests failed: %v", err)
	}
}

// plainEnv is this process's environment without the ENGINE_* variables
// and XDG_DATA_HOME, with HOME set to home.
func plainEnv(home string) []string {
	var env []string
	for _, v := range os.Environ() {
		if !strings.HasPrefix(v, "ENGINE_") && !strings.HasPrefix(v, "XDG_DATA_HOME=") && !strings.HasPrefix(v, "HOME=") {
			env = append(env, v)
		}
	}
	return append(env, "HOME="+home)
}

// TestPipInstallOffline installs the package with pip and no package
// index, as on a machine without PyPI: the build backend is in the tree
// and needs nothing downloaded (pip still builds in isolation). The wheel
// holds the package and its py.typed, and the package imports from where
// it was installed.
func TestPipInstallOffline(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not on PATH: scripts/install-deps.sh test installs it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, py, "-m", "pip", "--version").CombinedOutput(); err != nil {
		msg := fmt.Sprintf("python3 -m pip: %v\n%s", err, out)
		if os.Getenv("CI") != "true" {
			t.Skip(msg) // a Python without pip (Debian's python3 without python3-pip)
		}
		t.Fatal(msg)
	}
	target := filepath.Join(t.TempDir(), "site")
	env := append(plainEnv(t.TempDir()), "PIP_NO_INDEX=1", "PIP_CONFIG_FILE="+os.DevNull, "PIP_DISABLE_PIP_VERSION_CHECK=1",
		"PIP_NO_CACHE_DIR=1", "PYTHONDONTWRITEBYTECODE=1")
	pip := exec.CommandContext(ctx, py, "-m", "pip", "install", "--target", target, ".")
	pip.Env = env
	if out, err := pip.CombinedOutput(); err != nil {
		t.Fatalf("pip install --no-index ./clients/python: %v\n%s", err, out)
	}
	imp := exec.CommandContext(ctx, py, "-c",
		"import engine_memory, os; print(engine_memory.__file__); print(os.path.exists(os.path.join(os.path.dirname(engine_memory.__file__), 'py.typed'))); print(engine_memory.Client, engine_memory.default_data_dir)")
	imp.Env, imp.Dir = append(env, "PYTHONPATH="+target), t.TempDir() // not this directory: the installed copy
	out, err := imp.CombinedOutput()
	if err != nil {
		t.Fatalf("import engine_memory from the installed copy: %v\n%s", err, out)
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], target+string(filepath.Separator)) || lines[1] != "True" {
		t.Fatalf("engine_memory is not the installed package with its py.typed:\n%s", out)
	}
}
