package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
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
