package lesson

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv/etcd"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
)

// The environment a recorder process reads (TestRecorderProcess): the
// cluster's endpoints, the lesson ids it uses (comma-separated) and how
// many uses it records.
const (
	envRecorderEndpoints = "ENGINE_TEST_RECORDER_ENDPOINTS"
	envRecorderLessons   = "ENGINE_TEST_RECORDER_LESSONS"
	envRecorderUses      = "ENGINE_TEST_RECORDER_USES"
)

// faultHost is the host every recorder uses the lessons on (their domain,
// so a use widens nothing and promotes nothing).
const faultHost = "shop.example"

// TestRecorderProcess is the body of one recorder process started by
// TestLeaderKilledProcesses (this test binary run again with the
// environment above); run directly it skips. It opens the lesson store on
// etcd and counts uses of the lessons in turn, printing "ack ID" for each
// acknowledged use and "fail ID: ERROR" for each that failed (its answer
// lost: it may or may not have landed), one line each, unbuffered.
func TestRecorderProcess(t *testing.T) {
	eps := os.Getenv(envRecorderEndpoints)
	if eps == "" {
		t.Skip("a recorder process of TestLeaderKilledProcesses; runs only as its child")
	}
	ids := strings.Split(os.Getenv(envRecorderLessons), ",")
	uses, err := strconv.Atoi(os.Getenv(envRecorderUses))
	if err != nil {
		t.Fatalf("%s: %v", envRecorderUses, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db, err := etcd.Open(ctx, etcd.Options{Endpoints: strings.Split(eps, ","), RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := New(db, Options{Provenance: engine.Provenance{Source: engine.SourceAPI, Run: fmt.Sprintf("recorder-%d", os.Getpid())}})
	for i := range uses {
		id := ids[i%len(ids)]
		if _, err := s.Use(ctx, id, faultHost); err != nil {
			fmt.Fprintf(os.Stdout, "fail %s: %v\n", id, strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		fmt.Fprintf(os.Stdout, "ack %s\n", id)
	}
}

// recorderEvent is one line of a recorder's output, or its exit (line "").
type recorderEvent struct {
	proc int
	line string
	err  error // the process's exit, when line is ""
}

// TestLeaderKilledProcesses: 4 recorder processes (this test binary run
// again) count uses of 5 lessons through the lesson store on a 3-member
// etcd cluster; the leader is stopped once a third of the uses are
// acknowledged. Afterwards each lesson's use count lies between its
// acknowledged uses and those plus the failed ones (exactly the
// acknowledged when none failed: no acknowledged use lost, none counted
// twice), every other field is as seeded, and the lesson indexes agree
// with the records (Check).
func TestLeaderKilledProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-member etcd cluster and 4 processes")
	}
	const procs, each, lessons = 4, 60, 5
	c := etcdtest.StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	db, err := etcd.Open(ctx, etcd.Options{Endpoints: c.Endpoints})
	if err != nil {
		t.Fatal(err)
	}
	s := New(db, Options{Provenance: engine.Provenance{Source: engine.SourceManual}})
	seeded := map[string]*Lesson{}
	var ids []string
	for i := range lessons {
		l := Lesson{Lesson: fmt.Sprintf("wait for the cart badge %d before checkout", i), Category: SiteSpecific,
			FailedCommand: "click", ErrorPattern: fmt.Sprintf("element not interactable #%d", i), Domain: faultHost}
		got, _, err := s.Record(ctx, l, faultHost)
		if err != nil {
			t.Fatal(err)
		}
		seeded[got.ID] = got
		ids = append(ids, got.ID)
	}
	db.Close()

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan recorderEvent)
	stderr := make([]*bytes.Buffer, procs)
	for p := range procs {
		cmd := exec.Command(exe, "-test.run=^TestRecorderProcess$", "-test.count=1", "-test.timeout=4m")
		cmd.Env = append(os.Environ(),
			envRecorderEndpoints+"="+strings.Join(c.Endpoints, ","),
			envRecorderLessons+"="+strings.Join(ids, ","),
			envRecorderUses+"="+strconv.Itoa(each))
		stderr[p] = &bytes.Buffer{}
		cmd.Stderr = stderr[p]
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		t.Cleanup(func() { // a test that fails early still ends its processes
			select {
			case <-exited:
			default:
				cmd.Process.Kill()
				<-exited
			}
		})
		go func() {
			defer close(exited)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if line := sc.Text(); strings.HasPrefix(line, "ack ") || strings.HasPrefix(line, "fail ") {
					select {
					case events <- recorderEvent{proc: p, line: line}:
					case <-ctx.Done():
					}
				}
			}
			err := cmd.Wait()
			select {
			case events <- recorderEvent{proc: p, err: err}:
			case <-ctx.Done():
			}
		}()
	}

	acked := map[string]int{}
	failed := map[string]int{}
	nAcked, nFailed, running, leader := 0, 0, procs, -1
	for running > 0 {
		var ev recorderEvent
		select {
		case ev = <-events:
		case <-ctx.Done():
			t.Fatalf("recorders still running after %d acknowledged and %d failed uses: %v", nAcked, nFailed, ctx.Err())
		}
		switch {
		case ev.line == "":
			running--
			if ev.err != nil {
				t.Errorf("recorder %d: %v\n%s", ev.proc, ev.err, stderr[ev.proc])
			}
		case strings.HasPrefix(ev.line, "ack "):
			acked[strings.TrimPrefix(ev.line, "ack ")]++
			nAcked++
			if nAcked == procs*each/3 && leader < 0 {
				if leader, err = c.StopLeader(); err != nil {
					t.Fatal(err)
				}
				t.Logf("stopped the leader, member %d, after %d acknowledged uses", leader, nAcked)
			}
		default:
			id, _, _ := strings.Cut(strings.TrimPrefix(ev.line, "fail "), ":")
			failed[id]++
			nFailed++
			t.Logf("recorder %d: %s", ev.proc, ev.line)
		}
	}
	if leader < 0 {
		t.Fatalf("the leader was never stopped: %d acknowledged uses", nAcked)
	}

	var live []string
	for i, ep := range c.Endpoints {
		if i != leader {
			live = append(live, ep)
		}
	}
	db, err = etcd.Open(ctx, etcd.Options{Endpoints: live})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s = New(db, Options{})
	landed := 0
	for _, id := range ids {
		got, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		landed += got.UseCount
		if got.UseCount < acked[id] || got.UseCount > acked[id]+failed[id] {
			t.Errorf("lesson %s: use_count %d for %d acknowledged and %d failed uses", id, got.UseCount, acked[id], failed[id])
		}
		want := *seeded[id]
		want.UseCount = got.UseCount
		want.LastUsed = got.LastUsed
		want.TriggeredDomains = []string{faultHost}
		if got.UseCount >= 2 {
			want.Trust = Trusted
		}
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("lesson %s after the uses:\n got %+v\nwant %+v", id, *got, want)
		}
	}
	h, err := s.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !h.OK() || h.Records != lessons {
		t.Errorf("after the uses the store's health is %+v; want %d records, nothing to repair", h, lessons)
	}
	t.Logf("%d acknowledged, %d failed, %d landed", nAcked, nFailed, landed)
}
