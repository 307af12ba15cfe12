package main

import (
	"os"
	"regexp"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// waitFileDeadline bounds waitfile: generous, for a loaded machine.
const waitFileDeadline = 60 * time.Second

// waitFile is the scripts' `waitfile FILE REGEXP` command: it waits until
// FILE exists and matches REGEXP (an observable event, such as a run's
// manifest.json reaching a turn), polling, and fails after 60 s.
func waitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfile FILE REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	path := ts.MkAbs(args[0])
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(waitFileDeadline)
	for {
		if b, err := os.ReadFile(path); err == nil && re.Match(b) {
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(path)
			ts.Fatalf("waitfile: %s does not match %q after %v; it holds:\n%s", args[0], args[1], waitFileDeadline, b)
		}
		<-tick.C
	}
}
