package api

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// gate is a handler's lock: exclusive routes (Route.Exclusive) apart from
// every other request. It is a readers-writer lock whose waits end with
// their context, and which knows who holds it, so a request that cannot
// get it in time is told which request it waited for (and for how long
// that one has held it) instead of hanging.
//
// A queued exclusive request holds off new shared ones (as sync.RWMutex
// does), so a stream of reads cannot starve an import; exclusive requests
// go in the order they came. Nobody holds the gate while reading a
// request body (serve reads it first), so a wait lasts as long as other
// requests' work, never a client's upload.
type gate struct {
	mu      sync.Mutex
	readers map[*hold]struct{}
	writer  *hold
	queued  []*hold       // exclusive waiters, first come first
	changed chan struct{} // closed (and dropped) when the gate opens a little
}

// hold is one request at the gate: its route ("POST /v1/import") and
// since when it holds (or waits).
type hold struct {
	route string
	since time.Time
}

// busyError is a wait for the gate that ended before the request got in:
// a 503 naming who held it.
type busyError struct {
	waited  time.Duration
	holders string
	cause   error // the wait's context error
}

func (e *busyError) Error() string {
	return fmt.Sprintf("memory server busy: waited %s for the memory lock, held by %s; try again", round(e.waited), e.holders)
}

func (e *busyError) Unwrap() error { return e.cause }

// round shortens a duration for a message.
func round(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// acquire waits until h may run (alone when exclusive), at most wait (0:
// no bound but ctx's) or until ctx ends; then the error is a *busyError
// naming the holders. The usual case, a gate open at once, makes no timer.
func (g *gate) acquire(ctx context.Context, wait time.Duration, h *hold, exclusive bool) error {
	h.since = time.Now() // while queued: since when it waits
	g.mu.Lock()
	if g.readers == nil {
		g.readers = map[*hold]struct{}{}
	}
	if exclusive {
		g.queued = append(g.queued, h)
	}
	for {
		if exclusive {
			if g.writer == nil && len(g.readers) == 0 && g.queued[0] == h {
				g.queued = g.queued[1:]
				g.writer = h
				h.since = time.Now()
				g.mu.Unlock()
				return nil
			}
		} else if g.writer == nil && len(g.queued) == 0 {
			g.readers[h] = struct{}{}
			h.since = time.Now()
			g.mu.Unlock()
			return nil
		}
		if g.changed == nil {
			g.changed = make(chan struct{})
		}
		ch := g.changed
		g.mu.Unlock()
		if wait > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, wait)
			defer cancel()
			wait = 0
		}
		select {
		case <-ch:
			g.mu.Lock()
		case <-ctx.Done():
			g.mu.Lock()
			if exclusive {
				for i, q := range g.queued {
					if q == h {
						g.queued = append(g.queued[:i:i], g.queued[i+1:]...)
						break
					}
				}
				g.wake() // shared requests held off by h may go
			}
			err := &busyError{waited: time.Since(h.since), holders: g.describe(h), cause: ctx.Err()}
			g.mu.Unlock()
			return err
		}
	}
}

// release lets h go.
func (g *gate) release(h *hold) {
	g.mu.Lock()
	if g.writer == h {
		g.writer = nil
	} else {
		delete(g.readers, h)
	}
	g.wake()
	g.mu.Unlock()
}

// wake tells every waiter to look again (g.mu held).
func (g *gate) wake() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// describe names what keeps waiter out: the exclusive holder, else the
// longest-running shared holders, and an exclusive request queued ahead
// (g.mu held).
func (g *gate) describe(waiter *hold) string {
	now := time.Now()
	var parts []string
	if g.writer != nil {
		parts = append(parts, fmt.Sprintf("%s (for %s)", g.writer.route, round(now.Sub(g.writer.since))))
	} else if len(g.readers) > 0 {
		var oldest *hold
		for r := range g.readers {
			if oldest == nil || r.since.Before(oldest.since) {
				oldest = r
			}
		}
		s := fmt.Sprintf("%s (for %s)", oldest.route, round(now.Sub(oldest.since)))
		if n := len(g.readers) - 1; n == 1 {
			s += " and 1 other request"
		} else if n > 1 {
			s += fmt.Sprintf(" and %d other requests", n)
		}
		parts = append(parts, s)
	}
	if len(g.queued) > 0 && g.queued[0] != waiter {
		q := g.queued[0]
		parts = append(parts, fmt.Sprintf("%s queued ahead (waiting %s)", q.route, round(now.Sub(q.since))))
	}
	if len(parts) == 0 {
		return "nobody (it came free as the wait ended)"
	}
	return strings.Join(parts, ", with ")
}
