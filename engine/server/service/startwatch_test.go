package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/server/service"
)

// writes sends each Write to a channel: the event a test waits on.
type writes chan string

func (w writes) Write(p []byte) (int, error) { w <- string(p); return len(p), nil }

// blockedOpening stands for a start step that does not return.
func blockedOpening(step chan struct{}) { <-step }

// A start that has not finished when the watch fires writes, once, the
// step it is in and every goroutine's stack, the blocked step among them;
// a start that finished first writes nothing.
func TestStartWatchDumpsASlowStart(t *testing.T) {
	out := make(writes, 4)
	phase, done := service.StartWatch(out, time.Millisecond)
	phase("opening the data dir")
	step := make(chan struct{})
	go blockedOpening(step)
	defer close(step)
	got := <-out
	done()
	done()
	for _, want := range []string{"engine: serve has not started after ", "still opening the data dir; its goroutines:", "service_test.blockedOpening("} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	select {
	case more := <-out:
		t.Errorf("a second report: %s", more)
	default:
	}

	quiet := make(writes, 1)
	_, done = service.StartWatch(quiet, time.Hour)
	done()
	if _, off := service.StartWatch(quiet, 0); off == nil {
		t.Fatal("no done func for an unwatched start")
	}
	select {
	case got := <-quiet:
		t.Errorf("a start that finished reported: %s", got)
	default:
	}
}
