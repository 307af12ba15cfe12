package agentcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/cmd/internal/cli"
	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/server/browsermcp"
	"github.com/engine-dev/engine/engine/server/inspect"
	"github.com/engine-dev/engine/engine/server/mcp"
	"github.com/engine-dev/engine/engine/server/metrics"
	"github.com/engine-dev/engine/engine/server/service"
)

func init() {
	commandSets = append(commandSets, func(a *app) []*cobra.Command {
		return []*cobra.Command{a.serveCommand()}
	})
}

func (a *app) serveCommand() *cobra.Command {
	var (
		listen     string
		allowClock bool
		logFormat  string
		limits     serveLimits
	)
	c := &cobra.Command{
		Use:   "serve [--listen 127.0.0.1:PORT]",
		Short: cli.AgentShort("serve"),
		Long: `Hold the data dir for as long as it runs and serve its memory over the HTTP API
(GET /v1/openapi.json lists every route), and MCP over streamable HTTP at /mcp
(see engine mcp for the tools), and a web inspector of the memory and its
runs at /. With --browser, /mcp serves browsers with memory too (engine mcp
--browser's tools), one per MCP session, at most --max-browsers at once. It
always listens on the unix socket
<data-dir>/engine.sock (mode 0600); engine commands on the same data dir find it
there and go through it instead of opening the data dir themselves.

With --listen it also serves TCP. TCP requests need the bearer token in
<data-dir>/serve.token (created on the first start with --listen, and printed
once); clients on other machines set ENGINE_SERVER=http://HOST:PORT and
ENGINE_TOKEN. That token opens every namespace; engine tokens create makes
tokens that open one namespace (or all) with a role (read, write, admin),
which /v1, /mcp and the inspector enforce alike. An address other hosts reach (0.0.0.0, a LAN address) also
needs --allow-remote: the token travels in clear, so put TLS in front. It prints the inspector's URL with the token
(http://HOST:PORT/?token=...): opening it in a browser starts a session (a
cookie holding a random id, not the token, for 12 hours or until the server
stops) that opens the inspector's pages and actions, and nothing else: /v1/,
/mcp and /metrics take only the Authorization header. A POST, PUT, PATCH or
DELETE to /v1/ needs Content-Type: application/json, and any state-changing
request from another site or port (Sec-Fetch-Site, Origin) is refused.

GET /metrics answers Prometheus metrics (requests by route and status and
their latency, lock waits, recall index rebuilds, store size, open
connections), behind the same token as the API on TCP. Every request is
logged on stderr, one line each (route, status, duration, namespace, bytes;
never paths, queries, headers or bodies), as text or, with --log-format json,
JSON. Requests never wait for stderr: their lines are queued and written in
batches; if stderr falls behind by over 1 MiB, lines are dropped, counted in
engine_access_log_dropped_total and in a warning line.

Ctrl-C or SIGTERM stops it cleanly: requests in flight finish, the data dir
is closed and the socket removed. --events logs every request's memory events.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			dir, err := a.ResolveDataDir()
			if err != nil {
				return err
			}
			if err := limits.check(); err != nil {
				return err
			}
			if listen != "" {
				if err := service.CheckListen(listen); err != nil {
					return err
				}
			}
			if err := browserTraceFlags(cmd.Flags(), &limits.browser); err != nil {
				return err
			}
			if _, err := newLogger(a.Stderr, logFormat); err != nil {
				return err
			}
			return a.serve(cmd.Context(), dir, listen, allowClock, logFormat, limits)
		},
	}
	c.Flags().StringVar(&listen, "listen", "", "also serve TCP on `ADDR` (host:port), behind the bearer token")
	c.Flags().BoolVar(&limits.allowRemote, "allow-remote", false, "allow --listen on an address other hosts reach (put TLS in front: the token travels in clear)")
	c.Flags().StringVar(&logFormat, "log-format", "text", "write the server's log lines (one per request) as `FORMAT`: text or json")
	c.Flags().IntVar(&limits.maxConns, "max-conns", service.DefaultMaxConns, "serve at most `N` connections at once; more wait until one closes")
	c.Flags().DurationVar(&limits.bodyIdle, "body-idle-timeout", api.DefaultBodyIdleTimeout, "answer 408 to a request whose body pauses this long")
	c.Flags().DurationVar(&limits.body, "body-timeout", api.DefaultBodyTimeout, "answer 408 to a request whose body is not whole within this long")
	c.Flags().DurationVar(&limits.request, "request-timeout", api.DefaultRequestTimeout, "end a request's work (its body read) after this long with 503")
	c.Flags().DurationVar(&limits.lock, "lock-timeout", api.DefaultLockTimeout, "answer 503, naming the holder, to a request that waits this long for the memory lock (held by an import or a forget)")
	c.Flags().DurationVar(&limits.startDump, "start-dump-after", service.DefaultStartDumpAfter, "when the socket is not made within this long, print the start's step and goroutines on stderr (0: never)")
	c.Flags().MarkHidden("start-dump-after")
	c.Flags().BoolVar(&allowClock, "allow-clock", false, "honour a request's Engine-Now clock (for tests)")
	c.Flags().MarkHidden("allow-clock")
	addBrowserMCPFlags(c.Flags(), &limits.browser)
	c.Flags().IntVar(&limits.maxBrowsers, "max-browsers", 4, "with --browser: run at most `N` browsers at once (one per MCP session)")
	c.Flags().DurationVar(&limits.browserIdle, "browser-idle", 15*time.Minute, "with --browser: end an MCP session (its task and browser) idle this long")
	return c
}

// newLogger is the server's logger on w in format (text or json).
func newLogger(w io.Writer, format string) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, engine.Invalidf("flag", "--log-format %q: want text or json", format)
}

// serveLimits are engine serve's bounds on connections and requests.
type serveLimits struct {
	maxConns                      int
	bodyIdle, body, request, lock time.Duration
	// startDump is when a start without its socket yet reports its step
	// and goroutines (service.StartWatch).
	startDump time.Duration
	// allowRemote lets --listen take a non-loopback address.
	allowRemote bool
	// browser is --browser and its flags: /mcp serves browsers too when
	// browser.browser is not "".
	browser     runFlags
	maxBrowsers int
	browserIdle time.Duration
}

// defaultServeLimits are the limits of a server started without the flags
// (engine demo --serve).
var defaultServeLimits = serveLimits{maxConns: service.DefaultMaxConns, bodyIdle: api.DefaultBodyIdleTimeout,
	body: api.DefaultBodyTimeout, request: api.DefaultRequestTimeout, lock: api.DefaultLockTimeout,
	startDump: service.DefaultStartDumpAfter}

// check refuses a limit that would refuse everything.
func (l serveLimits) check() error {
	if l.browser.browser != "" && l.maxBrowsers < 1 {
		return engine.Invalidf("flag", "--max-browsers %d: want at least 1", l.maxBrowsers)
	}
	if l.maxConns < 1 {
		return engine.Invalidf("flag", "--max-conns %d: want at least 1", l.maxConns)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--body-idle-timeout", l.bodyIdle}, {"--body-timeout", l.body}, {"--request-timeout", l.request}, {"--lock-timeout", l.lock}} {
		if d.v <= 0 {
			return engine.Invalidf("flag", "%s %s: want a duration over 0 (10s, 2m)", d.flag, d.v)
		}
	}
	return nil
}

// serve holds data dir dir and serves its memory until ctx ends: the API
// at /v1/, MCP at /mcp, metrics at /metrics and the web inspector at /, on
// the data dir's socket and, with listen, on TCP behind the token (engine
// serve; engine demo --serve). The server's lines go to stderr in
// logFormat (text or json), with one per request; logFormat "": text,
// without the per-request lines.
func (a *app) serve(ctx context.Context, dir, listen string, allowClock bool, logFormat string, limits serveLimits) (err error) {
	phase, started := service.StartWatch(a.Stderr, limits.startDump)
	defer started()
	now, err := a.Now()
	if err != nil {
		return err
	}
	emit, closeEvents, err := a.Events()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeEvents()) }()
	keep, err := cli.HistoryKeep()
	if err != nil {
		return err
	}
	phase("opening the data dir (its lock, the database, the schema)")
	m, err := memory.Open(ctx, dir, memory.Options{Now: now, Events: emit, OpenStore: a.StoreOpener(), HistoryKeep: keep})
	if err != nil {
		return err
	}
	defer cli.CloseInto(&err, m)
	// Requests without an Engine-Namespace header (and /mcp, the
	// inspector) use --namespace's; a request naming one uses that.
	ns, err := a.Namespace()
	if err != nil {
		return err
	}
	served, err := m.WithNamespace(ctx, ns)
	if err != nil {
		return err
	}
	log, err := newLogger(a.Stderr, cmp.Or(logFormat, "text"))
	if err != nil {
		return err
	}
	// The access log queues its lines and writes them from one goroutine
	// (requests never wait on stderr); closed once the requests are
	// drained, so every answered request's line is out before "stopped".
	var accessLog *metrics.AccessLog
	if logFormat != "" {
		accessLog = metrics.NewAccessLog(a.Stderr, metrics.AccessLogOptions{JSON: logFormat == "json"})
		defer accessLog.Close()
	}
	// A store left due compactions (an import of 100,000 lessons leaves
	// level 0 over the mark) merges them before the socket is made, not
	// beside the first second of requests, which it slowed to a third;
	// bounded, so a start is never held long.
	phase("settling the store")
	sctx, cancel := context.WithTimeout(ctx, settleBound)
	if err := m.Settle(sctx); err != nil && ctx.Err() == nil {
		log.Warn("store still compacting at start", "err", err)
	}
	cancel()
	// Compiled before the socket is made, so a fleet that reconnects after
	// a start does not queue behind the first recalls' compile; bounded,
	// so a huge store starts anyway (what is left compiles on first use).
	phase("compiling the recall indexes")
	wctx, cancel := context.WithTimeout(ctx, warmBound)
	if err := served.Lessons.Warm(wctx); err != nil {
		log.Warn("recall indexes not compiled at start", "err", err)
	}
	cancel()
	met := metrics.New(metrics.Options{Memory: m, AccessLog: accessLog, Namespace: ns})
	opts := api.Options{AllowClock: allowClock || os.Getenv("ENGINE_NOW") != "", Logger: log, Redact: cli.RedactOptions(),
		LockWait: met.LockWait, BodyIdleTimeout: limits.bodyIdle, BodyTimeout: limits.body, RequestTimeout: limits.request,
		LockTimeout: limits.lock, SpoolDir: dir}
	h := api.Handler(served, opts)
	// /mcp is the MCP tools over the same API, in process; the
	// service's token check covers it like every other path.
	local := api.Local(h, api.ClientOptions{})
	defer cli.CloseInto(&err, local)
	runsDir := cli.RunsDir(dir, ns)
	// A token of one namespace reads its own namespace's run folders.
	runsDirOf := func(ctx context.Context) string {
		if sc, ok := api.ScopeOf(ctx); ok && !sc.All() {
			return cli.RunsDir(dir, sc.Namespace)
		}
		return runsDir
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", h)
	mux.Handle("GET /metrics", met.Handler())
	// /mcp and the inspector read their bodies under the API's deadlines
	// too (their own limits: the MCP SDK's, an ordinary JSON body).
	mcpHandler := mcp.Handler(local.Client, mcp.Options{Version: cli.ReadBuildInfo().Version, RunsDir: runsDir, RunsDirOf: runsDirOf})
	if limits.browser.browser != "" {
		// Browsers need MCP sessions: one each, capped, ended with them.
		bo, err := a.browserMCP(limits.browser)
		if err != nil {
			return err
		}
		bo.Version, bo.RunsDir, bo.MemoryRunsDir, bo.MemoryRunsDirOf, bo.MaxBrowsers = cli.ReadBuildInfo().Version, runsDir, runsDir, runsDirOf, limits.maxBrowsers
		h, bs, err := browsermcp.Handler(ctx, local.Client, bo, limits.browserIdle)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, bs.Close()) }()
		// Ending the sessions at shutdown ends their event streams, which
		// would hold the drain open.
		stop := context.AfterFunc(ctx, func() { _ = bs.Close() })
		defer stop()
		mcpHandler = h
	}
	mux.Handle("/mcp", api.ReadBodyFirst(mcpHandler, mcp.MaxBody, opts))
	// Everything else is the web inspector, over the same API.
	mux.Handle("/", api.ReadBodyFirst(inspect.Handler(local.Client, inspect.Options{RunsDir: runsDir, RunsDirOf: runsDirOf, Logger: log}), api.MaxBody, opts))
	// A browser session (the inspector's cookie) opens the inspector
	// only: /v1/, /mcp and /metrics take the bearer header alone.
	inspector := func(r *http.Request) bool {
		_, pattern := mux.Handler(r)
		return pattern == "/"
	}
	phase("making the server (the token, the TCP listener, the socket)")
	srv, err := service.Open(ctx, dir, mux, service.Options{Listen: listen, Logger: log, Middleware: met.Middleware, ConnState: met.ConnState, MaxConns: limits.maxConns, Sessions: inspector, AllowRemote: limits.allowRemote, Authenticate: api.Authenticator(m), Public: api.Public})
	if err != nil {
		return err
	}
	started()
	fmt.Fprintf(a.Stderr, "engine: serving %s on %s", dir, srv.SocketPath())
	if addr := srv.Addr(); addr != nil {
		fmt.Fprintf(a.Stderr, " and http://%s", addr)
	}
	fmt.Fprintf(a.Stderr, " (pid %d)\n", os.Getpid())
	if srv.TokenCreated() {
		fmt.Fprintf(a.Stderr, "engine: TCP clients need this token (shown once; kept in %s):\n%s\n", service.TokenPath(dir), srv.Token())
	}
	if addr := srv.Addr(); addr != nil {
		fmt.Fprintf(a.Stderr, "engine: inspector: %s\n", inspectorURL(addr.String(), srv.Token()))
	}
	err = srv.Serve(ctx)
	if accessLog != nil {
		accessLog.Close()
	}
	fmt.Fprintln(a.Stderr, "engine: stopped")
	return err
}

// settleBound bounds the wait for the store's due compactions before a
// server answers (memory.Memory.Settle).
const settleBound = 2 * time.Second

// warmBound bounds the compile of the recall indexes before a server
// answers (lesson.Store.Warm): ~0.3 s of CPU on 100,000 lessons.
const warmBound = time.Second

// inspectorURL is the URL that opens the inspector in a browser with the
// token (which the server moves into a cookie), as Jupyter prints it.
func inspectorURL(addr, token string) string {
	return "http://" + addr + "/?token=" + url.QueryEscape(token)
}
