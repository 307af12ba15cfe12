// Package python_test runs the Python client's unittest suite against a
// real engine serve: the engine binary built from this module, over its
// unix socket and its TCP listener with the token.
package python_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/clients/internal/servetest"
)

// TestPythonClient starts engine serve as a user would on a fresh machine
// (servetest.Start: the engine built from this module, or ENGINE_BIN) and
// runs python3 -m unittest against it; a failing or missing python3 fails
// the test (scripts/install-deps.sh installs it).
func TestPythonClient(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is not on PATH: scripts/install-deps.sh test installs it")
	}
	srv := servetest.Start(t, servetest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-m", "unittest", "discover", "-s", "tests", "-t", ".", "-v")
	cmd.Env = append(append(os.Environ(), srv.Env...), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	t.Logf("python3 -m unittest:\n%s", out)
	if err != nil {
		t.Fatalf("the Python client's tests failed: %v", err)
	}
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
	env := append(servetest.PlainEnv(t.TempDir()), "PIP_NO_INDEX=1", "PIP_CONFIG_FILE="+os.DevNull, "PIP_DISABLE_PIP_VERSION_CHECK=1",
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
