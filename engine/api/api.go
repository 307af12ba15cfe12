// Package api is the memory's HTTP/JSON interface, versioned under /v1:
// the server side (Handler, over one memory.Memory), the client side
// (Client), and the OpenAPI document of both, all from one route table.
//
// Every caller of memory above the stores goes through it: agents in other
// languages over TCP, the CLI and agent runs over the data dir's unix
// socket when a server holds it, and the same CLI in this process (Local)
// when none does. So the two modes behave alike by construction: same
// requests, same handlers, same errors.
//
// Errors are application/problem+json (RFC 9457) whose detail is the same
// one-line message the CLI prints; bad input is 400, an unknown id 404, a
// body over its limit 413. A client turns them back into engine.ErrInvalid
// and engine.ErrNotFound errors, so exit codes match too.
//
// Two request headers serve the CLI: "Engine-Events: 1" asks for the memory
// events the request caused, sent back in the "Engine-Events" trailer as a
// JSON array; "Engine-Now" (RFC 3339) fixes the clock for one request, and
// only a handler built with AllowClock (a server started with ENGINE_NOW,
// for tests) honours it. "Engine-Namespace: NAME" runs the request in that
// namespace of the store (memory.WithNamespace; "-" the default), else in
// the handler's own.
//
// A request whose context carries a token's scope (WithScope: a server's
// token check puts it there) is held to it before its body is read: its
// role must reach the route's (RoleOf) and its token must open the
// namespace, else 403; a token of one namespace runs in it when the
// request names none. A request with no scope is the owner's.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api/problem"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/trust/redact"
)

// Header names of the API.
const (
	HeaderEvents = "Engine-Events"
	HeaderNow    = "Engine-Now"
	// HeaderRun, HeaderModel and HeaderSource say who writes: the run and
	// its model ("provider/name"), and "manual" (a person at the CLI) or
	// "api" (a program; the default). The stores stamp them on what the
	// request writes (engine.Provenance).
	HeaderRun    = "Engine-Run"
	HeaderModel  = "Engine-Model"
	HeaderSource = "Engine-Source"
	// HeaderNamespace names the namespace a request reads and writes
	// ("-": the default); without it, the handler's memory's namespace.
	HeaderNamespace = "Engine-Namespace"
)

// Body limits: a request body past its route's limit is refused with 413.
const (
	// MaxBody is the limit of an ordinary JSON body.
	MaxBody = 1 << 20
	// MaxUpload is the limit of an import or an action log:
	// engine.MaxInputFile, the CLI's own limit on input files.
	MaxUpload = engine.MaxInputFile
)

// Options configure a Handler.
type Options struct {
	// AllowClock honours a request's Engine-Now header (a server whose own
	// clock is fixed by ENGINE_NOW, for tests); without it such a request
	// is refused.
	AllowClock bool
	// Logger receives one line per request that failed with a server
	// error; nil discards them.
	Logger *slog.Logger
	// LockWait, when set, is told how long each request waited for the
	// handler's lock (exclusive: its exclusive side), so a server can
	// report lock contention; it must be cheap and safe for concurrent use.
	LockWait func(exclusive bool, waited time.Duration)
	// Redact configures the redaction of everything written through the
	// handler (request bodies, action logs, imports, exports): secret
	// shapes always, emails and phone numbers unless KeepContacts
	// (ENGINE_KEEP_CONTACTS=1).
	Redact redact.Options
	// BodyIdleTimeout bounds the wait for each next part of a request
	// body, BodyTimeout the whole body (0: DefaultBodyIdleTimeout,
	// DefaultBodyTimeout); a body that does not come in time is answered
	// 408. Every body is read whole before its request takes the memory
	// lock, so a client that stalls holds up no one else.
	BodyIdleTimeout, BodyTimeout time.Duration
	// RequestTimeout bounds a request's work once its body is read (0:
	// DefaultRequestTimeout); LockTimeout its wait for the memory lock (0:
	// DefaultLockTimeout), answered 503 naming the request that holds it.
	RequestTimeout, LockTimeout time.Duration
	// SpoolDir holds request bodies too large to keep in memory while
	// their request waits and runs (an import): unlinked files, gone when
	// the request ends. "" is os.TempDir(); a server gives its data dir.
	SpoolDir string
}

// Handler serves the API over m. m's event sink receives every request's
// events (a server's --events log) besides any request that asks for its
// own.
//
// Routes are registered per group (the first path segment after /v1/) on
// the group's first request: a short command that sends one request pays
// for the patterns of its group, not for the whole table (registering a
// pattern on a ServeMux parses it, checks it against every other one and
// records its caller). Every pattern's first segment is a literal, so a
// clean path is matched by its group's patterns exactly as by all of them;
// any other path (not clean, escaped, CONNECT) goes to a mux of every route.
func Handler(m *memory.Memory, opts Options) http.Handler {
	return newHandler(m, opts).router
}

func newHandler(m *memory.Memory, opts Options) *handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.LockTimeout == 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	h := &handler{m: m, opts: opts, red: redact.New(opts.Redact), body: opts.bodyTimeouts()}
	h.waited = func(bool, time.Time) {}
	if f := opts.LockWait; f != nil {
		h.waited = func(exclusive bool, since time.Time) { f(exclusive, time.Since(since)) }
	}
	h.router = newRouter(h.serve)
	return h
}

type handler struct {
	m      *memory.Memory
	opts   Options
	router *router
	// red redacts what requests write: shapes and contacts only, the
	// server never learns a run's typed secrets.
	red *redact.Redactor
	// gate keeps exclusive routes (Route.Exclusive) apart from every other
	// request of this handler, so one server must serve all its listeners
	// with one handler.
	gate gate
	body bodyTimeouts
	// waited reports how long a request waited for the gate (Options.LockWait).
	waited func(exclusive bool, since time.Time)
}

// router serves each request with the ServeMux of its route group, built
// on the group's first request.
type router struct {
	serve func(Route) http.Handler
	mu    sync.Mutex
	muxes map[string]*http.ServeMux // by group; allGroups: every route
	// groups holds every route's group once a request named a group no
	// route has: such requests share the mux of group "" (the catch-all
	// alone), so paths a client makes up add no mux.
	groups map[string]bool
}

// allGroups keys the mux of every route (never a path segment: it has a
// slash).
const allGroups = "/"

func newRouter(serve func(Route) http.Handler) *router {
	return &router{serve: serve, muxes: map[string]*http.ServeMux{}}
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt.mux(groupOf(r)).ServeHTTP(w, r)
}

// mux returns group's mux, registering its routes on first use.
func (rt *router) mux(group string) *http.ServeMux {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if mux := rt.muxes[group]; mux != nil {
		return mux
	}
	if rt.groups != nil && group != allGroups && !rt.groups[group] {
		group = ""
		if mux := rt.muxes[group]; mux != nil {
			return mux
		}
	}
	mux, groups := http.NewServeMux(), map[string]bool{}
	for _, set := range routeSets {
		for _, r := range set() {
			g := routeGroup(r.Path)
			groups[g] = true
			if group == allGroups || g == group {
				mux.Handle(r.Method+" "+r.Path, rt.serve(r))
			}
		}
	}
	mux.Handle("/", noRoute(mux))
	if group != allGroups && !groups[group] {
		rt.groups, group = groups, ""
	}
	rt.muxes[group] = mux
	return mux
}

// noRoute answers a request no route of mux matches: 405 with the
// methods that path takes (Allow) when a route has it under another
// method, else 404.
func noRoute(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if m == r.Method {
				continue
			}
			probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
			if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeProblem(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: this route takes %s (see GET /v1/openapi.json)",
				r.Method, r.URL.Path, strings.Join(allow, ", ")))
			return
		}
		writeProblem(w, http.StatusNotFound, fmt.Sprintf("no route %s %s (see GET /v1/openapi.json)", r.Method, r.URL.Path))
	})
}

// routeGroup is the group of a route's path: its segment after /v1/.
func routeGroup(path string) string {
	g, _, _ := strings.Cut(strings.TrimPrefix(path, "/v1/"), "/")
	return g
}

// groupOf is the group whose mux serves r: its path's segment after /v1/
// ("" for a clean path outside /v1/, which only the catch-all matches), or
// allGroups for a path the mux would clean or unescape first, and CONNECT
// (which the mux routes on its own).
func groupOf(r *http.Request) string {
	p := r.URL.Path
	if r.Method == http.MethodConnect || r.URL.RawPath != "" || !cleanPath(p) {
		return allGroups
	}
	rest, ok := strings.CutPrefix(p, "/v1/")
	if !ok {
		return ""
	}
	g, _, _ := strings.Cut(rest, "/")
	return g
}

// cleanPath reports whether the mux serves p as it is rather than
// redirecting to its cleaned form (ServeMux's cleanPath: path.Clean, a
// trailing slash kept).
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		return np+"/" == p
	}
	return np == p
}

// call is one request as a route's handle func sees it.
type call struct {
	ctx   context.Context
	m     *memory.Memory // this request's view: its clock and event sink
	r     *http.Request
	w     http.ResponseWriter
	limit int64
	// mustHave are the route's required body fields (Route.Required).
	mustHave []string
	// red is the handler's redactor: decode runs every body through it.
	red *redact.Redactor
	// streamed is set by a handle func that wrote the response itself.
	streamed bool
	// gate is the handler's lock; shared says this call takes its shared
	// side (held while held is true), lockWait bounds a wait for it.
	gate     *gate
	hold     hold
	shared   bool
	held     bool
	lockWait time.Duration
	// waited reports a lock wait (Options.LockWait); never nil.
	waited func(exclusive bool, since time.Time)
	// q is r's query, parsed once when the route checked it.
	q url.Values
}

func (h *handler) serve(rt Route) http.Handler {
	name := rt.Method + " " + rt.Path // who holds the lock, in a busy answer
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := rt.checkContentType(r); err != nil {
			writeProblem(w, http.StatusUnsupportedMediaType, err.Error())
			return
		}
		q, err := rt.checkQuery(r.URL.RawQuery)
		if err != nil {
			writeProblem(w, http.StatusBadRequest, err.Error())
			return
		}
		m := h.m
		ns := r.Header.Get(HeaderNamespace)
		scope, scoped := ScopeOf(r.Context())
		if scoped {
			// A token that opens one namespace works in it unless the
			// request names another (which it is then refused).
			if ns == "" && !scope.All() {
				ns = scope.Namespace
			}
			in := ns
			if in == "" {
				in = nsName(m.Namespace())
			}
			if err := authorize(rt, scope, in); err != nil {
				writeProblem(w, http.StatusForbidden, err.Error())
				return
			}
		}
		if ns != "" && !storeWide(rt) {
			nm, err := m.WithNamespace(r.Context(), ns)
			var unknown *memory.UnknownNamespaceError
			if errors.As(err, &unknown) && scoped {
				err = narrowUnknown(unknown, scope)
			}
			if err != nil {
				p := problem.New(statusOf(err), fmt.Sprintf("%s: %v", HeaderNamespace, err))
				if unknown != nil {
					p.Type = ProblemUnknownNamespace
				}
				problem.Write(w, p)
				return
			}
			m = nm
		}
		if v := r.Header.Get(HeaderNow); v != "" {
			if !h.opts.AllowClock {
				writeProblem(w, http.StatusBadRequest, HeaderNow+": this server keeps its own clock (start it with ENGINE_NOW to fix it)")
				return
			}
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				writeProblem(w, http.StatusBadRequest, fmt.Sprintf("%s: %q is not an RFC 3339 time", HeaderNow, v))
				return
			}
			m = m.WithClock(func() time.Time { return t })
		}
		if r.Header.Get(HeaderRun) != "" || r.Header.Get(HeaderModel) != "" || r.Header.Get(HeaderSource) != "" {
			p, err := provenanceOf(r.Header, h.red)
			if err != nil {
				writeProblem(w, http.StatusBadRequest, err.Error())
				return
			}
			m = m.WithProvenance(p)
		}
		var events []event.Event
		wantEvents := r.Header.Get(HeaderEvents) != ""
		if wantEvents {
			base := m.Events()
			m = m.With(func(e event.Event) {
				events = append(events, e)
				base.Emit(e.Name, e.Fields)
			})
			w.Header().Set("Trailer", HeaderEvents)
		}
		// The body is read whole (bounded by the route's limit and the
		// read deadlines) before the request takes any lock.
		body, err := readBody(w, r, rt.limit(), h.body)
		if err != nil {
			writeBodyProblem(w, err)
			return
		}
		defer body.Close()
		r.Body = body
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.RequestTimeout)
		defer cancel()
		c := &call{ctx: ctx, m: m, r: r, w: w, limit: rt.limit(), mustHave: rt.Required, red: h.red,
			gate: &h.gate, hold: hold{route: name}, shared: !rt.Exclusive, lockWait: h.opts.LockTimeout, waited: h.waited, q: q}
		var out any
		if c.shared {
			err = c.acquire(false)
			defer c.release()
		}
		if err == nil {
			out, err = rt.handle(c)
		}
		c.release() // the answer is written holding no lock
		busy := isBusy(err)
		if err != nil && ctx.Err() == context.DeadlineExceeded && r.Context().Err() == nil && !busy {
			err = fmt.Errorf("the request ran past the server's %s deadline: %w", h.opts.RequestTimeout, err)
		}
		if busy {
			w.Header().Set("Retry-After", "1")
		}
		switch {
		case err != nil:
			status := statusOf(err)
			if busy && r.Context().Err() == nil {
				h.opts.Logger.Warn("request gave up waiting for the memory lock", "method", r.Method, "path", r.URL.Path, "error", err)
			} else if status >= 500 && r.Context().Err() == nil {
				h.opts.Logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
			}
			p := problem.New(status, err.Error())
			var unknown *memory.UnknownNamespaceError
			if errors.As(err, &unknown) {
				p.Type = ProblemUnknownNamespace
			}
			problem.Write(w, p)
		case !c.streamed:
			writeJSON(w, http.StatusOK, out)
		}
		if wantEvents {
			b, err := json.Marshal(events)
			if err != nil || events == nil {
				b = []byte("[]")
			}
			w.Header().Set(HeaderEvents, string(b))
		}
	})
}

// provenanceOf reads who writes from a request's headers: a client may say
// it is a person (manual) or a program (api, the default), or, naming its
// run, an agent's run (learned: what a run writes as it goes); never that
// it is the engine's own seeding or an import (the routes that do those set
// them). The run and model pass through red as a body does: they are
// stored with every record and a key pasted into them must not be.
func provenanceOf(h http.Header, red *redact.Redactor) (engine.Provenance, error) {
	p := engine.Provenance{Run: red.String(h.Get(HeaderRun)), Model: red.String(h.Get(HeaderModel)), Source: engine.SourceAPI}
	if v := h.Get(HeaderSource); v != "" {
		src, err := engine.ParseSource(v)
		if err != nil {
			return p, fmt.Errorf("%s: %w", HeaderSource, err)
		}
		switch {
		case src == engine.SourceLearned && p.Run == "":
			return p, engine.Invalidf("request", "%s: %q needs the run that learned it (%s)", HeaderSource, v, HeaderRun)
		case src != engine.SourceManual && src != engine.SourceAPI && src != engine.SourceLearned:
			return p, engine.Invalidf("request", "%s: %q is the engine's own; a client is manual, api or (a run) learned", HeaderSource, v)
		}
		p.Source = src
	}
	return p, p.Check()
}

// statusOf maps an error to its HTTP status, the one place that does (the
// client's errorOf is its inverse).
func statusOf(err error) int {
	var tooBig *http.MaxBytesError
	var denied *forbiddenError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge
	case errors.As(err, &denied):
		return http.StatusForbidden
	case isBusy(err):
		return http.StatusServiceUnavailable
	case errors.Is(err, engine.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, engine.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// writeProblem writes an application/problem+json response.
func writeProblem(w http.ResponseWriter, status int, detail string) {
	problem.Write(w, problem.New(status, detail))
}

// writeJSON writes v as a JSON response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // a failed write is the client gone; nothing to tell it
}

// checkContentType refuses a state-changing request (POST, PUT, PATCH,
// DELETE; bodiless ones too) whose Content-Type is not application/json or
// the route's own BodyType. A browser page on another origin can send a
// request without a CORS preflight only as text/plain, a form or
// multipart, so this shuts out forged requests whatever credentials they
// carry.
func (rt Route) checkContentType(r *http.Request) error {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return nil
	}
	want := "application/json"
	if rt.BodyType != "" {
		want = rt.BodyType
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return fmt.Errorf("%s %s needs Content-Type: %s (bodiless requests too)", r.Method, r.URL.Path, want)
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != want && mt != "application/json") {
		return fmt.Errorf("Content-Type %q: %s %s takes %s", ct, r.Method, r.URL.Path, want)
	}
	return nil
}

// decode reads the request body as exactly one JSON value into v: unknown
// fields, a field given twice, trailing data, a missing required field
// (Route.Required) and a body past the route's limit are bad input, told in JSON's words
// (engine.JSONError). Every string of v is then redacted (secret shapes,
// and contacts unless Options.Redact keeps them): this is where every
// memory write enters, so no store ever sees them.
func (c *call) decode(v any) error {
	if ct := c.r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return engine.Invalidf("request", "Content-Type %q: send application/json", ct)
	}
	b, err := c.raw()
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return engine.Invalid("request", "the body is empty: send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return engine.Invalidf("request", "body: %s", engine.JSONError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return engine.Invalid("request", "body: more than one JSON value")
	}
	if dup := duplicateKey(b); dup != "" {
		return engine.Invalidf("request", "body: the field %q is given twice: give it once", dup)
	}
	if len(c.mustHave) > 0 {
		if err := checkRequired(b, c.mustHave); err != nil {
			return err
		}
	}
	c.red.Value(v)
	return nil
}

// checkRequired refuses a JSON object b that lacks one of the fields
// required, naming every one missing. A field given as null is given: the
// route's own checks say what is wrong with it.
func checkRequired(b []byte, required []string) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return engine.Invalidf("request", "body: %s", engine.JSONError(err))
	}
	var missing []string
	for _, f := range required {
		if _, ok := fields[f]; !ok {
			missing = append(missing, strconv.Quote(f))
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return engine.Invalidf("request", "body: the field %s is required", missing[0])
	}
	return engine.Invalidf("request", "body: the fields %s are required", strings.Join(missing, ", "))
}

// raw returns the request body, at most the route's limit.
func (c *call) raw() ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, c.limit))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, tooLarge(c.limit)
	}
	return b, err
}

// exclusive runs fn while no other request of the handler runs (see
// Route.Exclusive; only an exclusive route's handle may call it). A wait
// past the lock timeout is a *busyError (503).
func (c *call) exclusive(fn func() error) error {
	if c.shared {
		panic("api: exclusive called from a route not marked Exclusive")
	}
	if err := c.acquire(true); err != nil {
		return err
	}
	defer c.release()
	return fn()
}

// acquire takes the handler's lock for c, waiting at most c.lockWait.
func (c *call) acquire(exclusive bool) error {
	since := time.Now()
	if err := c.gate.acquire(c.ctx, c.lockWait, &c.hold, exclusive); err != nil {
		return err
	}
	c.waited(exclusive, since)
	c.held = true
	return nil
}

// release lets go of the handler's lock if c holds it: a handle func
// that has what it answers (an export's document) may call it before it
// writes, so a client that reads slowly holds up no one.
func (c *call) release() {
	if c.held {
		c.held = false
		c.gate.release(&c.hold)
	}
}

// isBusy reports whether err is a wait for the lock that timed out.
func isBusy(err error) bool {
	var b *busyError
	return errors.As(err, &b)
}

// query returns a query parameter ("" when absent).
func (c *call) query(name string) string { return c.q.Get(name) }

// queryInt returns a query parameter as an int (def when absent); a value
// that is not a number in [min, max] is bad input.
func (c *call) queryInt(name string, def, lo, hi int) (int, error) {
	v := c.query(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, engine.Invalidf("request", "%s=%q: want a number from %d to %d", name, v, lo, hi)
	}
	return n, nil
}

// queryBool returns a boolean query parameter (false when absent).
func (c *call) queryBool(name string) (bool, error) {
	v := c.query(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, engine.Invalidf("request", "%s=%q: want true or false", name, v)
	}
	return b, nil
}

// page reads the limit and cursor parameters of a list route.
func (c *call) page() (listing.Request, error) {
	limit, err := c.queryInt("limit", 0, 1, math.MaxInt32)
	if err != nil {
		return listing.Request{}, err
	}
	return listing.Request{Limit: limit, Cursor: c.query("cursor")}, nil
}

// pageIfAsked is page for a per-site list, which answers the site's whole
// list unless a limit or a cursor asks for a page.
func (c *call) pageIfAsked() (listing.Request, bool, error) {
	if c.query("limit") == "" && c.query("cursor") == "" {
		return listing.Request{}, false, nil
	}
	req, err := c.page()
	return req, err == nil, err
}

// The paging parameters of a per-site list: it answers the whole list (one
// site's, bounded by what a site keeps) unless asked for a page.
var (
	siteLimitParam = Param{Name: "limit", Type: "integer",
		Description: "a page of at most this many (at most " + strconv.Itoa(listing.MaxLimit) + "); without limit or cursor, the whole list"}
)

// The paging parameters every paged list route documents.
var (
	limitParam = Param{Name: "limit", Type: "integer",
		Description: "at most this many (default " + strconv.Itoa(listing.DefaultLimit) + ", most " + strconv.Itoa(listing.MaxLimit) + " a page)"}
	cursorParam = Param{Name: "cursor", Type: "string", Description: "the next page: the next field of the page before"}
)

// eachPage walks a paged list: pages of at most listing.MaxLimit until max
// items (0: all) or the end, each item to fn. It returns the cursor after
// the last item given when the list goes on.
func eachPage[T any](max int, cursor string, get func(limit int, cursor string) ([]T, string, error), fn func(T) error) (string, error) {
	given := 0
	for {
		limit := listing.MaxLimit
		if max > 0 {
			limit = min(limit, max-given)
		}
		items, next, err := get(limit, cursor)
		if err != nil {
			return "", err
		}
		for _, it := range items {
			if err := fn(it); err != nil {
				return "", err
			}
		}
		given += len(items)
		cursor = next
		if next == "" || (max > 0 && given >= max) {
			return next, nil
		}
	}
}

// required returns a query parameter that must be given.
func (c *call) required(name string) (string, error) {
	v := c.query(name)
	if strings.TrimSpace(v) == "" {
		return "", engine.Invalidf("request", "the %s parameter is required", name)
	}
	return v, nil
}
