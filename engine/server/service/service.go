// Package service is the process lifecycle of the memory server (`engine
// serve`) around any http.Handler: the unix socket <data-dir>/engine.sock
// (mode 0600, stale sockets replaced, re-created when deleted), an optional
// TCP listener guarded by a bearer token kept in <data-dir>/serve.token, the
// http.Server's timeouts, and a graceful shutdown when the context ends. Its
// client half (Dial, DialRemote) is how the CLI and agents find and reach a
// server, and tell "nobody serves this data dir" apart from real failures.
//
// The caller opens the memory first (memory.Open takes the data dir's lock)
// and closes it after Serve returns: holding the lock is what makes any
// socket file already at <data-dir>/engine.sock stale.
package service

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/engine-dev/engine/engine"
)

// Files in the data dir.
const (
	// SocketName is the unix socket a server listens on.
	SocketName = "engine.sock"
	// TokenName holds the bearer token TCP clients must send.
	TokenName = "serve.token"
)

// Defaults and limits of the http.Server.
const (
	// DefaultShutdownTimeout bounds how long a shutdown waits for in-flight
	// requests before it closes their connections.
	DefaultShutdownTimeout = 10 * time.Second
	// DefaultWatchInterval is how often a running server checks that its
	// socket file is still the one it listens on.
	DefaultWatchInterval = time.Second
	// ReadHeaderTimeout bounds reading a request's headers (slow clients,
	// slowloris). Bodies have no server-wide bound: the handler sets read
	// deadlines per request with http.ResponseController (engine/api: a
	// pause and a whole body, per route limits), so an import may upload for
	// as long as it keeps sending.
	ReadHeaderTimeout = 10 * time.Second
	// IdleTimeout closes keep-alive connections idle this long, so idle
	// clients do not keep descriptors and connection slots (MaxConns) for
	// long. It is longer than the clients' idle timeout (clientIdleTimeout),
	// so a client drops an idle connection before the server does and never
	// sends a request into a connection the server is closing.
	IdleTimeout = 30 * time.Second
	// DefaultMaxConns caps the connections served at once (unix socket and
	// TCP together); the next client waits in the listen queue until one
	// closes.
	DefaultMaxConns = 256
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes = 64 << 10
	// DefaultResolveTimeout bounds resolving a host name in Options.Listen:
	// a resolver that never answers must not hold a start without a word.
	DefaultResolveTimeout = 10 * time.Second
)

// SocketPath is the unix socket of dataDir's server.
func SocketPath(dataDir string) string { return filepath.Join(dataDir, SocketName) }

// TokenPath is the file holding dataDir's TCP bearer token.
func TokenPath(dataDir string) string { return filepath.Join(dataDir, TokenName) }

// maxSocketPath is the longest path a unix socket address holds (sun_path
// less its terminating NUL: 107 bytes on Linux, 103 on the BSDs).
var maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// Options configure a Server.
type Options struct {
	// Listen, when set, also serves TCP on this address (127.0.0.1:PORT;
	// port 0 picks one, see Server.Addr). TCP requests need the bearer
	// token. A non-loopback address is refused unless AllowRemote.
	Listen string
	// AllowRemote allows Listen on an address other hosts reach.
	AllowRemote bool
	// Logger receives the server's lines (socket replaced or re-created,
	// forced shutdown, http.Server errors); nil discards them.
	Logger *slog.Logger
	// ShutdownTimeout bounds the wait for in-flight requests once the
	// context ends (0: DefaultShutdownTimeout).
	ShutdownTimeout time.Duration
	// WatchInterval is how often the socket file is checked (0:
	// DefaultWatchInterval; negative: never).
	WatchInterval time.Duration
	// Middleware, when set, wraps the served handler outside the token
	// check, so it sees every request, refused ones too (metrics, access
	// logs). The request it passes on must be the one it got (not a
	// copy): net/http's ServeMux records the matched pattern on it.
	Middleware func(http.Handler) http.Handler
	// Sessions, when set, says which TCP requests a browser session may
	// authenticate (the inspector's pages): only there does ?token= start
	// a session and the session cookie count. Every other request needs
	// the bearer header (or the socket). nil: no request.
	Sessions func(*http.Request) bool
	// Authenticate, when set, resolves a TCP request's bearer token (or
	// its browser session's) other than serve.token: engine serve hands it
	// the scoped tokens of its store (engine/api.Authenticator). nil:
	// serve.token alone.
	Authenticate Authenticator
	// Public, when set, says which TCP requests need no token: those that
	// read nothing of memory (api.Public: the API's own description).
	Public func(*http.Request) bool
	// ConnState, when set, is told of every connection's state changes
	// (http.Server.ConnState), as a count of open connections needs.
	ConnState func(net.Conn, http.ConnState)
	// MaxConns caps the connections served at once over every listener
	// (0: DefaultMaxConns); a connection past it is accepted only once
	// another closes.
	MaxConns int
	// ResolveTimeout bounds resolving Listen's host name (0:
	// DefaultResolveTimeout).
	ResolveTimeout time.Duration
}

// Server serves one http.Handler for one data dir. Open listens, Serve
// serves until its context ends, Close stops at once.
type Server struct {
	dataDir string
	dirID   os.FileInfo // dataDir at Open: the watchdog tells it was deleted
	sock    string
	opts    Options
	log     *slog.Logger
	srv     *http.Server

	token        string
	tokenCreated bool
	tcp          net.Listener  // nil without Options.Listen
	conns        chan struct{} // one slot per connection served (Options.MaxConns)

	baseCancel context.CancelFunc // cancels every request's context (forced shutdown)
	handlers   tracker            // the handlers running
	fresh      tracker            // connections accepted whose first request is not read yet
	freshConns sync.Map           // net.Conn → struct{}: those connections

	mu      sync.Mutex
	drainer *drainingListener // the unix listener being served, for the drain at shutdown
	unix    *net.UnixListener // the listener behind sock
	unixID  fileID            // the inode sock had when we put it there
	started bool              // Serve was called
	closed  bool              // Close was called or Serve returned

	serving sync.WaitGroup // one per http.Server.Serve goroutine
	errc    chan error     // a listener failed
	closeCh chan struct{}  // Close was called
	closeMu sync.Once
	done    chan struct{} // Serve returned
}

// Open listens on <dataDir>/engine.sock (replacing a stale socket there)
// and, with opts.Listen, on TCP (creating or reading the token). The caller
// must hold dataDir's memory open (and so its lock) until Serve returns, and
// must call Serve or Close.
func Open(ctx context.Context, dataDir string, h http.Handler, opts Options) (*Server, error) {
	if h == nil {
		return nil, errors.New("service: nil handler")
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.WatchInterval == 0 {
		opts.WatchInterval = DefaultWatchInterval
	}
	if opts.MaxConns == 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.MaxConns < 0 {
		return nil, engine.Invalidf("memory server", "at most %d connections: want at least 1", opts.MaxConns)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{
		dataDir: dataDir,
		sock:    SocketPath(dataDir),
		opts:    opts,
		log:     log,
		errc:    make(chan error, 1),
		conns:   make(chan struct{}, opts.MaxConns),
		closeCh: make(chan struct{}),
		done:    make(chan struct{}),
	}
	if err := checkSocketPath(s.sock); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	removeTempDirs(dataDir)
	removeTempTokens(dataDir)
	s.dirID, _ = os.Stat(dataDir)
	auth := &authHandler{next: h, run: &s.handlers, browser: opts.Sessions, authenticate: opts.Authenticate, public: opts.Public}
	var served http.Handler = auth
	if opts.Middleware != nil {
		served = opts.Middleware(auth)
	}
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.baseCancel = cancel
	s.srv = &http.Server{
		Handler:           s.reached(served),
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return base },
		ConnContext:       s.connContext,
		ConnState:         s.connState,
	}
	if opts.Listen != "" && !opts.AllowRemote {
		// Refused before the token is made: bad input writes nothing.
		if host, _, err := net.SplitHostPort(opts.Listen); err == nil {
			if ip := net.ParseIP(host); host == "" || ip != nil && !ip.IsLoopback() {
				cancel()
				return nil, remoteErr(opts.Listen, ip)
			}
		}
	}
	if opts.Listen != "" {
		if err := CheckListen(opts.Listen); err != nil {
			cancel()
			return nil, err
		}
		tok, created, err := EnsureToken(dataDir)
		if err != nil {
			cancel()
			return nil, err
		}
		s.token, s.tokenCreated = tok, created
		auth.setToken(tok)
		ln, err := listenTCP(ctx, opts.Listen, cmp.Or(opts.ResolveTimeout, DefaultResolveTimeout))
		if err != nil {
			cancel()
			return nil, err
		}
		if ta, ok := ln.Addr().(*net.TCPAddr); ok && !ta.IP.IsLoopback() {
			if !opts.AllowRemote { // a host name that resolved to a remote address
				ln.Close()
				cancel()
				return nil, remoteErr(opts.Listen, ta.IP)
			}
			log.Warn("memory server listens on a non-loopback address without TLS: the bearer token travels in clear", "addr", ln.Addr().String())
		}
		s.tcp = ln
	}
	ln, id, err := s.listenUnix()
	if err != nil {
		if s.tcp != nil {
			s.tcp.Close()
		}
		cancel()
		return nil, err
	}
	s.unix, s.unixID = ln, id
	return s, nil
}

// CheckListen refuses a --listen address that is not HOST:PORT with a
// port from 0 to 65535 (or a service name), before anything is opened or
// a token made.
func CheckListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return engine.Invalidf("memory server", "--listen %s: want HOST:PORT, such as 127.0.0.1:7070 (%v)", addr, err)
	}
	return nil
}

// remoteErr refuses to listen on a non-loopback address without
// Options.AllowRemote.
func remoteErr(addr string, ip net.IP) error {
	what := "every address"
	if ip != nil && !ip.IsUnspecified() {
		what = ip.String()
	}
	return engine.Invalidf("memory server", "--listen %s serves %s, not only loopback: anyone who reaches it may try the token, which travels in clear. "+
		"Serve 127.0.0.1:PORT behind a TLS reverse proxy, or pass --allow-remote", addr, what)
}

// listenTCP listens on addr, its host name resolved within resolve (and
// while ctx lasts).
func listenTCP(ctx context.Context, addr string, resolve time.Duration) (net.Listener, error) {
	rctx, cancel := context.WithTimeout(ctx, resolve)
	defer cancel()
	var lc net.ListenConfig
	ln, err := lc.Listen(rctx, listenNetwork(addr), addr)
	if err != nil {
		if ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
			host, _, _ := net.SplitHostPort(addr)
			return nil, fmt.Errorf("memory server: listen on %s: the host name %q did not resolve within %s (is DNS reachable? an IP address, as 127.0.0.1:PORT, needs no lookup): %w", addr, host, resolve, err)
		}
		return nil, fmt.Errorf("memory server: listen on %s: %w", addr, err)
	}
	return ln, nil
}

// listenNetwork is "tcp4" for an IPv4 address (0.0.0.0 binds IPv4 only,
// not every IPv6 address too), else "tcp".
func listenNetwork(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "tcp"
	}
	if ip := net.ParseIP(host); ip != nil && ip.To4() != nil {
		return "tcp4"
	}
	return "tcp"
}

// SocketPath is the unix socket the server listens on.
func (s *Server) SocketPath() string { return s.sock }

// Addr is the TCP address served, nil without Options.Listen.
func (s *Server) Addr() net.Addr {
	if s.tcp == nil {
		return nil
	}
	return s.tcp.Addr()
}

// Token is the bearer token TCP clients must send ("" without
// Options.Listen); TokenCreated says Open generated it (first start), so
// the CLI can print it once.
func (s *Server) Token() string { return s.token }

// TokenCreated reports whether Open generated the token.
func (s *Server) TokenCreated() bool { return s.tokenCreated }

// Serve serves until ctx ends, then shuts down: the socket watchdog stops,
// the socket file is removed (when it is still ours), the listeners close
// (new connections are refused) and in-flight requests get up to
// Options.ShutdownTimeout to finish; then their connections are closed and
// their contexts cancelled, and Serve waits up to another ShutdownTimeout
// for their handlers to return, so the caller can close the memory after
// it. It returns nil after a shutdown asked for by ctx or Close, or the
// error of a listener that failed.
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	if s.started || s.closed {
		s.mu.Unlock()
		return errors.New("service: Serve called twice or after Close")
	}
	s.started = true
	s.serveLocked(s.unix)
	if s.tcp != nil {
		s.serveLocked(s.tcp)
	}
	s.mu.Unlock()
	defer close(s.done)

	stopWatch := make(chan struct{})
	watchDone := make(chan struct{})
	if s.opts.WatchInterval > 0 {
		go s.watch(stopWatch, watchDone)
	} else {
		close(watchDone)
	}

	grace := s.opts.ShutdownTimeout
	var err error
	select {
	case <-ctx.Done():
	case <-s.closeCh:
		grace = 0
	case err = <-s.errc:
	}
	close(stopWatch)
	<-watchDone
	s.shutdown(grace)
	return err
}

// Close stops the server at once: in-flight requests are cut off (their
// contexts cancelled; Close waits up to ShutdownTimeout for their handlers
// to return). After
// Serve it does nothing; before Serve (or instead of it) it closes the
// listeners and removes the socket. A running Serve returns.
func (s *Server) Close() error {
	s.closeMu.Do(func() { close(s.closeCh) })
	s.mu.Lock()
	started, closed := s.started, s.closed
	s.closed = true
	s.mu.Unlock()
	switch {
	case started:
		<-s.done
	case !closed:
		s.shutdown(0)
	}
	return nil
}

// serveLocked serves ln in a goroutine; a failure other than the server or
// the listener being closed is reported on errc.
func (s *Server) serveLocked(ln net.Listener) {
	if u, ok := ln.(*net.UnixListener); ok {
		d := &drainingListener{UnixListener: u, done: make(chan struct{})}
		s.drainer, ln = d, d
	}
	ln = &limitListener{Listener: ln, slots: s.conns, done: make(chan struct{})}
	s.serving.Add(1)
	go func() {
		defer s.serving.Done()
		err := s.srv.Serve(ln)
		if err == nil || errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
			return
		}
		select {
		case s.errc <- fmt.Errorf("memory server: serve %s: %w", ln.Addr(), err):
		default:
		}
	}()
}

// shutdown removes the socket (if ours), closes the listeners and waits up
// to grace for in-flight requests.
func (s *Server) shutdown(grace time.Duration) {
	s.mu.Lock()
	s.closed = true
	ln, id, drainer := s.unix, s.unixID, s.drainer
	s.mu.Unlock()
	s.removeSocketIfOurs(id)
	if grace > 0 && drainer != nil {
		// No client can connect any more; serve those that already did.
		// net/http drops, unanswered, a request it reads once Shutdown has
		// begun, so wait (bounded) until every accepted connection's first
		// request has reached its handler (it then runs to its end under
		// Shutdown).
		drainer.drain(grace)
		select {
		case <-s.fresh.idle():
		case <-time.After(min(grace, freshWait)):
		}
	}
	if grace > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		err := s.srv.Shutdown(ctx)
		cancel()
		if err != nil {
			s.log.Warn("memory server: requests still running after the shutdown timeout; closing their connections", "timeout", grace.String())
		}
	}
	s.srv.Close()
	s.baseCancel()
	// srv.Close does not wait for handlers: wait (bounded) for the ones it
	// cut off to see their cancelled context and return, so the caller does
	// not close the memory under them.
	if n := s.handlers.count(); n > 0 {
		select {
		case <-s.handlers.idle():
		case <-time.After(s.opts.ShutdownTimeout):
			s.log.Error("memory server: handlers still running after their requests were cancelled; returning anyway", "handlers", s.handlers.count(), "waited", s.opts.ShutdownTimeout.String())
		}
	}
	// Listeners never handed to srv.Serve (Close before Serve) are not
	// closed by srv.Close.
	ln.Close()
	if s.tcp != nil {
		s.tcp.Close()
	}
	s.serving.Wait()
}

// tracker counts running handlers and says when none is left.
type tracker struct {
	mu      sync.Mutex
	n       int
	waiters []chan struct{}
}

func (t *tracker) add() {
	t.mu.Lock()
	t.n++
	t.mu.Unlock()
}

func (t *tracker) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n--
	if t.n == 0 {
		for _, w := range t.waiters {
			close(w)
		}
		t.waiters = nil
	}
}

func (t *tracker) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// idle is closed once no handler runs.
func (t *tracker) idle() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch := make(chan struct{})
	if t.n == 0 {
		close(ch)
	} else {
		t.waiters = append(t.waiters, ch)
	}
	return ch
}

// freshWait bounds how long a stopping server waits for a client that
// connected to send its request.
const freshWait = 5 * time.Second

// connState counts the connections whose first request has not reached
// its handler: from their acceptance until reached sees the request, or
// until they close without one.
func (s *Server) connState(c net.Conn, st http.ConnState) {
	if s.opts.ConnState != nil {
		s.opts.ConnState(c, st)
	}
	switch st {
	case http.StateNew:
		s.freshConns.Store(c, struct{}{})
		s.fresh.add()
	case http.StateClosed, http.StateHijacked:
		s.firstRequest(c)
	}
}

// firstRequest takes c off the fresh connections.
func (s *Server) firstRequest(c net.Conn) {
	if _, ok := s.freshConns.LoadAndDelete(c); ok {
		s.fresh.done()
	}
}

// reached wraps the handler: a request that reaches it is past the point
// where net/http drops requests read during Shutdown, so its connection
// is no longer fresh.
func (s *Server) reached(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
			s.firstRequest(c)
		}
		body := r.Body
		next.ServeHTTP(w, r)
		drainUnread(w, r, body)
	})
}

// drainMax is the largest request body a server reads to its end after
// its handler answered without reading it (drainUnread); drainWait bounds
// that read.
const (
	drainMax  = 1 << 20
	drainWait = 2 * time.Second
)

// drainUnread sends the handler's answer and then reads what is left of
// the request body (at most drainMax bytes, within drainWait), when the
// handler answered from the headers alone (a refusal: unknown namespace,
// missing token, wrong content type) on a connection its client asked to
// close (the unix-socket client does, Dial). net/http reads such a body
// itself only on a connection it keeps, and closes this one with the body
// unread: a client that sends its body after its headers then meets a
// closed socket and reports "broken pipe" instead of the answer. A body
// read to its end (every request a handler took) costs one look at its
// state. A larger body, one that does not come within drainWait, or one
// whose client waits for 100 Continue (it has sent nothing) is left: the
// connection closes at once, as before.
func drainUnread(w http.ResponseWriter, r *http.Request, body io.ReadCloser) {
	// A connection net/http keeps has its body read by net/http, and its
	// read deadline must stay net/http's: a read that fails on it would
	// cancel the context of every later request on that connection.
	if !r.Close || body == nil || body == http.NoBody || r.ContentLength <= 0 || r.ContentLength > drainMax ||
		strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		return
	}
	// An empty read never waits: io.EOF (or an error) when the body is at
	// its end, closed or broken, nil while more of it is to come.
	if _, err := body.Read(nil); err != nil {
		return
	}
	rc := http.NewResponseController(w)
	if rc.Flush() != nil || rc.SetReadDeadline(time.Now().Add(drainWait)) != nil {
		return
	}
	if _, err := io.CopyN(io.Discard, body, drainMax); errors.Is(err, io.EOF) {
		rc.SetReadDeadline(time.Time{})
		return
	}
	rc.SetReadDeadline(time.Now()) // net/http's own read of the rest fails at once
}

// connKey is the context key of a request's connection.
type connKey struct{}

// connContext marks requests that came over the unix socket: they need no
// token (the socket's mode is their authentication).
func (s *Server) connContext(ctx context.Context, c net.Conn) context.Context {
	ctx = context.WithValue(ctx, connKey{}, c)
	if Listener(c) == "unix" {
		return context.WithValue(ctx, viaUnixKey{}, true)
	}
	return ctx
}

// Listener is "unix" or "tcp": which of a server's listeners accepted c
// (a connection it wraps, under the connection cap, included).
func Listener(c net.Conn) string {
	if lc, ok := c.(*limitConn); ok {
		c = lc.Conn
	}
	if _, ok := c.(*net.UnixConn); ok {
		return "unix"
	}
	return "tcp"
}

type viaUnixKey struct{}

// fileID identifies a file: the socket we created versus one put in its
// place.
type fileID struct {
	dev, ino uint64
}

func lstatID(path string) (fileID, os.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileID{}, nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, fi, fmt.Errorf("memory server: no inode for %s", path)
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, fi, nil
}

// tempPrefix names the private directories a socket is created in before
// it is renamed into place; tempSuffixLen random hex digits follow.
const (
	tempPrefix    = ".sock."
	tempSuffixLen = 8
)

// tempExtra is how much longer the temporary socket path
// (<data-dir>/.sock.XXXXXXXX/s) is than <data-dir>/engine.sock.
var tempExtra = len(tempPrefix) + tempSuffixLen + len("/s") - len(SocketName)

func checkSocketPath(sock string) error {
	limit := maxSocketPath - max(tempExtra, 0)
	if len(sock) > limit {
		return engine.Invalidf("data dir", "socket path %s is %d bytes, longer than the %d a unix socket allows here: use a shorter data dir path", sock, len(sock), limit)
	}
	return nil
}

// listenUnix creates the socket at s.sock: it binds in a fresh 0700
// directory inside the data dir (nobody else can reach the socket there,
// whatever the umask), sets the socket's mode to 0600, and renames it into
// place, which atomically replaces a stale socket. A path holding anything
// but a socket is refused, never deleted.
func (s *Server) listenUnix() (*net.UnixListener, fileID, error) {
	if err := s.checkReplaceable(false); err != nil {
		return nil, fileID{}, err
	}
	dir, err := makeTempDir(s.dataDir)
	if err != nil {
		return nil, fileID{}, fmt.Errorf("memory server: %w", err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fileID{}, fmt.Errorf("memory server: listen on %s: %w", s.sock, err)
	}
	// The file is renamed away and removed by us (only while it is ours),
	// not by the listener's Close.
	ln.SetUnlinkOnClose(false)
	fail := func(err error) (*net.UnixListener, fileID, error) {
		ln.Close()
		return nil, fileID{}, err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fail(fmt.Errorf("memory server: %w", err))
	}
	id, _, err := lstatID(tmp)
	if err != nil {
		return fail(err)
	}
	if err := s.checkReplaceable(true); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, s.sock); err != nil {
		return fail(fmt.Errorf("memory server: put socket in place: %w", err))
	}
	return ln, id, nil
}

// checkReplaceable accepts a missing path or a socket (stale: the caller
// holds the data dir's lock, so no other engine serves it), and refuses
// anything else. With report it logs the socket it accepts, which the
// caller then replaces (the check before binding only refuses early).
func (s *Server) checkReplaceable(report bool) error {
	fi, err := os.Lstat(s.sock)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("memory server: %w", err)
	case fi.Mode().Type() == os.ModeSocket:
		if !report {
			return nil
		}
		c, derr := net.DialTimeout("unix", s.sock, time.Second)
		if derr == nil {
			c.Close()
			s.log.Warn("memory server: replacing a socket another process still answers on (it does not hold the data dir)", "socket", s.sock)
		} else {
			s.log.Info("memory server: replacing stale socket", "socket", s.sock, "reason", derr.Error())
		}
		return nil
	default:
		return engine.Invalidf("data dir", "%s exists and is not a socket (%s): move it away; the memory server only replaces stale sockets", s.sock, describeMode(fi.Mode()))
	}
}

func describeMode(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	default:
		return "mode " + m.String()
	}
}

func makeTempDir(dataDir string) (string, error) {
	for range 100 {
		var b [tempSuffixLen / 2]byte
		rand.Read(b[:])
		dir := filepath.Join(dataDir, fmt.Sprintf("%s%x", tempPrefix, b))
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
	return "", errors.New("cannot create a temporary socket directory")
}

// removeTempDirs removes temporary socket directories a killed server left.
func removeTempDirs(dataDir string) {
	matches, _ := filepath.Glob(filepath.Join(dataDir, tempPrefix+"*"))
	for _, m := range matches {
		if len(filepath.Base(m)) == len(tempPrefix)+tempSuffixLen {
			os.RemoveAll(m)
		}
	}
}

// removeSocketIfOurs removes the socket file when it is still the one we
// created (another process may have replaced it).
func (s *Server) removeSocketIfOurs(id fileID) {
	got, _, err := lstatID(s.sock)
	if err == nil && got == id {
		os.Remove(s.sock)
	}
}

// dataDirGone is an error when the data dir is no longer the one served
// (deleted, or another in its place): its memory cannot be written, nor
// closed cleanly, and the server stops rather than serve errors.
func (s *Server) dataDirGone() error {
	if s.dirID == nil {
		return nil
	}
	fi, err := os.Stat(s.dataDir)
	if err == nil && os.SameFile(fi, s.dirID) {
		return nil
	}
	what := "deleted"
	if err == nil {
		what = "replaced by another directory"
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil // unreadable for now (permissions): the socket check reports it
	}
	return fmt.Errorf("memory server: data dir %s was %s while serving; stopped", s.dataDir, what)
}

// watch re-creates the socket file when it is deleted or replaced under
// the running server, until stop is closed; it stops the server (an error
// on errc) when the data dir itself is gone.
func (s *Server) watch(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(s.opts.WatchInterval)
	defer t.Stop()
	var lastErr string // logged once until it changes
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if err := s.dataDirGone(); err != nil {
			select {
			case s.errc <- err:
			default:
			}
			return
		}
		s.mu.Lock()
		want := s.unixID
		s.mu.Unlock()
		got, _, err := lstatID(s.sock)
		if err == nil && got == want {
			lastErr = ""
			continue
		}
		what := "deleted"
		if err == nil {
			what = "replaced"
		} else if !errors.Is(err, os.ErrNotExist) {
			what = err.Error()
		}
		ln, id, err := s.listenUnix()
		if err != nil {
			if err.Error() != lastErr {
				s.log.Error("memory server: socket file "+what+"; cannot re-create it", "socket", s.sock, "err", err.Error())
				lastErr = err.Error()
			}
			continue
		}
		lastErr = ""
		s.mu.Lock()
		old := s.unix
		s.unix, s.unixID = ln, id
		s.serveLocked(ln)
		s.mu.Unlock()
		old.Close()
		s.log.Warn("memory server: socket file "+what+"; re-created it", "socket", s.sock)
	}
}

// drainingListener lets the server take every connection that was already
// queued on the unix socket when its file was removed, before the listener
// closes: a client that connected before the server began to stop is
// served, and one that comes later finds no socket and looks elsewhere
// (engine/server/attach holds the data dir itself), so a graceful stop never
// drops a request that a client may not safely resend. Once draining, it
// takes queued connections with non-blocking accepts until the kernel says
// the queue is empty (EAGAIN): no timer decides, so a busy machine cannot
// make it stop early.
type drainingListener struct {
	*net.UnixListener
	draining atomic.Bool
	once     sync.Once
	done     chan struct{} // closed when the queue was found empty
}

func (l *drainingListener) Accept() (net.Conn, error) {
	if !l.draining.Load() {
		c, err := l.UnixListener.Accept()
		if err == nil || !l.draining.Load() {
			return c, err
		}
		if c != nil {
			return c, nil
		}
		// drain woke this Accept with a deadline in the past.
	}
	l.UnixListener.SetDeadline(time.Time{})
	c, err := l.acceptQueued()
	if errors.Is(err, net.ErrClosed) {
		l.once.Do(func() { close(l.done) })
	}
	return c, err
}

// acceptQueued accepts one queued connection without waiting; an empty
// queue is net.ErrClosed.
func (l *drainingListener) acceptQueued() (net.Conn, error) {
	rc, err := l.UnixListener.SyscallConn()
	if err != nil {
		return nil, err
	}
	nfd, aerr := -1, error(nil)
	syscall.ForkLock.RLock() // the new descriptor is not close-on-exec until FileConn dups it
	defer syscall.ForkLock.RUnlock()
	// The listener's descriptor is non-blocking: one accept, never a wait.
	if err := rc.Control(func(fd uintptr) {
		nfd, _, aerr = syscall.Accept(int(fd))
	}); err != nil {
		return nil, err
	}
	switch {
	case errors.Is(aerr, syscall.EAGAIN):
		return nil, net.ErrClosed
	case aerr != nil:
		return nil, &net.OpError{Op: "accept", Net: "unix", Err: aerr}
	}
	f := os.NewFile(uintptr(nfd), "engine.sock connection")
	c, err := net.FileConn(f)
	f.Close()
	return c, err
}

// drain takes the queued connections and then stops accepting, waiting at
// most bound for that.
func (l *drainingListener) drain(bound time.Duration) {
	l.draining.Store(true)
	l.UnixListener.SetDeadline(time.Now()) // wakes a waiting Accept
	select {
	case <-l.done:
	case <-time.After(bound):
	}
}

// limitListener accepts a connection only while a slot of slots (shared by
// every listener of a server) is free; the connection's Close frees it.
// A client past the cap waits in the kernel's listen queue, as it would
// for a busy server, rather than being refused.
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{} // closed by Close: a wait for a slot ends
	once  sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, slots: l.slots}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn is a connection holding a slot of its listener.
type limitConn struct {
	net.Conn
	slots chan struct{}
	once  sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { <-c.slots })
	return err
}
