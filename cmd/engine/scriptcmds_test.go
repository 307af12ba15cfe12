package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/engine-dev/engine/engine/agent/demosite"
	chromedpbrowser "github.com/engine-dev/engine/plugins/chromedp"
)

// serveSite is the scripts' `serve SITE [VAR]` command: it serves a fixture
// site on 127.0.0.1 for the rest of the script and sets $VAR (default SITE)
// to its URL (with a trailing slash). SITE is demo (the bundled demo shop),
// demo-changed (the shop after a change: the first padel racket renamed),
// demo-redesign (renamed too, the search button says Find and the cookie
// banner is on the results page), or a directory of the script's files.
func serveSite(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: serve demo|demo-changed|demo-redesign|DIR [VAR]")
	}
	var h http.Handler
	switch args[0] {
	case "demo":
		h = demosite.Handler(demosite.Options{})
	case "demo-changed":
		h = demosite.Handler(demosite.Options{Changed: true})
	case "demo-redesign":
		h = demosite.Handler(demosite.Options{Redesign: true})
	default:
		h = http.FileServer(http.Dir(ts.MkAbs(args[0])))
	}
	srv := httptest.NewServer(h)
	ts.Defer(srv.Close)
	name := "SITE"
	if len(args) == 2 {
		name = args[1]
	}
	ts.Setenv(name, srv.URL+"/")
}

// scriptCondition adds [chromium]: a chromium the chromedp plugin can use.
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "chromium":
		_, err := chromedpbrowser.FindChromium(os.Getenv("ENGINE_CHROMIUM"))
		return err == nil, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// waitFor is the scripts' `waitfor FILE REGEXP` command: it waits until FILE
// exists and its contents match REGEXP, so a script waits on what a
// background process did instead of sleeping for a guessed time. The bound
// is generous (a loaded machine is slow, not broken); hitting it fails the
// script with the file's last contents.
func waitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfor FILE REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(waitForBound)
	for {
		data, err := os.ReadFile(path)
		if err == nil && re.Match(data) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfor: %s did not match %q within %v (last read: %q, %v)", args[0], args[1], waitForBound, data, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitForBound is how long waitfor waits.
const waitForBound = 90 * time.Second

// exitsCmd is the scripts' `exits CODE PROG [ARGS...]`: it runs PROG like
// exec and fails unless PROG's exit status is CODE, so scripts can pin the
// exit-status Table (`! exec` only says "not zero"). stdout and stderr are
// kept for the assertions that follow.
func exitsCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: code %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// scriptServer is the `engine serve` a script started with memserver.
type scriptServer struct {
	cmd    *exec.Cmd
	log    string        // its stderr
	exited chan struct{} // closed once it ended
	err    error         // how it ended, set before exited closes
}

// serverKey is the Env.Values key of a script's *scriptServer slot.
type serverKey struct{}

// memserverCmd is the scripts' `memserver start [ARGS...]`, `memserver
// signal STOP|CONT` and `memserver stop`. start runs `engine serve ARGS` on
// $ENGINE_DATA_DIR (stderr in $WORK/serve.log) and waits until its socket
// is there; signal stops or continues it (a server that does not answer);
// stop sends SIGTERM and waits for a clean exit. A server still running
// when the script ends is continued, terminated and waited for.
func memserverCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: memserver start [ARGS...] | signal STOP|CONT | stop")
	}
	slot := ts.Value(serverKey{}).(**scriptServer)
	s := *slot
	if args[0] != "start" && s == nil {
		ts.Fatalf("memserver %s: no server started", args[0])
	}
	switch args[0] {
	case "start":
		if s != nil {
			ts.Fatalf("memserver start: one is running")
		}
		*slot = startScriptServer(ts, args[1:])
	case "signal":
		sigs := map[string]syscall.Signal{"STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT}
		if len(args) != 2 || sigs[args[1]] == 0 {
			ts.Fatalf("usage: memserver signal STOP|CONT")
		}
		ts.Check(s.cmd.Process.Signal(sigs[args[1]]))
	case "stop":
		if err := s.stop(); err != nil {
			ts.Fatalf("engine serve: %v\n%s", err, readFile(s.log))
		}
		*slot = nil
	default:
		ts.Fatalf("usage: memserver start [ARGS...] | signal STOP|CONT | stop")
	}
}

func startScriptServer(ts *testscript.TestScript, args []string) *scriptServer {
	log := ts.MkAbs("serve.log")
	f, err := os.Create(log)
	ts.Check(err)
	path := lookScriptPath(ts, "engine")
	if path == "" {
		ts.Fatalf("engine is not on the script's PATH")
	}
	s := &scriptServer{log: log, exited: make(chan struct{})}
	s.cmd = exec.Command(path, append([]string{"serve"}, args...)...)
	s.cmd.Dir = ts.Getenv("WORK")
	s.cmd.Stdout, s.cmd.Stderr = f, f
	for _, k := range []string{"PATH", "HOME", "ENGINE_DATA_DIR", "ENGINE_NOW", "TMPDIR"} {
		s.cmd.Env = append(s.cmd.Env, k+"="+ts.Getenv(k))
	}
	ts.Check(s.cmd.Start())
	go func() { s.err = s.cmd.Wait(); f.Close(); close(s.exited) }()
	ts.Defer(func() {
		if err := s.stop(); err != nil {
			ts.Logf("engine serve: %v\n%s", err, readFile(log))
		}
	})
	sock := filepath.Join(ts.Getenv("ENGINE_DATA_DIR"), "engine.sock")
	deadline := time.After(waitForBound)
	for {
		if fi, err := os.Lstat(sock); err == nil && fi.Mode().Type() == os.ModeSocket {
			return s
		}
		select {
		case <-s.exited:
			ts.Fatalf("engine serve exited before serving: %v\n%s", s.err, readFile(log))
		case <-deadline:
			ts.Fatalf("engine serve made no socket within %v\n%s", waitForBound, readFile(log))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// stop continues the server (it may be stopped), sends SIGTERM and waits
// for it to end, killing it after waitForBound; it returns how it ended.
func (s *scriptServer) stop() error {
	select {
	case <-s.exited:
		return s.err
	default:
	}
	s.cmd.Process.Signal(syscall.SIGCONT)
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return s.err
	case <-time.After(waitForBound):
		s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("did not stop within %v of SIGTERM; killed", waitForBound)
	}
}

// lookScriptPath finds prog on the script's PATH ("" when it is not there).
func lookScriptPath(ts *testscript.TestScript, prog string) string {
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return ""
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
