// Package inproc is an http.RoundTripper that serves each request with an
// http.Handler in this process, with no connection in between, as a server
// would: each request in a goroutine of its own, its response handed back
// when the handler has finished or its output no longer fits a server's
// write buffer (or it flushes), so a streamed answer streams; a cancelled
// request, a closed answer or Close cut the handler off as a closed
// connection would. engine/api builds its in-process client (api.Local) on
// it.
package inproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// bufferSize is how much of an answer is held before the response is
// handed over and the rest streams: net/http's server buffers as much
// before it commits to a chunked answer (and otherwise sends a
// Content-Length).
const bufferSize = 2048

// errCutOff ends the answer of a request whose handler was cut off
// (Close, a panic): what a client reads from a connection that closed
// before the end.
var errCutOff = io.ErrUnexpectedEOF

// Transport is an http.RoundTripper that serves each request with a
// handler in this process. Close stops it.
type Transport struct {
	h http.Handler
	// jobs hands a request to an idle worker; done (closed by close) ends
	// them; idle counts them.
	jobs chan job
	done chan struct{}
	idle atomic.Int32

	mu     sync.Mutex
	closed bool
	// inflight are the requests being served (close cuts them off and
	// waits for them).
	inflight map[*call]struct{}
	wg       sync.WaitGroup
}

// New returns a Transport that serves every request with h.
func New(h http.Handler) *Transport {
	return &Transport{h: h, inflight: map[*call]struct{}{}, jobs: make(chan job), done: make(chan struct{})}
}

// maxIdleWorkers is how many goroutines wait for the next request once
// they have served one: a goroutine's stack grows to what a handler needs
// (copying it each time it doubles, ~10 % of a small request), so a
// client that sends request after request (an agent run) reuses grown
// ones, as a server reuses a kept-alive connection's goroutine.
const maxIdleWorkers = 4

// job is a request for a worker.
type job struct {
	c *call
	r *http.Request
}

// start serves j on an idle worker, or a new one.
func (t *Transport) start(j job) {
	select {
	case t.jobs <- j:
	default:
		go t.work(j)
	}
}

// work serves j, then waits for the next job while fewer than
// maxIdleWorkers do, until the transport is closed.
func (t *Transport) work(j job) {
	for {
		j.c.serve(t, j.r)
		if t.idle.Add(1) > maxIdleWorkers {
			t.idle.Add(-1)
			return
		}
		select {
		case j = <-t.jobs:
			t.idle.Add(-1)
		case <-t.done:
			t.idle.Add(-1)
			return
		}
	}
}

// Close stops serving: requests in flight are cut off (their contexts
// cancelled, their bodies closed, their answers' writes failing, as when a
// server closes its connections) and Close returns once their handlers
// have; later requests fail with net.ErrClosed.
func (t *Transport) Close() {
	t.mu.Lock()
	if !t.closed {
		close(t.done)
	}
	t.closed = true
	calls := make([]*call, 0, len(t.inflight))
	for c := range t.inflight {
		calls = append(calls, c)
	}
	t.mu.Unlock()
	for _, c := range calls {
		c.cutOff(errCutOff)
	}
	t.wg.Wait()
}

// RoundTrip serves r with the handler: r's body is the handler's to read
// as it comes (at most its ContentLength), r's context its context (with
// the transport's: a cancelled request, or Close, cuts the handler off as a
// closed connection would).
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	sr, c, err := t.serverRequest(r)
	if err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, err
	}
	t.start(job{c, sr})
	select {
	case resp := <-c.ready:
		return resp, nil
	case err := <-c.failed:
		return nil, err
	case <-r.Context().Done():
		// The caller gave up before the answer: the handler is cut off
		// and its answer, if any, dropped.
		c.abandon()
		return nil, r.Context().Err()
	}
}

// serverRequest is r as a handler behind a server sees it: the request
// URI's path and query only, no Host header, a body that is never nil.
func (t *Transport) serverRequest(r *http.Request) (*http.Request, *call, error) {
	if r.URL == nil {
		return nil, nil, errors.New("api: local request without a URL")
	}
	uri := r.URL.RequestURI()
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(r.Context())
	c := &call{
		req: r, cancel: cancel,
		ready: make(chan *http.Response, 1), failed: make(chan error, 1),
		header: http.Header{},
	}
	// The caller's cancel cuts the handler off, its answer's reads then
	// failing with the context's error, as the http.Transport's do.
	c.stop = context.AfterFunc(r.Context(), func() { c.cutOff(r.Context().Err()) })
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		c.stop()
		cancel()
		return nil, nil, net.ErrClosed
	}
	t.inflight[c] = struct{}{}
	t.wg.Add(1)
	t.mu.Unlock()

	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	sr := &http.Request{
		Method: r.Method, URL: u, RequestURI: uri, Host: host,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: r.Header.Clone(), ContentLength: r.ContentLength,
		RemoteAddr: "local", Body: http.NoBody,
	}
	if sr.Header == nil {
		sr.Header = http.Header{}
	}
	if sr.Method == "" {
		sr.Method = http.MethodGet
	}
	if r.Body != nil && r.Body != http.NoBody {
		c.body = &reqBody{rc: r.Body, left: r.ContentLength}
		sr.Body = c.body
		if r.ContentLength <= 0 { // unknown: chunked on the wire
			sr.ContentLength = -1
			c.body.left = -1
		} else {
			sr.Header.Set("Content-Length", strconv.FormatInt(r.ContentLength, 10))
		}
	} else {
		sr.ContentLength = 0
	}
	return sr.WithContext(ctx), c, nil
}

// call is one request served: the handler's ResponseWriter, and the
// response it hands back.
type call struct {
	req    *http.Request // the client's
	cancel context.CancelFunc
	stop   func() bool // stops the cut-off on the caller's cancel
	body   *reqBody    // the request body (nil: none)
	ready  chan *http.Response
	failed chan error

	// Written by the handler's goroutine only.
	header    http.Header
	sent      http.Header // header as of WriteHeader
	status    int
	committed bool // the response is handed over: the rest streams
	buf       []byte
	bw        *bufio.Writer // over pw, once committed
	resp      *http.Response
	trailers  []string

	mu sync.Mutex // guards the pipe's ends, abandoned and ended
	pr *io.PipeReader
	pw *io.PipeWriter
	// abandoned: the caller gave up before the answer; ended: the handler
	// wrote its last byte; cut: the request was cut off (the error its
	// answer ends with).
	abandoned, ended bool
	cut              error
}

// serve runs the handler and finishes the response.
func (c *call) serve(t *Transport, r *http.Request) {
	defer func() {
		c.stop()
		c.cancel() // a server cancels a request's context when its handler returns
		if c.body != nil {
			c.body.Close() // a RoundTripper closes the request body
		}
		t.mu.Lock()
		delete(t.inflight, c)
		t.mu.Unlock()
		t.wg.Done()
	}()
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				buf := make([]byte, 64<<10)
				buf = buf[:runtime.Stack(buf, false)]
				log.Printf("api: panic serving %s %s: %v\n%s", r.Method, r.URL.Path, v, buf)
			}
			c.fail(fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, errCutOff))
		}
	}()
	t.h.ServeHTTP(c, r)
	c.finish()
}

func (c *call) Header() http.Header { return c.header }

func (c *call) WriteHeader(status int) {
	if status < 100 || status > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", status))
	}
	if c.status != 0 || (status >= 100 && status <= 199) {
		return // superfluous, or informational (not passed on)
	}
	c.status = status
	c.sent = c.header.Clone() // later changes are not sent, but trailers
}

func (c *call) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(c.status) || c.req.Method == http.MethodHead {
		if c.req.Method == http.MethodHead {
			return len(p), nil
		}
		return 0, http.ErrBodyNotAllowed
	}
	if !c.committed {
		if len(c.buf)+len(p) <= bufferSize {
			c.buf = append(c.buf, p...)
			return len(p), nil
		}
		if err := c.commit(); err != nil {
			return 0, err
		}
	}
	if c.bw == nil {
		return 0, errCutOff // failed
	}
	return c.bw.Write(p)
}

// Flush hands the response over (if it was not) and sends what is
// buffered (http.Flusher).
func (c *call) Flush() {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if !c.committed {
		if c.commit() != nil {
			return
		}
	}
	if c.bw != nil {
		c.bw.Flush()
	}
}

// response is the response as the client sees it, its header as it is now.
func (c *call) response() *http.Response {
	h := c.sent
	if _, ok := h["Content-Type"]; !ok && len(c.buf) > 0 && bodyAllowed(c.status) {
		h.Set("Content-Type", http.DetectContentType(c.buf))
	}
	resp := &http.Response{
		Status: strconv.Itoa(c.status) + " " + http.StatusText(c.status), StatusCode: c.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Request: c.req, ContentLength: -1,
	}
	if vs := h["Trailer"]; len(vs) > 0 {
		resp.Trailer = http.Header{}
		for _, v := range vs {
			for k := range strings.SplitSeq(v, ",") {
				if k = http.CanonicalHeaderKey(strings.TrimSpace(k)); k != "" {
					c.trailers = append(c.trailers, k)
					resp.Trailer[k] = nil
				}
			}
		}
		h.Del("Trailer")
	}
	return resp
}

// commit hands the response over with the rest of its body to stream: the
// buffered bytes, then every write through a pipe the client reads.
func (c *call) commit() error {
	c.mu.Lock()
	if c.abandoned || c.cut != nil {
		c.mu.Unlock()
		c.fail(errCutOff)
		return errCutOff
	}
	c.pr, c.pw = io.Pipe()
	c.mu.Unlock()
	c.committed = true
	c.resp = c.response()
	c.resp.Body = &answer{pr: c.pr, call: c}
	c.bw = bufio.NewWriterSize(c.pw, 4<<10)
	c.ready <- c.resp
	_, err := c.bw.Write(c.buf)
	c.buf = nil
	return err
}

// finish ends the response once the handler returned: a response not yet
// handed over goes whole (with its Content-Length, unless it has
// trailers); a streamed one gets its trailers and its end.
func (c *call) finish() {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	c.mu.Lock()
	cut := c.cut
	c.mu.Unlock()
	if !c.committed && cut != nil {
		c.fail(cut)
		return
	}
	if !c.committed {
		resp := c.response()
		if resp.Trailer == nil && bodyAllowed(c.status) && c.req.Method != http.MethodHead {
			resp.ContentLength = int64(len(c.buf))
			resp.Header.Set("Content-Length", strconv.Itoa(len(c.buf)))
		}
		if !bodyAllowed(c.status) {
			resp.ContentLength = 0
		}
		c.setTrailers(resp)
		resp.Body = &answer{r: bytes.NewReader(c.buf), call: c}
		c.committed = true
		c.ready <- resp
		return
	}
	if c.bw == nil {
		return // failed
	}
	err := c.bw.Flush()
	c.setTrailers(c.resp)
	c.mu.Lock()
	c.ended = err == nil
	c.mu.Unlock()
	if err == nil {
		c.pw.Close()
	}
}

// setTrailers gives resp the values the handler set for its declared
// trailers (and those it set with http.TrailerPrefix).
func (c *call) setTrailers(resp *http.Response) {
	for _, k := range c.trailers {
		if vs := c.header[k]; len(vs) > 0 {
			resp.Trailer[k] = append([]string(nil), vs...)
		}
	}
	for k, vs := range c.header {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			if resp.Trailer == nil {
				resp.Trailer = http.Header{}
			}
			resp.Trailer[http.CanonicalHeaderKey(name)] = append([]string(nil), vs...)
		}
	}
}

// fail ends a request whose handler panicked: the caller gets err, or,
// when the answer was already handed over, a body cut short.
func (c *call) fail(err error) {
	if !c.committed {
		c.committed = true
		c.failed <- err
		return
	}
	if c.pw != nil { // else failed already
		c.pw.CloseWithError(err)
	}
}

// abandon cuts off a request whose caller stopped waiting for the answer.
func (c *call) abandon() {
	c.mu.Lock()
	c.abandoned = true
	c.mu.Unlock()
	c.cutOff(errCutOff)
}

// cutOff is a closed connection as the handler sees it: its context is
// cancelled, its request body reads fail, and so do its answer's writes;
// the client reads err where the answer stops (unless it was all written).
//
// The cut is recorded before the handler is told (its context cancelled,
// its body closed): a handler that returns at once must find it in finish,
// or its empty answer would go out as a success.
func (c *call) cutOff(err error) {
	c.mu.Lock()
	pw, ended := c.pw, c.ended
	if c.cut == nil {
		c.cut = err
	}
	c.mu.Unlock()
	c.cancel()
	if c.body != nil {
		c.body.Close()
	}
	if pw != nil && !ended {
		pw.CloseWithError(err) // the reader gets err, the writer ErrClosedPipe
	}
}

func bodyAllowed(status int) bool {
	return (status < 100 || status > 199) && status != http.StatusNoContent && status != http.StatusNotModified
}

// answer is a response body: what the handler wrote, whole or
// streaming through a pipe. Closing it before its end cuts the handler off,
// as closing a connection would.
type answer struct {
	r    *bytes.Reader  // a whole answer, or
	pr   *io.PipeReader // one that streams
	call *call
	once sync.Once
}

func (b *answer) Read(p []byte) (int, error) {
	if b.r != nil {
		return b.r.Read(p)
	}
	return b.pr.Read(p)
}

func (b *answer) Close() error {
	b.once.Do(func() {
		if b.pr != nil {
			b.pr.CloseWithError(errors.New("api: read on a closed response body"))
			b.call.cancel()
		}
	})
	return nil
}

// reqBody is a request body as a handler behind a server reads it: at
// most ContentLength bytes (-1: unknown), failing once the request is cut
// off or its handler returned.
type reqBody struct {
	rc     io.ReadCloser
	left   int64
	mu     sync.Mutex
	closed bool
}

// errBodyClosed is a read of a request body after its handler returned or
// the request was cut off.
var errBodyClosed = errors.New("http: invalid Read on closed Body")

func (b *reqBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	closed, left := b.closed, b.left
	b.mu.Unlock()
	if closed {
		return 0, errBodyClosed
	}
	if left == 0 {
		return 0, io.EOF
	}
	if left > 0 && int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.rc.Read(p)
	if left > 0 {
		b.mu.Lock()
		b.left -= int64(n)
		left = b.left
		b.mu.Unlock()
		if err == io.EOF && left > 0 {
			err = io.ErrUnexpectedEOF
		}
		if err == nil && left == 0 {
			err = io.EOF
		}
	}
	return n, err
}

func (b *reqBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	return b.rc.Close()
}
