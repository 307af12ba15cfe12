package agentcmd

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/cmd/internal/cli"
	"github.com/engine-dev/engine/engine/agent/eval"
)

// progressRuns tells a progress function about four runs: the first in
// the log, the others made, each taking 10 s on the clock.
func progressRuns(show func(eval.Progress), clock *time.Time) {
	cs := eval.Case{Name: "shop.search"}
	runs := []eval.Run{
		{Case: cs, Arm: eval.NoMemory, Repeat: 1, Index: 1},
		{Case: cs, Arm: eval.Cold, Repeat: 1, Index: 1},
		{Case: cs, Arm: eval.Warm, Repeat: 1, Index: 1, Changed: true},
		{Case: cs, Arm: eval.Replay, Repeat: 1, Index: 1, Changed: true},
	}
	o := &eval.Outcome{Status: "completed", Steps: 5, Errors: 1, LLMCalls: 5}
	show(eval.Progress{Done: 1, Total: 4, Run: runs[0], Outcome: o, Logged: true})
	for i, r := range runs[1:] {
		show(eval.Progress{Done: i + 1, Total: 4, Run: r})
		*clock = clock.Add(10 * time.Second)
		show(eval.Progress{Done: i + 2, Total: 4, Run: r, Outcome: o})
	}
}

// On a terminal the progress is a bar with done/total and an ETA from the
// time per run made; elsewhere a plain line a run, with no bar and no
// carriage return.
func TestEvalProgress(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }

	var tty bytes.Buffer
	progressRuns(evalProgress(&tty, true, now), &clock)
	out := tty.String()
	for _, want := range []string{
		"\r[#####...............] 1/4 shop.search r1 no-memory",
		"in the log: completed (5 steps, 1 error, 5 LLM calls)\n",
		// The first run made: no time per run yet.
		"\r[#####...............] 1/4 shop.search r1 cold" + strings.Repeat(" ", 40-len("shop.search r1 cold")) + " ETA - ",
		"\r[##########..........] 2/4 shop.search r1 cold",
		// One run made in 10 s, two left.
		"\r[##########..........] 2/4 shop.search r1 warm-1@changed" + strings.Repeat(" ", 40-len("shop.search r1 warm-1@changed")) + " ETA 20s ",
		// Two runs made in 20 s, one left.
		"3/4 shop.search r1 replay@changed" + strings.Repeat(" ", 40-len("shop.search r1 replay@changed")) + " ETA 10s ",
		"\r[####################] 4/4 shop.search r1 replay@changed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal progress lacks %q:\n%q", want, out)
		}
	}

	var plain bytes.Buffer
	progressRuns(evalProgress(&plain, false, now), &clock)
	want := "run 1/4 shop.search r1 no-memory: in the log: completed (5 steps, 1 error, 5 LLM calls)\n" +
		"run 2/4 shop.search r1 cold: completed (5 steps, 1 error, 5 LLM calls)\n" +
		"run 3/4 shop.search r1 warm-1@changed: completed (5 steps, 1 error, 5 LLM calls)\n" +
		"run 4/4 shop.search r1 replay@changed: completed (5 steps, 1 error, 5 LLM calls)\n"
	if plain.String() != want {
		t.Errorf("plain progress:\n%q\nwant\n%q", plain.String(), want)
	}
}

// A terminal is a character device: a pipe or a regular file is not, so
// output redirected to a file or a CI log gets the plain lines.
func TestIsTerminalDecides(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if cli.IsTerminal(f) || cli.IsTerminal(w) || cli.IsTerminal(&bytes.Buffer{}) {
		t.Error("a file, a pipe or a buffer taken for a terminal")
	}
}
