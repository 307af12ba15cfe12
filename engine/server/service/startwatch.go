package service

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"
)

// DefaultStartDumpAfter is how long a server's start may take before
// StartWatch reports it.
const DefaultStartDumpAfter = 5 * time.Second

// StartWatch watches a server's start: when it has not called done within
// after, it writes once to w what step the start is in (the last one
// named by phase), how long it has taken, and every goroutine's stack, so
// a start that hangs says where without a debugger (a start makes its
// socket in well under a second; one that stays silent is otherwise
// indistinguishable from one still working). after ≤ 0 watches nothing.
// The returned funcs are safe to call from any goroutine; done stops the
// watch and may be called more than once.
func StartWatch(w io.Writer, after time.Duration) (phase func(string), done func()) {
	if after <= 0 {
		return func(string) {}, func() {}
	}
	var (
		mu       sync.Mutex
		step     = "starting"
		finished bool
		start    = time.Now()
	)
	t := time.AfterFunc(after, func() {
		mu.Lock()
		defer mu.Unlock()
		if finished {
			return
		}
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		fmt.Fprintf(w, "engine: serve has not started after %s, still %s; its goroutines:\n%s\n",
			time.Since(start).Round(time.Millisecond), step, buf)
	})
	phase = func(s string) {
		mu.Lock()
		step = s
		mu.Unlock()
	}
	done = func() {
		t.Stop()
		mu.Lock()
		finished = true
		mu.Unlock()
	}
	return phase, done
}
