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
	"strings"
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

// Client reaches one memory server. Requests go to BaseURL + path through
// HTTP. HTTP has no overall timeout (an export streams for as long as it
// needs): bound a request with its context. A failed connection — the
// server killed mid-request included — is returned at once as a *GoneError;
// nothing is retried except what net/http retries itself (a request never
// written to a connection that had gone stale).
type Client struct {
	HTTP    *http.Client
	BaseURL string // "http://engine" over the socket; the server's URL remotely
	Server  string // the socket path or the server's URL, for messages
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
	case err != nil:
		return nil, fmt.Errorf("memory server: %w", err)
	case fi.Mode().Type() != os.ModeSocket:
		return nil, engine.Invalidf("data dir", "%s is not a socket (%s)", sock, describeMode(fi.Mode()))
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
	return &Client{
		HTTP:    &http.Client{Transport: &goneTransport{base: tr, server: sock}},
		BaseURL: unixBaseURL,
		Server:  sock,
	}, nil
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
	return &Client{
		HTTP:    &http.Client{Transport: &goneTransport{base: tr, server: base, token: token}},
		BaseURL: base,
		Server:  base,
	}, nil
}

// goneTransport adds the bearer token and turns connection failures into
// *GoneError. It never retries.
type goneTransport struct {
	base   http.RoundTripper
	server string
	token  string
}

func (t *goneTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		if r.Context().Err() != nil {
			// The caller gave up: not the server's doing.
			return nil, err
		}
		return nil, &GoneError{Server: t.server, Err: err}
	}
	resp.Body = &goneBody{ReadCloser: resp.Body, t: t, ctx: r.Context()}
	return resp, nil
}

// CloseIdleConnections closes the base transport's idle connections.
func (t *goneTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// goneBody reports a connection that fails while a response streams in as
// a *GoneError too.
type goneBody struct {
	io.ReadCloser
	t   *goneTransport
	ctx context.Context
}

func (b *goneBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && b.ctx.Err() == nil {
		err = &GoneError{Server: b.t.server, Err: err}
	}
	return n, err
}
