// Package attach gives a process its way to a data dir's memory: the memory
// API (package api) of whoever holds the data dir. That is a memory server
// when one answers on the data dir's socket (or the remote server a caller
// names); otherwise this process opens the data dir itself and reaches it
// through the same API in process — and, for a long-lived user such as an
// agent run, serves it on the socket so other processes reach it too.
//
// When the server a process is attached to goes away between requests
// (it was an agent run that ended, or it was killed), the next request
// finds memory again — the next server, or the data dir itself — and is
// sent there. A request the server may already have received is never
// sent twice: only a failure to connect is retried.
package attach

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/server/service"
	"github.com/engine-dev/engine/engine/trust/redact"
)

// Options configure Open.
type Options struct {
	// Server and Token name a remote memory server (ENGINE_SERVER,
	// ENGINE_TOKEN); "" finds memory through the data dir.
	Server, Token string
	// Events receives the memory events of every request (--events).
	Events event.Func
	// Now fixes the clock of every request (ENGINE_NOW): a memory server
	// honours it only when its own clock is fixed; the data dir opened here
	// always does.
	Now time.Time
	// Clock is the clock of the memory when this process opens it (nil:
	// time.Now).
	Clock func() time.Time
	// LockWait is how long to wait for another process to release the data
	// dir (0: memory.DefaultLockWait).
	LockWait time.Duration
	// Serve makes a process that opens the data dir itself serve it on the
	// data dir's socket for as long as it is attached (an agent run), so
	// other processes go through it instead of waiting for the lock.
	Serve bool
	// Logger receives the serving side's log lines (nil: discarded).
	Logger *slog.Logger
	// OpenStore, when set, opens the shared store memory lives in (etcd;
	// memory.Options.OpenStore) when this process holds memory itself
	// instead of the data dir's database: no lock is taken, so processes
	// on other data dirs (other machines) hold the same memory at once. A
	// server on the data dir's socket is still used as it is (it was
	// started with its own store).
	OpenStore memory.StoreOpener
	// Redact configures the redaction of what is written when the data dir
	// is opened here (api.Options.Redact; ENGINE_KEEP_CONTACTS); a server
	// redacts by its own.
	Redact redact.Options
	// Namespace names the namespace of the store every request runs in
	// (--namespace, ENGINE_NAMESPACE; the Engine-Namespace header); ""
	// is the default namespace, or a server's own.
	Namespace string
	// HistoryKeep is how many past versions of each record the stores keep
	// when the data dir is opened here (memory.Options.HistoryKeep;
	// ENGINE_HISTORY_KEEP; 0: their default); a server keeps its own.
	HistoryKeep int
	// Timeout is how long a memory server may stay silent on a request
	// (service.Client.WithTimeout; ENGINE_TIMEOUT) before the request fails
	// with a *service.TimeoutError naming it; 0: no limit. Memory held in
	// this process has none: it cannot stop answering on its own.
	Timeout time.Duration
	// Warn receives, once per attachment, what the caller should know but
	// which does not stop it: something other than a socket at the data
	// dir's socket path, so the data dir is opened here. nil: not said.
	Warn func(msg string)
}

// Memory is a process's attachment to a data dir's memory: an API client
// whose requests go wherever the memory is held. Close detaches.
type Memory struct {
	*api.Client
	link *link
}

// Open attaches to the memory of dataDir (or of opts.Server).
func Open(ctx context.Context, dataDir string, opts Options) (*Memory, error) {
	copts := api.ClientOptions{Events: opts.Events, Now: opts.Now, Namespace: opts.Namespace}
	if opts.Server != "" {
		sc, err := service.DialRemote(opts.Server, opts.Token)
		if err != nil {
			return nil, err
		}
		sc = sc.WithTimeout(opts.Timeout)
		l := &link{cur: &holder{rt: sc.HTTP.Transport, where: sc.Server, close: func() error { sc.CloseIdleConnections(); return nil }}}
		return &Memory{Client: api.NewClient(&http.Client{Transport: l}, sc.BaseURL, copts), link: l}, nil
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	l := &link{dir: dataDir, opts: opts}
	if _, err := l.current(ctx); err != nil {
		return nil, err
	}
	return &Memory{Client: api.NewClient(&http.Client{Transport: l}, baseURL, copts), link: l}, nil
}

// Where says where the memory is held: "served by <socket>", "held here",
// "held here read-only" or "held here and served on <socket>".
func (m *Memory) Where() string {
	m.link.mu.Lock()
	defer m.link.mu.Unlock()
	if m.link.cur == nil {
		return "detached"
	}
	return m.link.cur.where
}

// Close detaches: a data dir held here stops being served (requests in
// flight from other processes finish first) and is closed.
func (m *Memory) Close() error {
	m.link.mu.Lock()
	defer m.link.mu.Unlock()
	if m.link.cur == nil {
		return nil
	}
	err := m.link.cur.close()
	m.link.cur = nil
	m.link.closed = true
	return err
}

// baseURL is the base of every request: the socket transport and the
// in-process one both ignore the host.
const baseURL = "http://engine"

// holder is one place the memory is held, as this process reaches it.
type holder struct {
	rt    http.RoundTripper
	where string
	close func() error
	// readOnly: the data dir is opened here read-only (see hold); busy
	// keeps it open while a request is served, so a write waiting to reopen
	// it read-write does not close it under a read.
	readOnly bool
	busy     sync.RWMutex
	reopened bool // closed by reopenForWrites (under busy)
}

// link is the http.RoundTripper of an attachment: it sends each request to
// the current holder and finds a new one when the current one is gone.
type link struct {
	dir    string
	opts   Options
	mu     sync.Mutex
	cur    *holder
	closed bool
	// writes: a request that writes was made, so the data dir is opened
	// read-write from then on.
	writes bool
	// notSocket: the data dir's socket path held something else when it
	// was last looked at, so the data dir is held here unserved; warned:
	// that was said (Options.Warn), which happens once.
	notSocket, warned bool
}

// errDetached is a request after Close.
var errDetached = errors.New("memory: detached (closed)")

func (l *link) RoundTrip(r *http.Request) (*http.Response, error) {
	h, err := l.holderFor(r)
	if err != nil {
		return nil, err
	}
	resp, err := h.send(r)
	for errors.Is(err, errReopened) {
		if h, err = l.holderFor(r); err != nil {
			return nil, err
		}
		resp, err = h.send(r)
	}
	if err == nil || l.dir == "" || !notConnected(err) || (r.Body != nil && r.GetBody == nil) {
		return resp, err
	}
	// The server went away before it got the request: find the memory
	// again and send it there.
	l.drop(h)
	h, err2 := l.holderFor(r)
	if err2 != nil {
		return nil, fmt.Errorf("%w; finding memory again: %w", err, err2)
	}
	r2 := r.Clone(r.Context())
	if r.GetBody != nil {
		if r2.Body, err2 = r.GetBody(); err2 != nil {
			return nil, err2
		}
	}
	return h.send(r2)
}

// holderFor returns the holder to send r to: the current one, unless r
// writes and the data dir is held here read-only, which is then reopened
// read-write.
func (l *link) holderFor(r *http.Request) (*holder, error) {
	if !reads(r) {
		l.mu.Lock()
		l.writes = true
		l.mu.Unlock()
	}
	h, err := l.current(r.Context())
	if err != nil || !h.readOnly || reads(r) {
		return h, err
	}
	l.reopenForWrites(h)
	return l.current(r.Context())
}

// errReopened is a request that reached a read-only holder a write had
// just closed: it was not sent, and goes to the next holder.
var errReopened = errors.New("memory: reopened for writes")

// send sends r to h; a data dir held here read-only stays open until the
// answer is back.
func (h *holder) send(r *http.Request) (*http.Response, error) {
	if h.readOnly {
		h.busy.RLock()
		defer h.busy.RUnlock()
		if h.reopened {
			return nil, errReopened
		}
	}
	return h.rt.RoundTrip(r)
}

// reads reports whether r only reads memory: a GET, or the error recall
// (a POST only because the error text is its body).
func reads(r *http.Request) bool {
	return r.Method == http.MethodGet || r.Method == http.MethodHead ||
		(r.Method == http.MethodPost && r.URL.Path == "/v1/recall/error")
}

// reopenForWrites closes h, a data dir held here read-only, once no read
// uses it, so the next holder found opens it read-write. Between the two
// the lock is free: another process may take the data dir, and the write
// then waits for it (LockWait) or goes through its socket.
func (l *link) reopenForWrites(h *holder) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur != h {
		return
	}
	h.busy.Lock()
	h.close()
	h.reopened = true
	h.busy.Unlock()
	l.cur = nil
}

// notConnected reports whether err is a failure to connect: the request
// was never sent.
func notConnected(err error) bool {
	var op *net.OpError
	return errors.Is(err, service.ErrNotServed) || (errors.As(err, &op) && op.Op == "dial")
}

// drop forgets h, the holder that went away, unless another request has
// already replaced it.
func (l *link) drop(h *holder) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == h {
		h.close()
		l.cur = nil
	}
}

// current returns the holder, finding it when there is none: the server on
// the data dir's socket, else the data dir opened here.
func (l *link) current(ctx context.Context) (*holder, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errDetached
	}
	if l.cur != nil {
		return l.cur, nil
	}
	for attempt := 0; ; attempt++ {
		sc, err := service.Dial(ctx, l.dir)
		if err == nil {
			sc = sc.WithTimeout(l.opts.Timeout)
			l.cur = &holder{rt: sc.HTTP.Transport, where: "served by " + sc.Server, close: func() error { sc.CloseIdleConnections(); return nil }}
			return l.cur, nil
		}
		if !errors.Is(err, service.ErrNotServed) {
			return nil, err
		}
		var ns *service.NotSocketError
		l.notSocket = errors.As(err, &ns)
		if l.notSocket && !l.warned {
			l.warned = true
			if l.opts.Warn != nil {
				l.opts.Warn(ns.Error() + "; opening the data dir here")
			}
		}
		h, err := l.hold(ctx)
		var locked *memory.LockedError
		if errors.As(err, &locked) && attempt == 0 {
			continue // a server took the data dir meanwhile: look again
		}
		if err != nil {
			return nil, err
		}
		l.cur = h
		return h, nil
	}
}

// hold opens the data dir here; with Serve it also serves it on its socket.
//
// A process that does not serve, and has made no write yet, opens it
// read-only when that answers the same (a settled store: schema current,
// seeds in; see memory.Options.SettledOnly): a read-only badger open
// creates no write-ahead log and no memtable, starts no compactor and
// writes nothing, which halves the CPU of a short read command. Its first
// write reopens the data dir read-write (reopenForWrites). A store that
// cannot be read that way (new, older schema, a log a kill left to
// replay, an import's journal to roll back) is opened read-write at once.
func (l *link) hold(ctx context.Context) (*holder, error) {
	opts := memory.Options{Now: l.opts.Clock, LockWait: l.opts.LockWait, OpenStore: l.opts.OpenStore, HistoryKeep: l.opts.HistoryKeep}
	readOnly := !l.opts.Serve && !l.writes
	var m *memory.Memory
	var err error
	if readOnly {
		ro := opts
		ro.ReadOnly, ro.SettledOnly, ro.SettledNamespace = true, true, l.opts.Namespace
		m, err = memory.Open(ctx, l.dir, ro)
		var locked *memory.LockedError
		if err != nil && (errors.As(err, &locked) || ctx.Err() != nil) {
			return nil, err
		}
	}
	if m == nil {
		readOnly = false
		if m, err = memory.Open(ctx, l.dir, opts); err != nil {
			return nil, err
		}
	}
	h := api.Handler(m, api.Options{AllowClock: !l.opts.Now.IsZero(), Logger: l.opts.Logger, Redact: l.opts.Redact, SpoolDir: l.dir})
	local := api.Local(h, api.ClientOptions{})
	held := &holder{rt: local.RoundTripper(), where: "held here", readOnly: readOnly}
	if readOnly {
		held.where = "held here read-only"
	}
	if !l.opts.Serve || l.notSocket {
		// Nothing can be served where the socket should be: other
		// processes wait for the data dir's lock instead.
		held.close = func() error { return errors.Join(local.Close(), m.Close()) }
		return held, nil
	}
	// Serving lives as long as the attachment, not the request that
	// happened to open it.
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	srv, err := service.Open(sctx, l.dir, h, service.Options{Logger: l.opts.Logger})
	if err != nil {
		stop()
		local.Close()
		m.Close()
		return nil, err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx) }()
	held.where = "held here and served on " + srv.SocketPath()
	held.close = func() error {
		stop() // other processes' requests in flight finish, then the socket goes
		serr := <-served
		return errors.Join(serr, local.Close(), m.Close())
	}
	return held, nil
}
