package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/engine-dev/engine/cmd/internal/agentcmd"
	"github.com/engine-dev/engine/cmd/internal/cli"
)

// TestMain lets the test binary act as both binaries: scripts run `engine
// ...` and `engine-agent ...` as real subprocesses, and engine hands the
// agent commands to engine-agent as it does when installed (found on the
// script's PATH, where testscript puts both).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"engine":       func() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		"engine-agent": func() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, agentcmd.Commands)) },
	})
}

const scriptDir = "../../testdata/script"

func scriptParams() testscript.Params {
	return testscript.Params{
		Dir:           scriptDir,
		UpdateScripts: os.Getenv("ENGINE_UPDATE_SCRIPTS") == "1",
		Cmds:          map[string]func(ts *testscript.TestScript, neg bool, args []string){"serve": serveSite, "waitfor": waitFor, "exits": exitsCmd, "memserver": memserverCmd},
		Condition:     scriptCondition,
		Setup: func(env *testscript.Env) error {
			env.Setenv("ENGINE_DATA_DIR", env.WorkDir+"/data")
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Values[serverKey{}] = new(*scriptServer) // memserver's
			return nil
		},
	}
}

// TestScripts runs testdata/script/*.txtar: each reads like a user's
// terminal session. Set ENGINE_UPDATE_SCRIPTS=1 to rewrite expected output.
// The commands open the data dir themselves (embedded mode).
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams())
}

// notServed matches the scripts TestScriptsServed leaves out: doctor
// inspects the data dir itself (a server holding it is what it reports),
// demo keeps its memory in a data dir of its own, and ENGINE_HISTORY_KEEP
// is read by whoever opens the data dir (a server started before the
// script set it keeps its own).
var notServed = regexp.MustCompile(`(?m)^\s*(!\s+|exits \d+ )?(exec )?engine .*\b(doctor|demo)\b|^env ENGINE_HISTORY_KEEP=`)

// TestScriptsServed runs the same scripts with `engine serve` holding each
// script's data dir, so every command goes through the server's socket:
// output, exit codes and --events files must be the same as embedded.
func TestScriptsServed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(scriptDir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	p := scriptParams()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !notServed.Match(b) {
			p.Files = append(p.Files, f)
		}
	}
	if len(p.Files) == 0 {
		t.Fatal("no script runs through the server")
	}
	p.Dir = ""
	p.UpdateScripts = false
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		if err := setup(env); err != nil {
			return err
		}
		return startServer(env)
	}
	testscript.Run(t, p)
}

// startServer starts `engine serve` on the script's data dir, waits until
// it answers on its socket, and stops it (SIGTERM, then waits for it) when
// the script ends; a server that did not stop cleanly fails the script.
func startServer(env *testscript.Env) error {
	dataDir := env.Getenv("ENGINE_DATA_DIR")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(env.WorkDir, "..", filepath.Base(env.WorkDir)+"-serve.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command("engine", "serve", "--allow-clock")
	cmd.Env = env.Vars
	cmd.Dir = env.WorkDir
	cmd.Stdout, cmd.Stderr = log, log
	path, err := lookPath(env, "engine")
	if err != nil {
		return err
	}
	cmd.Path = path
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); log.Close() }()
	env.Defer(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				b, _ := os.ReadFile(log.Name())
				env.T().Fatal(fmt.Sprintf("engine serve: %v\n%s", err, b))
			}
			// The log sits beside the work dir, which testscript
			// removes: remove it too, or every run leaves one.
			os.Remove(log.Name())
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			env.T().Fatal("engine serve did not stop within 60s of SIGTERM")
		}
	})
	sock := filepath.Join(dataDir, "engine.sock")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if fi, err := os.Stat(sock); err == nil && fi.Mode().Type() == os.ModeSocket {
			return nil
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(log.Name())
			return fmt.Errorf("engine serve exited before serving: %v\n%s", err, b)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("engine serve did not create %s within 60s", sock)
		}
	}
}

// lookPath finds prog on the script's PATH (testscript puts the test
// binary there under the name engine).
func lookPath(env *testscript.Env, prog string) (string, error) {
	for _, dir := range filepath.SplitList(env.Getenv("PATH")) {
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not on the script's PATH", prog)
}
