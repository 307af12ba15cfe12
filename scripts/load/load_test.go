//go:build linux

package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestKillsLoseNoAcknowledgedWrite runs a small load against a real
// engine serve, built here, killed twice with SIGKILL mid-load: every
// write a client was told was stored is there afterwards, and no request
// got a 5xx answer.
func TestKillsLoseNoAcknowledgedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds engine and runs a load: not in -short")
	}
	bin := t.TempDir()
	for _, c := range []string{"engine", "engine-agent"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, c), "../../cmd/"+c).CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", c, err, out)
		}
	}
	r, err := run(config{engine: filepath.Join(bin, "engine"), lessons: 500, clients: 8, requests: 2000, kills: 2, writes: 50, recalls: 30})
	if err != nil {
		t.Fatal(err)
	}
	r.print()
	if r.restarts != 2 {
		t.Errorf("the server was started again %d times, want 2", r.restarts)
	}
	if r.acked == 0 || r.lost != 0 || r.server5xx != 0 || r.other4xx != 0 {
		t.Errorf("acknowledged %d writes, %d missing; %d 5xx, %d 4xx (%s)", r.acked, r.lost, r.server5xx, r.other4xx, r.firstErr)
	}
}
