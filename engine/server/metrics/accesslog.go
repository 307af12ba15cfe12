package metrics

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
)

// DefaultAccessLogQueue is the bytes of access log lines an AccessLog holds
// while its writer is busy: about 5,000 lines, a few seconds of a busy
// server's requests.
const DefaultAccessLogQueue = 1 << 20

// AccessLogOptions configure NewAccessLog.
type AccessLogOptions struct {
	// JSON writes the lines as JSON (slog.JSONHandler), else as text.
	JSON bool
	// Queue bounds the bytes of lines waiting for the writer; 0 is
	// DefaultAccessLogQueue.
	Queue int
}

// AccessLog is an access log that never holds a request up: a request's
// line is formatted by its own goroutine and queued in memory, and one
// goroutine writes the queue out, many lines to a write. Requests neither
// take turns on one write system call each nor wait for a slow or stalled
// writer (a pipe whose reader stopped, a paused terminal).
//
// The queue is bounded. A line that finds it full is dropped, and counted:
// Dropped (engine_access_log_dropped_total on /metrics) and a warning line
// in the log itself once the writer catches up, naming how many. A line the
// writer fails to write is counted the same way. Close writes out what is
// queued.
type AccessLog struct {
	w      io.Writer
	logger *slog.Logger
	// notice writes the dropped-lines warning on w directly, in the log's
	// format; only the writing goroutine uses it.
	notice *slog.Logger
	limit  int

	mu    sync.Mutex
	wrote *sync.Cond // broadcast after each batch is written
	buf   []byte     // lines queued
	spare []byte     // the last batch's buffer, for reuse
	// queued and written count bytes ever queued and ever handed to w:
	// Flush waits for written to reach what was queued when it was called.
	queued, written uint64
	dropped         uint64 // lines dropped since the start
	unreported      uint64 // lines dropped since the last warning
	closing         bool   // Close was called: the writer drains and ends
	closed          bool   // the writer ended: lines go to w directly

	wake chan struct{} // a line was queued (capacity 1)
	done chan struct{} // the writer ended
}

// NewAccessLog starts an access log on w. Close it to write out what is
// queued and end its goroutine.
func NewAccessLog(w io.Writer, opts AccessLogOptions) *AccessLog {
	l := &AccessLog{w: w, limit: opts.Queue, wake: make(chan struct{}, 1), done: make(chan struct{})}
	if l.limit <= 0 {
		l.limit = DefaultAccessLogQueue
	}
	l.wrote = sync.NewCond(&l.mu)
	if opts.JSON {
		l.logger, l.notice = slog.New(slog.NewJSONHandler(queueWriter{l}, nil)), slog.New(slog.NewJSONHandler(w, nil))
	} else {
		l.logger, l.notice = slog.New(slog.NewTextHandler(queueWriter{l}, nil)), slog.New(slog.NewTextHandler(w, nil))
	}
	go l.run()
	return l
}

// Logger is the log's slog.Logger: each record is one line, queued.
func (l *AccessLog) Logger() *slog.Logger { return l.logger }

// Dropped is how many lines were dropped (the queue was full, or the writer
// failed) since the start.
func (l *AccessLog) Dropped() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}

// Flush waits until every line queued before it was called has been handed
// to the writer (or dropped).
func (l *AccessLog) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	target := l.queued
	l.signal()
	for l.written < target && !l.closed {
		l.wrote.Wait()
	}
}

// Close writes out what is queued and ends the writing goroutine; lines
// logged after it are written directly. It returns once the queue is
// written.
func (l *AccessLog) Close() {
	l.mu.Lock()
	l.closing = true
	l.signal()
	l.mu.Unlock()
	<-l.done
}

// signal wakes the writer (l.mu held or not).
func (l *AccessLog) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// queue takes one line (slog writes a record in one Write).
func (l *AccessLog) queue(p []byte) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		if _, err := l.w.Write(p); err != nil {
			l.mu.Lock()
			l.dropped++
			l.mu.Unlock()
		}
		return
	}
	if len(l.buf)+len(p) > l.limit {
		l.dropped++
		l.unreported++
		l.mu.Unlock()
		return
	}
	l.buf = append(l.buf, p...)
	l.queued += uint64(len(p))
	l.mu.Unlock()
	l.signal()
}

// run is the writing goroutine: it takes the whole queue at each wake and
// writes it in one call, then warns of lines dropped meanwhile.
func (l *AccessLog) run() {
	defer close(l.done)
	for {
		<-l.wake
		l.mu.Lock()
		batch, end, missed, last := l.buf, l.queued, l.unreported, l.closing
		l.buf, l.spare, l.unreported = l.spare[:0], nil, 0
		l.mu.Unlock()

		var failed uint64
		if len(batch) > 0 {
			if _, err := l.w.Write(batch); err != nil {
				failed = uint64(bytes.Count(batch, []byte{'\n'}))
			}
		}
		if missed > 0 {
			l.notice.LogAttrs(context.Background(), slog.LevelWarn, "access log lines dropped",
				slog.Uint64("dropped", missed),
				slog.String("why", "the log's writer fell behind (its queue was full)"))
		}

		l.mu.Lock()
		l.written = end
		l.dropped += failed
		if cap(batch) <= l.limit {
			l.spare = batch[:0]
		}
		if last && len(l.buf) == 0 {
			// What Close's caller queued is written; nothing is queued
			// after closing is seen but by requests racing Close, and
			// those were taken by a batch above or are taken now.
			l.closed = true
			l.wrote.Broadcast()
			l.mu.Unlock()
			return
		}
		l.wrote.Broadcast()
		if last {
			l.signal()
		}
		l.mu.Unlock()
	}
}

// queueWriter is the io.Writer the log's slog handler writes to: it queues.
type queueWriter struct{ l *AccessLog }

func (q queueWriter) Write(p []byte) (int, error) {
	q.l.queue(p)
	return len(p), nil
}
