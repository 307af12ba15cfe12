package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/engine-dev/engine/engine"
)

// ErrNotServed means no memory server serves the data dir: there is no
// socket, or nobody answers on it (a server that was killed). The CLI then
// opens the data dir itself.
var ErrNotServed = errors.New("data dir not served")

// NotServedError says why a data dir is not served; errors.Is(err,
// ErrNotServed) holds for it.
type NotServedError struct {
	Socket string
	Reason string // "no socket", "stale socket (connection refused)", ...
}

func (e *NotServedError) Error() string {
	return fmt.Sprintf("no memory server at %s: %s", e.Socket, e.Reason)
}

// Is reports whether target is ErrNotServed.
func (e *NotServedError) Is(target error) bool { return target == ErrNotServed }

// ErrServerGone marks a request that failed because the connection to the
// server failed (it was killed, stopped, or cannot be reached), as opposed
// to an error answer from it. The errors that carry it are *GoneError.
var ErrServerGone = errors.New("memory server went away")

// GoneError is a request that failed on the connection to the server.
type GoneError struct {
	Server string // the socket path or the server's URL
	Err    error
}

func (e *GoneError) Error() string {
	return fmt.Sprintf("memory server at %s went away: %v", e.Server, e.Err)
}

// Unwrap returns the connection error.
func (e *GoneError) Unwrap() error { return e.Err }

// Is reports whether target is ErrServerGone.
func (e *GoneError) Is(target error) bool { return target == ErrServerGone }

// NotSocketError is something other than a socket at a data dir's socket
// path (a regular file, a directory, a symbolic link): no server can be
// reached through it, so the data dir counts as not served
// (errors.Is(err, ErrNotServed)), and a server cannot start there until it
// is moved away.
type NotSocketError struct {
	Path string
	What string // "a regular file", "a directory", ...
}

func (e *NotSocketError) Error() string {
	return fmt.Sprintf("%s is not a socket (%s): no memory server can be reached through it, and engine serve refuses to start until it is moved away", e.Path, e.What)
}

// Is reports whether target is ErrNotServed.
func (e *NotSocketError) Is(target error) bool { return target == ErrNotServed }

// TimeoutError is a request the server did not answer within the client's
// timeout (Client.WithTimeout): no byte of the answer came for that long
// while the client waited for one.
type TimeoutError struct {
	Server       string // the socket path or the server's URL
	Method, Path string // the request
	Timeout      time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("memory server at %s did not answer %s %s within %v", e.Server, e.Method, e.Path, e.Timeout)
}

// Client reaches one memory server. Requests go to BaseURL + path through
// HTTP. A failed connection — the server killed mid-request included — is
// returned at once as a *GoneError; nothing is retried except what net/http
// retries itself (a request never written to a connection that had gone
// stale). A request has no overall deadline (an import uploads and an
// export streams for as long as it needs); WithTimeout bounds how long the
// server may stay silent.
type Client struct {
	HTTP    *http.Client
	BaseURL string // "http://engine" over the socket; the server's URL remotely
	Server  string // the socket path or the server's URL, for messages
	gone    *goneTransport
}

// WithTimeout returns a client over the same connections whose requests
// fail with a *TimeoutError when the server stays silent for d while the
// client waits on it: from sending the request until the response headers
// arrive (time spent reading the caller's request body is not counted, so
// an upload from a slow source is not cut off; an upload the server stops
// reading is), and during each read of the response body (a response that
// streams for minutes is fine as long as bytes keep coming; time the caller
// spends between reads is not counted). d <= 0 means no timeout.
func (c *Client) WithTimeout(d time.Duration) *Client {
	gt := *c.gone
	gt.timeout = d
	return &Client{HTTP: &http.Client{Transport: &gt}, BaseURL: c.BaseURL, Server: c.Server, gone: &gt}
}

// CloseIdleConnections closes the client's idle connections.
func (c *Client) CloseIdleConnections() { c.HTTP.CloseIdleConnections() }

// Timeouts of the client's connections.
const (
	// DialTimeout bounds connecting to the server: a local socket connects
	// at once or not at all; a remote server that does not answer within it
	// is reported, not waited for.
	DialTimeout = 5 * time.Second
	// clientIdleTimeout is shorter than the server's IdleTimeout.
	clientIdleTimeout = 20 * time.Second
	// keepAlive probes remote TCP connections, so a server host that
	// vanished without closing them is noticed.
	keepAlive = 15 * time.Second
)

// unixBaseURL is the base URL of requests over the socket; the host is a
// name only, the transport always dials the socket.
const unixBaseURL = "http://engine"

// Dial returns a client of the server of dataDir, over its unix socket. It
// returns a *NotServedError (errors.Is(err, ErrNotServed)) when there is no
// socket or nobody answers on it, and other errors (a socket we may not
// connect to, a path that is not a socket) as they are.
func Dial(ctx context.Context, dataDir string) (*Client, error) {
	sock := SocketPath(dataDir)
	fi, err := os.Lstat(sock)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, &NotServedError{Socket: sock, Reason: "no socket"}
	case errors.Is(err, syscall.ENOTDIR):
		if fi, serr := os.Stat(dataDir); serr == nil && !fi.IsDir() {
			return nil, engine.Invalidf("data dir", "%s is not a directory", dataDir)
		}
		// A directory above it is a file: the data dir cannot be made.
		return nil, fmt.Errorf("data dir %s cannot be made: %s is not a directory", dataDir, fileAbove(dataDir))
	case errors.Is(err, os.ErrPermission):
		return nil, fmt.Errorf("data dir %s cannot be read: permission denied (check its owner and mode)", dataDir)
	case err != nil:
		return nil, fmt.Errorf("memory server: %w", err)
	case fi.Mode().Type() != os.ModeSocket:
		return nil, &NotSocketError{Path: sock, What: describeMode(fi.Mode())}
	}
	d := net.Dialer{Timeout: DialTimeout}
	c, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, &NotServedError{Socket: sock, Reason: "stale socket (nobody answers: connection refused)"}
		}
		if errors.Is(err, syscall.ENOENT) {
			return nil, &NotServedError{Socket: sock, Reason: "no socket"}
		}
		return nil, fmt.Errorf("memory server at %s: %w", sock, err)
	}
	c.Close()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", sock)
		},
		// A connection per request: a server that stops gracefully serves
		// every connection made before its socket file went (drainingListener)
		// and closes idle ones, and a request written on an idle connection
		// just as the server closed it could not be told from one the
		// server received, so could not be resent. A fresh connection that
		// fails to connect is safe to resend elsewhere (engine/server/attach). It
		// costs a unix connect per request.
		DisableKeepAlives: true,
		ForceAttemptHTTP2: false,
	}
	gt := &goneTransport{base: tr, server: sock}
	return &Client{HTTP: &http.Client{Transport: gt}, BaseURL: unixBaseURL, Server: sock, gone: gt}, nil
}

// DialRemote returns a client of the server at serverURL (http://HOST:PORT,
// from ENGINE_SERVER) that sends token (from ENGINE_TOKEN) as a bearer
// token. It does not connect: the first request does.
func DialRemote(serverURL, token string) (*Client, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, engine.Invalidf("memory server address", "%q: want http://HOST:PORT", serverURL)
	}
	if token == "" {
		return nil, engine.Invalid("memory server token", "a remote memory server needs its token (the server's data dir holds it in serve.token)")
	}
	base := strings.TrimRight(u.String(), "/")
	d := &net.Dialer{Timeout: DialTimeout, KeepAlive: keepAlive}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         d.DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     clientIdleTimeout,
		MaxIdleConns:        16,
	}
	gt := &goneTransport{base: tr, server: base, token: token}
	return &Client{HTTP: &http.Client{Transport: gt}, BaseURL: base, Server: base, gone: gt}, nil
}

// goneTransport adds the bearer token, turns connection failures into
// *GoneError and, with a timeout, a silent server into *TimeoutError. It
// never retries.
type goneTransport struct {
	base    http.RoundTripper
	server  string
	token   string
	timeout time.Duration // 0: none
}

// errSilent is the cause a request's context is cancelled with when the
// server stayed silent past the timeout.
var errSilent = errors.New("memory server silent past the timeout")

func (t *goneTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	var w *watchdog
	if t.timeout > 0 {
		ctx, cancel := context.WithCancelCause(r.Context())
		w = &watchdog{d: t.timeout, cancel: cancel}
		r = r.WithContext(ctx)
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &uploadBody{ReadCloser: r.Body, w: w}
		}
		w.start()
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		if w != nil {
			w.stop()
			if w.fired() {
				return nil, t.timedOut(r)
			}
		}
		if r.Context().Err() != nil {
			// The caller gave up: not the server's doing.
			return nil, err
		}
		return nil, &GoneError{Server: t.server, Err: err}
	}
	if w != nil {
		w.answered() // the caller's time between reads is its own
	}
	resp.Body = &goneBody{ReadCloser: resp.Body, t: t, r: r, w: w}
	return resp, nil
}

func (t *goneTransport) timedOut(r *http.Request) error {
	return &TimeoutError{Server: t.server, Method: r.Method, Path: r.URL.Path, Timeout: t.timeout}
}

// CloseIdleConnections closes the base transport's idle connections.
func (t *goneTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// goneBody reports a connection that fails while a response streams in as
// a *GoneError too, and a server silent past the timeout during a read as
// a *TimeoutError.
type goneBody struct {
	io.ReadCloser
	t *goneTransport
	r *http.Request
	w *watchdog // nil: no timeout
}

func (b *goneBody) Read(p []byte) (int, error) {
	if b.w != nil {
		b.w.resume()
	}
	n, err := b.ReadCloser.Read(p)
	if b.w != nil {
		b.w.pause()
		if err != nil && !errors.Is(err, io.EOF) && b.w.fired() {
			return n, b.t.timedOut(b.r)
		}
	}
	if err != nil && !errors.Is(err, io.EOF) && b.r.Context().Err() == nil {
		err = &GoneError{Server: b.t.server, Err: err}
	}
	return n, err
}

// Close closes the body and releases the request's watchdog.
func (b *goneBody) Close() error {
	err := b.ReadCloser.Close()
	if b.w != nil {
		b.w.stop()
	}
	return err
}

// uploadBody is a request body under a watchdog: while the transport waits
// on the caller's reader the server is not the one keeping it waiting.
type uploadBody struct {
	io.ReadCloser
	w *watchdog
}

func (u *uploadBody) Read(p []byte) (int, error) {
	u.w.pause()
	n, err := u.ReadCloser.Read(p)
	u.w.resumeUpload()
	return n, err
}

// watchdog cancels a request (with errSilent) once it has run for d
// without being paused: it runs only while the client waits on the server.
type watchdog struct {
	d      time.Duration
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	t      *time.Timer
	done   bool // stopped for good
	fire   bool // it cancelled the request
	// headers: the response headers came; from then on only the caller's
	// reads of the response body run it.
	headers bool
}

func (w *watchdog) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t = time.AfterFunc(w.d, func() {
		w.mu.Lock()
		if !w.done {
			w.fire = true
		}
		w.mu.Unlock()
		w.cancel(errSilent)
	})
}

func (w *watchdog) pause() {
	w.mu.Lock()
	w.t.Stop()
	w.mu.Unlock()
}

func (w *watchdog) resume() {
	w.mu.Lock()
	if !w.done && !w.fire {
		w.t.Reset(w.d)
	}
	w.mu.Unlock()
}

// resumeUpload resumes after a read of the request body, unless the
// answer has come (the transport may still be sending the body).
func (w *watchdog) resumeUpload() {
	w.mu.Lock()
	if !w.done && !w.fire && !w.headers {
		w.t.Reset(w.d)
	}
	w.mu.Unlock()
}

// answered pauses the watchdog once the response headers came.
func (w *watchdog) answered() {
	w.mu.Lock()
	w.headers = true
	w.t.Stop()
	w.mu.Unlock()
}

// stop ends the watchdog and releases the request's context.
func (w *watchdog) stop() {
	w.mu.Lock()
	w.done = true
	w.t.Stop()
	w.mu.Unlock()
	w.cancel(nil)
}

func (w *watchdog) fired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fire
}

// fileAbove is the nearest path above dir that exists and is not a
// directory (dir's parent when none is found).
func fileAbove(dir string) string {
	for p := filepath.Dir(dir); p != filepath.Dir(p); p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return filepath.Dir(dir)
}
