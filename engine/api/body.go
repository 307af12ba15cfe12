package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/engine-dev/engine/engine/api/problem"
)

// Deadlines of a request, defaults of Options.
const (
	// DefaultBodyIdleTimeout bounds the wait for each next part of a
	// request body: a client that stops sending gets 408.
	DefaultBodyIdleTimeout = 10 * time.Second
	// DefaultBodyTimeout bounds reading a whole request body.
	DefaultBodyTimeout = 60 * time.Second
	// DefaultRequestTimeout bounds a request's work once its body is read
	// (the lock wait included): past it the request ends with 503.
	DefaultRequestTimeout = 5 * time.Minute
	// DefaultLockTimeout bounds a request's wait for the memory lock
	// behind an exclusive request (an import, a forget): past it the
	// answer is a 503 naming the request that holds it.
	DefaultLockTimeout = 30 * time.Second
)

// spoolInMemory is how much of a request body is kept in memory; a larger
// one (an import, an action log) is spooled to a file of Options.SpoolDir.
const spoolInMemory = 1 << 20

// copyBufs are the buffers a body goes through on its way to a spool file.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// bodyTimeouts are the deadlines of reading one request body.
type bodyTimeouts struct {
	idle, whole time.Duration
	spoolDir    string
}

func (o Options) bodyTimeouts() bodyTimeouts {
	t := bodyTimeouts{idle: o.BodyIdleTimeout, whole: o.BodyTimeout, spoolDir: o.SpoolDir}
	if t.idle == 0 {
		t.idle = DefaultBodyIdleTimeout
	}
	if t.whole == 0 {
		t.whole = DefaultBodyTimeout
	}
	if t.spoolDir == "" {
		t.spoolDir = os.TempDir()
	}
	return t
}

// bodyError is a request body that could not be read whole: its status
// (408 a stall, 413 too large, 400 a body cut short) and why.
type bodyError struct {
	status int
	err    error
}

func (e *bodyError) Error() string { return e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// spooled is a request body read whole: from memory, or from a file
// already unlinked (so nothing is left behind, whatever happens to the
// process); Close releases it.
type spooled struct {
	io.Reader
	file *os.File
}

func (s *spooled) Close() error {
	if s.file != nil {
		return s.file.Close()
	}
	return nil
}

// tooLargeError is a request body over its route's limit. Its message
// names the limit once; it unwraps to the *http.MaxBytesError that
// statusOf and callers check for, whose own text would only repeat it.
type tooLargeError struct{ max *http.MaxBytesError }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("request body: over %d bytes (the limit of this route)", e.max.Limit)
}

func (e *tooLargeError) Unwrap() error { return e.max }

// tooLarge is the error for a request body over limit bytes.
func tooLarge(limit int64) error { return &tooLargeError{&http.MaxBytesError{Limit: limit}} }

// readBody reads r's body whole before any lock is taken: at most limit
// bytes, each read bounded by t.idle and the whole by t.whole (on a
// connection that supports read deadlines: not an in-process request,
// whose body is already in memory). Up to spoolInMemory bytes are kept in
// memory, the rest in an unlinked file of t.spoolDir. A request without a
// body gets http.NoBody back.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, t bodyTimeouts) (io.ReadCloser, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return http.NoBody, nil
	}
	if r.ContentLength > limit { // refused before reading it
		return nil, &bodyError{http.StatusRequestEntityTooLarge, tooLarge(limit)}
	}
	rc := http.NewResponseController(w)
	start := time.Now()
	end := start.Add(t.whole)
	deadlines := rc.SetReadDeadline(earliest(start.Add(t.idle), end)) == nil
	var mem bytes.Buffer
	if r.ContentLength > 0 {
		mem.Grow(int(min(r.ContentLength, 64<<10))) // a claimed length is not yet a body
	}
	var file *os.File
	fail := func(err error) (io.ReadCloser, error) {
		if file != nil {
			file.Close()
		}
		return nil, err
	}
	var n int64
	var pooled *[]byte // the file phase's buffer
	for {
		if deadlines && n > 0 {
			rc.SetReadDeadline(earliest(time.Now().Add(t.idle), end))
		}
		// Read into the memory buffer's free space while the body fits
		// there, then through a pooled buffer into the file.
		var buf []byte
		if file == nil {
			mem.Grow(512)
			buf = mem.AvailableBuffer()
			buf = buf[:cap(buf)]
		} else {
			if pooled == nil {
				pooled = copyBufs.Get().(*[]byte)
				defer copyBufs.Put(pooled)
			}
			buf = *pooled
		}
		k, err := r.Body.Read(buf)
		if k > 0 {
			n += int64(k)
			if n > limit {
				return fail(&bodyError{http.StatusRequestEntityTooLarge, tooLarge(limit)})
			}
			var werr error
			switch {
			case file != nil:
				_, werr = file.Write(buf[:k])
			case mem.Len()+k <= spoolInMemory:
				mem.Write(buf[:k]) // buf is mem's own free space: this only extends it
			default:
				f, ferr := os.CreateTemp(t.spoolDir, ".body-*")
				if ferr != nil {
					return fail(fmt.Errorf("request body: spool: %w", ferr))
				}
				os.Remove(f.Name()) // the open file lives on; no path is left behind
				file = f
				if _, werr = file.Write(mem.Bytes()); werr == nil {
					_, werr = file.Write(buf[:k])
				}
				mem = bytes.Buffer{}
			}
			if werr != nil {
				return fail(fmt.Errorf("request body: spool: %w", werr))
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if deadlines && errors.Is(err, os.ErrDeadlineExceeded) {
				rc.SetReadDeadline(time.Now()) // whatever net/http reads of it next fails at once
				why := fmt.Sprintf("nothing for %s", t.idle)
				if !time.Now().Before(end) {
					why = fmt.Sprintf("not whole within %s", t.whole)
				}
				return fail(&bodyError{http.StatusRequestTimeout, fmt.Errorf("request body: %s (read %d of %s bytes): send it without pauses", why, n, size(r.ContentLength))})
			}
			return fail(&bodyError{http.StatusBadRequest, fmt.Errorf("request body: %w (read %d of %s bytes)", err, n, size(r.ContentLength))})
		}
	}
	if deadlines {
		rc.SetReadDeadline(time.Time{}) // the connection's next reads are net/http's own
	}
	if file == nil {
		return &spooled{Reader: bytes.NewReader(mem.Bytes())}, nil
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return fail(fmt.Errorf("request body: spool: %w", err))
	}
	return &spooled{Reader: file, file: file}, nil
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// size is a Content-Length for a message.
func size(n int64) string {
	if n < 0 {
		return "an unknown number of"
	}
	return fmt.Sprint(n)
}

// ReadBodyFirst serves next with each request's body already read whole
// (at most limit bytes; past it 413), under the read deadlines of opts
// (BodyIdleTimeout, BodyTimeout: a stall is answered 408) and spooled as
// Handler spools: for the handlers a server mounts beside the API (/mcp,
// the inspector), so no client holds one of them with a body it does not
// send.
func ReadBodyFirst(next http.Handler, limit int64, opts Options) http.Handler {
	t := opts.bodyTimeouts()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(w, r, limit, t)
		if err != nil {
			writeBodyProblem(w, err)
			return
		}
		defer body.Close()
		r.Body = body
		next.ServeHTTP(w, r)
	})
}

// writeBodyProblem answers a body readBody could not read.
func writeBodyProblem(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var be *bodyError
	if errors.As(err, &be) {
		status = be.status
	}
	problem.Write(w, problem.New(status, err.Error()))
}
