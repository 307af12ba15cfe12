package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/engine-dev/engine/kv/etcd/etcdtest"
)

// etcdCmd is engineCmd with memory in the shared store at store.
func etcdCmd(t *testing.T, dataDir, store string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := engineCmd(t, dataDir, args...)
	cmd.Env = append(cmd.Env, "ENGINE_STORE="+store)
	return cmd
}

// output runs cmd and returns its output, failing the test when it fails.
func output(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return string(out)
}

func etcdURL(endpoints []string) string {
	return "etcd://" + strings.TrimPrefix(endpoints[0], "http://")
}

// Two machines' engines on one etcd: two `engine serve` processes, each on
// its own data dir, share the memory. A lesson and a fact recorded through
// one are recalled through the other although the other's per-site caches
// were warm: once b's watch on the site's generation token delivers a's
// commit (bounded staleness, milliseconds on loopback), or at once where
// the token is still read in the recall's snapshot. b is asked again until
// it answers or the deadline passes; the lag is logged.
func TestTwoEnginesShareEtcd(t *testing.T) {
	store := etcdURL(etcdtest.Start(t))
	a, b := t.TempDir(), t.TempDir()
	startServeCmd(t, etcdCmd(t, a, store, "serve"))
	startServeCmd(t, etcdCmd(t, b, store, "serve"))

	// Warm b's caches for the site: nothing site-specific yet.
	if out := output(t, etcdCmd(t, b, store, "recall", "domain", "shop.example")); strings.Contains(out, "gift wrap") {
		t.Fatalf("b recalled a lesson before any was recorded:\n%s", out)
	}
	if out := output(t, etcdCmd(t, b, store, "query", "facts", "--domain", "shop.example")); strings.Contains(out, "shadow DOM") {
		t.Fatalf("b knew a fact before any was observed:\n%s", out)
	}

	output(t, etcdCmd(t, a, store, "lessons", "add", "--lesson", "Untick gift wrap before paying.", "--category", "site_specific", "--domain", "shop.example"))
	output(t, etcdCmd(t, a, store, "facts", "observe", "--domain", "www.shop.example", "--type", "quirk", "--key", "modals", "--value", "uses shadow DOM for modals"))

	eventually(t, "b recalls the lesson a recorded", "Untick gift wrap before paying.", func() *exec.Cmd {
		return etcdCmd(t, b, store, "recall", "domain", "shop.example")
	})
	eventually(t, "b knows the fact a observed", "uses shadow DOM for modals", func() *exec.Cmd {
		return etcdCmd(t, b, store, "query", "facts", "--domain", "shop.example")
	})
	for _, dir := range []string{a, b} {
		if _, err := os.Stat(filepath.Join(dir, "db")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a database in the data dir %s: %v", dir, err)
		}
	}
	// A third process with no server on its data dir opens etcd itself:
	// the small engine binary, which hands a command on etcd to
	// engine-agent (found on PATH here).
	bin := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(bin, "engine-agent")); err != nil {
		t.Fatal(err)
	}
	small := etcdCmd(t, t.TempDir(), store, "recall", "domain", "shop.example")
	small.Args[0] = "engine"
	for i, v := range small.Env {
		if strings.HasPrefix(v, "PATH=") {
			small.Env[i] = "PATH=" + bin + string(filepath.ListSeparator) + strings.TrimPrefix(v, "PATH=")
		}
	}
	if out := output(t, small); !strings.Contains(out, "Untick gift wrap before paying.") {
		t.Errorf("engine (handing over to engine-agent) did not recall the lesson:\n%s", out)
	}
	// A store that is not etcd is bad input.
	out, err := engineCmd(t, t.TempDir(), "--store", "redis://h:1", "recall", "tier1").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), `store "redis://h:1": want etcd://`) {
		t.Errorf("--store redis://: %v\n%s", err, out)
	}
}

// eventually runs the command cmd makes until its output contains want,
// failing after 20 s (a watch event takes milliseconds; the deadline is for
// a loaded machine), and logs how long it took.
func eventually(t *testing.T, what, want string, cmd func() *exec.Cmd) {
	t.Helper()
	start := time.Now()
	for tries := 1; ; tries++ {
		out := output(t, cmd())
		if strings.Contains(out, want) {
			t.Logf("%s: after %v (%d tries)", what, time.Since(start), tries)
			return
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("%s: not within 20 s (%d tries):\n%s", what, tries, out)
		}
	}
}

// With etcd down, a write fails with an error naming the store and exit
// status 1; nothing falls back to the data dir.
func TestEtcdDownFailsClearly(t *testing.T) {
	srv := etcdtest.StartServer(t)
	store := etcdURL(srv.Endpoints)
	dir := t.TempDir()
	output(t, etcdCmd(t, dir, store, "lessons", "add", "--lesson", "Untick gift wrap before paying.", "--category", "site_specific", "--domain", "shop.example"))
	srv.Stop()
	out, err := etcdCmd(t, dir, store, "lessons", "add", "--lesson", "Close the chat bubble first.", "--category", "site_specific", "--domain", "shop.example").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "etcd ["+srv.Endpoints[0]+"]") || !strings.Contains(string(out), "is etcd running and reachable?") {
		t.Errorf("the error does not name the store:\n%s", out)
	}
	t.Logf("%s", out)
}

// onEtcd matches the scripts TestScriptsOnEtcd runs: the memory commands.
// The agent's, the plugins', doctor's (which inspects the data dir's
// database) and the binaries' scripts are about what runs, not where
// memory is kept.
var onEtcd = regexp.MustCompile(`^(lessons|knowledge|runs|exit_status|namespaces)_?.*\.txtar$`)

// notOnEtcd are the memory scripts that cannot run on one shared store,
// with why.
var notOnEtcd = map[string]string{
	"runs_archive.txtar": "imports into a second data dir as an empty memory; on etcd every data dir shares one memory",
}

// TestScriptsOnEtcd runs the memory scripts with memory in etcd (one
// server per script, ENGINE_STORE): output, exit codes and --events files
// must be the same as on the data dir's own database.
func TestScriptsOnEtcd(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(scriptDir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	p := scriptParams()
	for _, f := range files {
		if onEtcd.MatchString(filepath.Base(f)) && notOnEtcd[filepath.Base(f)] == "" {
			p.Files = append(p.Files, f)
		}
	}
	p.Dir = ""
	p.UpdateScripts = false
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		if err := setup(env); err != nil {
			return err
		}
		// Beside the work dir, so the script's files do not hold it;
		// removed after the server stops (its WAL preallocates 64 MB: a
		// run of every script left 1.7 GB in /tmp before).
		dir := filepath.Join(env.WorkDir, "..", filepath.Base(env.WorkDir)+"-etcd")
		srv, err := etcdtest.New(dir)
		if err != nil {
			return err
		}
		env.Defer(func() {
			srv.Stop()
			os.RemoveAll(dir)
		})
		env.Setenv("ENGINE_STORE", etcdURL(srv.Endpoints))
		return nil
	}
	testscript.Run(t, p)
}

// An import far past etcd's 128 operations per transaction lands whole:
// it is journaled (kv.Journal writes in batches the store splits) instead
// of failing as one transaction.
func TestImportOnEtcd(t *testing.T) {
	store := etcdURL(etcdtest.Start(t))
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "export.json")
	if err := os.WriteFile(file, exportOf(t, "bulk", 400), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", output(t, etcdCmd(t, dir, store, "import", file)))
	out := output(t, etcdCmd(t, t.TempDir(), store, "query", "lessons", "--json"))
	if n := strings.Count(out, `"lesson": "`); n < 400 {
		t.Errorf("%d lessons after importing 400", n)
	}
}
