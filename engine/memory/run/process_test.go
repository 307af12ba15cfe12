package run

import (
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
)

// TestHelperProcess is not a test: run as a subprocess by the liveness
// tests, it blocks until its stdin closes.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("RUN_HELPER_PROCESS") != "1" {
		t.Skip("helper process")
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// startHelper starts a real process and returns it with its identity.
func startHelper(t *testing.T) (*exec.Cmd, Owner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "RUN_HELPER_PROCESS=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	h, _ := os.Hostname()
	o := Owner{PID: cmd.Process.Pid, Host: h}
	if st, ok := procStart(o.PID); ok {
		o.Start = bootID() + ":" + st
	}
	return cmd, o
}

func TestSelfIsAlive(t *testing.T) {
	me := Self()
	if me.PID != os.Getpid() || me.Host == "" {
		t.Fatalf("Self() = %+v", me)
	}
	if !ProcessAlive(me) {
		t.Fatal("this process is not alive")
	}
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		if me.Start == "" {
			t.Fatal("Self() has no start identity on a system with /proc")
		}
		// The same pid with another start: a later process reusing the pid.
		reused := me
		reused.Start = bootID() + ":1"
		if ProcessAlive(reused) {
			t.Fatal("a pid held by a process with another start time is taken as the run's")
		}
		rebooted := me
		rebooted.Start = "another-boot:" + strings.SplitN(me.Start, ":", 2)[1]
		if ProcessAlive(rebooted) {
			t.Fatal("a process from another boot is taken as alive")
		}
	}
	elsewhere := Owner{PID: 1 << 30, Host: me.Host + "-other"}
	if !ProcessAlive(elsewhere) {
		t.Fatal("a process on another host cannot be checked and must count as alive")
	}
}

// A run whose process is SIGKILLed shows as crashed: in Get, in List, with
// the crashed and running filters. Nothing is written: the stored run is
// still running, so it can still be completed by hand, and it resumes.
func TestKilledRunShowsCrashed(t *testing.T) {
	ctx := context.Background()
	s, c, _ := newStore(t)
	cmd, owner := startHelper(t)
	if _, err := s.Start(ctx, Start{RunID: "victim", Goal: "g", StartURL: "https://shop.example.com/", Owner: &owner}); err != nil {
		t.Fatal(err)
	}
	c.tick(time.Second)
	if _, err := s.Start(ctx, Start{RunID: "orchestrated", Goal: "g", Domain: "shop.example.com"}); err != nil {
		t.Fatal(err)
	}
	c.tick(time.Second)
	me := Self()
	if _, err := s.Start(ctx, Start{RunID: "mine", Goal: "g", Domain: "shop.example.com", Owner: &me}); err != nil {
		t.Fatal(err)
	}
	m, err := s.Get(ctx, "victim")
	if err != nil || m.Status != Running {
		t.Fatalf("while its process lives: %v %+v", err, m)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// A zombie (killed, not yet reaped) is gone too: the kill lands
	// asynchronously, so poll for it.
	for deadline := time.Now().Add(60 * time.Second); ; {
		m, err := s.Get(ctx, "victim")
		if err != nil {
			t.Fatal(err)
		}
		if m.Status == Crashed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("killed, unreaped: still %s after 60 s", m.Status)
		}
		runtime.Gosched()
	}
	_ = cmd.Wait()
	m, err = s.Get(ctx, "victim")
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != Crashed || !strings.Contains(m.Reason, "crashed: process") || m.Owner.PID != owner.PID {
		t.Fatalf("after SIGKILL: %+v", m)
	}
	crashed, err := s.List(ctx, Filter{Status: Crashed})
	if err != nil {
		t.Fatal(err)
	}
	running, err := s.List(ctx, Filter{Status: Running})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := s.List(ctx, Filter{Domain: "example.com"})
	if ids(crashed) != "victim" || ids(running) != "mine,orchestrated" || len(all) != 3 || all[2].Status != Crashed {
		t.Fatalf("crashed %q, running %q, all %+v", ids(crashed), ids(running), all)
	}
	sc, err := s.Resume(ctx, "victim", "")
	if err != nil || sc.ParentRunID != "victim" || sc.StartURL != "https://shop.example.com/" {
		t.Fatalf("resume of a crashed run: %+v %v", sc, err)
	}
	done, err := s.Complete(ctx, "victim", Completion{Reason: "crashed"})
	if err != nil || done.Status != Failed {
		t.Fatalf("completing a crashed run by hand: %+v %v", done, err)
	}
	if _, err := ParseStatus("crashed"); err != nil {
		t.Fatal(err)
	}
	bad := Manifest{RunID: "x", Goal: "g", Domain: "x.com", Status: Crashed, StartedAt: t0}
	if _, err := s.Prepare([]Manifest{bad}); !engine.IsInvalid(err) {
		t.Fatalf("importing a stored crashed status = %v", err)
	}
}

func TestHeartbeat(t *testing.T) {
	ctx := context.Background()
	s, c, _ := newStore(t)
	m, _ := s.Start(ctx, Start{RunID: "r", Goal: "g", Domain: "x.com"})
	if !m.HeartbeatAt.Equal(t0) {
		t.Fatalf("heartbeat at start = %v", m.HeartbeatAt)
	}
	c.tick(time.Minute)
	m, _ = s.Update(ctx, "r", Progress{})
	if !m.HeartbeatAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("heartbeat after update = %v", m.HeartbeatAt)
	}
}
