package browsermcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/agent/navpolicy"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/engine/server/browsermcp"
)

// page is a sign-in page: an email field, a password field (marked
// secret, as the browser plugins mark one) and a button that covers
// nothing until the banner is accepted.
type page struct {
	mu       sync.Mutex
	url      string
	banner   bool
	closed   chan struct{}
	password string // what was typed into the password field
}

func newPage() *page { return &page{banner: true, closed: make(chan struct{})} }

func (p *page) Navigate(_ context.Context, u string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.url = u
	return nil
}

func (p *page) Snapshot(context.Context) (*engine.Snapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := &engine.Snapshot{URL: cmpOr(p.url, "about:blank"), Title: "Sign in"}
	if p.url == "" {
		return s, nil
	}
	s.Elements = []engine.Element{{Ref: "e1", Role: "textbox", Name: "Email"},
		{Ref: "e2", Role: "textbox", Name: "Password", States: []string{engine.StateSecret}},
		{Ref: "e3", Role: "button", Name: "Sign in"}}
	if p.banner {
		s.Elements = append(s.Elements, engine.Element{Ref: "e4", Role: "button", Name: "Accept cookies"})
	}
	s.Text = "Sign in to the shop"
	return s, nil
}

func (p *page) Act(_ context.Context, a engine.Action) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case a.Kind == engine.ActNavigate:
		p.url = a.Value
	case a.Kind == engine.ActClick && a.Ref == "e4":
		p.banner = false
	case a.Kind == engine.ActClick && p.banner:
		return &engine.ActionError{Code: engine.CodeIntercepted, Message: "another element would receive the click: div#cookie-banner"}
	case a.Kind == engine.ActFill && a.Ref == "e2":
		p.password = a.Value
	}
	return nil
}

func (p *page) Screenshot(context.Context) ([]byte, error) { return []byte("\x89PNG"), nil }

func (p *page) Close() error { close(p.closed); return nil }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

type fixture struct {
	c     *api.Client
	srv   *sdk.Server
	bs    *browsermcp.Server
	dir   string
	mu    sync.Mutex
	pages []*page
}

func newFixture(t *testing.T, opts browsermcp.Options) *fixture {
	t.Helper()
	f, opts := prepare(t, opts)
	var err error
	f.bs, f.srv, err = browsermcp.New(context.Background(), f.c, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.bs.Close() })
	return f
}

// prepare is a fixture's memory (on disk) and opts with browsers from
// newPage, for browsermcp.New or Handler.
func prepare(t *testing.T, opts browsermcp.Options) (*fixture, browsermcp.Options) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	lc := api.Local(api.Handler(m, api.Options{}), api.ClientOptions{})
	t.Cleanup(func() { lc.Close() })
	f := &fixture{c: lc.Client, dir: dir}
	opts.Open = func(context.Context) (engine.Browser, error) {
		p := newPage()
		f.mu.Lock()
		f.pages = append(f.pages, p)
		f.mu.Unlock()
		return p, nil
	}
	opts.RunsDir = filepath.Join(dir, "runs")
	return f, opts
}

// connect opens an MCP session on the fixture's server.
func (f *fixture) connect(t *testing.T) (*sdk.ClientSession, *sdk.ServerSession) {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := f.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-host"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ss
}

func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, wantErr bool) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError != wantErr {
		t.Fatalf("%s %v: IsError %v, want %v:\n%s", name, args, res.IsError, wantErr, b.String())
	}
	return b.String()
}

func TestToolsListed(t *testing.T) {
	f := newFixture(t, browsermcp.Options{})
	cs, _ := f.connect(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		have[tool.Name] = tool
	}
	for _, name := range []string{"browser_navigate", "browser_navigate_back", "browser_snapshot", "browser_click", "browser_type",
		"browser_press_key", "browser_select_option", "browser_hover", "browser_wait_for", "browser_take_screenshot", "browser_close",
		"memory_task_start", "memory_task_end", "memory_recall_error", "memory_query"} {
		if have[name] == nil {
			t.Errorf("no tool %s", name)
		}
	}
	b, err := json.Marshal(have["browser_type"].InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, prop := range []string{`"element":`, `"target":`, `"ref":`, `"text":`, `"submit":`, `"required":["text"]`} {
		if !strings.Contains(string(b), prop) {
			t.Errorf("browser_type's schema lacks %s: %s", prop, b)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the transport's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// update rewrites the golden files instead of comparing with them.
var update = flag.Bool("update", false, "rewrite testdata/tools.json from the server's tools/list")

// The tools/list answer as hosts read it on the wire (every tool's name,
// description, annotations and input and output schemas, properties in
// the order sent) is the golden file's: a change to what hosts see shows
// in its diff (go test -run TestToolsListGolden -update).
func TestToolsListGolden(t *testing.T) {
	f := newFixture(t, browsermcp.Options{})
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	if _, err := f.srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	var wire syncBuffer
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-host"}, nil).Connect(ctx, &sdk.LoggingTransport{Transport: ct, Writer: &wire}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var tools json.RawMessage
	for _, line := range strings.Split(wire.String(), "\n") {
		var msg struct {
			Result struct {
				Tools json.RawMessage `json:"tools"`
			} `json:"result"`
		}
		if raw, ok := strings.CutPrefix(line, "read: "); ok && json.Unmarshal([]byte(raw), &msg) == nil && msg.Result.Tools != nil {
			tools = msg.Result.Tools
		}
	}
	var b bytes.Buffer
	if err := json.Indent(&b, tools, "", "  "); err != nil {
		t.Fatalf("tools/list on the wire: %v\n%s", err, wire.String())
	}
	got := append(b.Bytes(), '\n')
	golden := filepath.Join("testdata", "tools.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("tools/list differs from %s (rerun with -update and read the diff):\n%s", golden, got)
	}
}

// A private address is refused unless the policy allows it, before any
// browser starts.
func TestPrivateRefused(t *testing.T) {
	f := newFixture(t, browsermcp.Options{})
	cs, _ := f.connect(t)
	out := call(t, cs, "browser_navigate", map[string]any{"url": "http://127.0.0.1:8080/admin"}, true)
	if !strings.Contains(out, "navigation to http://127.0.0.1:8080/admin blocked") {
		t.Fatal(out)
	}
	out = call(t, cs, "memory_task_start", map[string]any{"goal": "sign in", "url": "http://10.0.0.1/"}, true)
	if !strings.Contains(out, "blocked") {
		t.Fatal(out)
	}
	if len(f.pages) != 0 {
		t.Fatalf("%d browsers started", len(f.pages))
	}
	g := newFixture(t, browsermcp.Options{Navigation: &navpolicy.Policy{AllowPrivate: true}})
	cs, _ = g.connect(t)
	call(t, cs, "browser_navigate", map[string]any{"url": "http://127.0.0.1:8080/admin"}, false)
}

// A task over MCP: a failed click is a tool error with the browser's
// message; the password typed is echoed nowhere and stored nowhere; the
// session's end ends the browser, and the task's run is failed.
func TestTaskAndSessionEnd(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, browsermcp.Options{})
	cs, ss := f.connect(t)
	out := call(t, cs, "memory_task_start", map[string]any{"goal": "sign in to the shop", "url": "https://shop.example/login"}, false)
	if !strings.Contains(out, "Task started: run run_") {
		t.Fatal(out)
	}
	out = call(t, cs, "browser_navigate", map[string]any{"url": "https://shop.example/login"}, false)
	if !strings.Contains(out, "e2: textbox - Password [secret]") {
		t.Fatal(out)
	}
	out = call(t, cs, "browser_click", map[string]any{"element": "Sign in", "ref": "e3"}, true)
	if !strings.Contains(out, "IMPORTANT - Last action failed:\nanother element would receive the click: div#cookie-banner") {
		t.Fatal(out)
	}
	call(t, cs, "browser_click", map[string]any{"target": "e4"}, false)
	const secret = "hunter2-Zebra!"
	out = call(t, cs, "browser_type", map[string]any{"element": "Password", "target": "e2", "text": secret, "submit": true}, false)
	if strings.Contains(out, secret) {
		t.Fatal(out)
	}
	if f.pages[0].password != secret {
		t.Fatalf("the browser got %q", f.pages[0].password)
	}
	out = call(t, cs, "browser_select_option", map[string]any{"element": "Email", "values": []string{"a", "b"}}, true)
	if !strings.Contains(out, "give one value in values, not 2") {
		t.Fatal(out)
	}
	if err := ss.Close(); err != nil { // the host went away
		t.Fatal(err)
	}
	<-f.pages[0].closed
	// The run is ended before the browser closes.
	p, err := f.c.Runs(ctx, run.Filter{}, listing.Request{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Runs) != 1 || p.Runs[0].Status != run.Failed || !strings.Contains(p.Runs[0].Reason, "session_ended: the session ended before memory_task_end") {
		t.Fatalf("runs: %+v", p.Runs)
	}
	goal := 0 // files holding the goal: the search sees what is stored
	err = filepath.WalkDir(f.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if strings.Contains(string(b), "sign in to the shop") {
			goal++
		}
		if err == nil && strings.Contains(string(b), secret) {
			return errors.New(path + " holds the password")
		}
		return err
	})
	if err != nil || goal < 2 {
		t.Fatalf("%v (the goal in %d files)", err, goal)
	}
}

// The cap on browsers: a second session gets a tool error while the first
// holds the only browser, and a browser once the first closed its own.
func TestBrowserCap(t *testing.T) {
	f := newFixture(t, browsermcp.Options{MaxBrowsers: 1})
	cs1, _ := f.connect(t)
	cs2, _ := f.connect(t)
	call(t, cs1, "browser_navigate", map[string]any{"url": "https://shop.example/"}, false)
	out := call(t, cs2, "browser_navigate", map[string]any{"url": "https://shop.example/"}, true)
	if !strings.Contains(out, "1 browsers are open, the most this server runs at once") {
		t.Fatal(out)
	}
	call(t, cs1, "browser_close", nil, false)
	if n := f.bs.Browsers(); n != 0 {
		t.Fatalf("%d browsers open after browser_close", n)
	}
	call(t, cs2, "browser_navigate", map[string]any{"url": "https://shop.example/"}, false)
	// The first session's next call starts a browser again: over the cap.
	out = call(t, cs1, "browser_snapshot", nil, true)
	if !strings.Contains(out, "the most this server runs at once") {
		t.Fatal(out)
	}
}

// Over streamable HTTP, a host that ends its MCP session (the SDK's client
// sends DELETE) ends the engine's at once: the browser closes and the open
// task's run ends failed, with no wait for --browser-idle.
func TestHTTPDeleteEndsTheSession(t *testing.T) {
	ctx := context.Background()
	f, opts := prepare(t, browsermcp.Options{})
	h, bs, err := browsermcp.Handler(ctx, f.c, opts, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bs.Close() })
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "http-host"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: ts.Client()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	call(t, cs, "memory_task_start", map[string]any{"goal": "sign in to the shop", "url": "https://shop.example/login"}, false)
	call(t, cs, "browser_navigate", map[string]any{"url": "https://shop.example/login"}, false)
	if bs.Browsers() != 1 {
		t.Fatalf("%d browsers", bs.Browsers())
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	p := f.pages[0]
	f.mu.Unlock()
	<-p.closed
	runs, err := f.c.Runs(ctx, run.Filter{}, listing.Request{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs.Runs) != 1 || runs.Runs[0].Status != run.Failed || !strings.Contains(runs.Runs[0].Reason, "session_ended: the session ended before memory_task_end") {
		t.Fatalf("runs: %+v", runs.Runs)
	}
}

// TestTaskStartTraceScoring: memory_task_start picks the recorded run as
// engine run does, by similarity alone unless the server's TraceScoring
// asks for the weighted rank, and within TraceTTLDays.
func TestTaskStartTraceScoring(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	h := api.Handler(m, api.Options{AllowClock: true})
	at := func(now time.Time) *api.Client {
		c := api.Local(h, api.ClientOptions{Now: now})
		t.Cleanup(func() { c.Close() })
		return c.Client
	}
	search := func(verified bool) []trajectory.Step {
		return []trajectory.Step{{Action: "click", Role: "textbox", Name: "Email", Verified: verified},
			{Action: "click", Role: "button", Name: "Sign in", Verified: verified}}
	}
	// An exact match, 25 days old, slow and unverified; a near one,
	// recorded now, fast and verified.
	exact, err := at(time.Now().AddDate(0, 0, -25)).RecordTrajectory(ctx, trajectory.Trajectory{Domain: "shop.example",
		Goal: "sign in to the shop and open the first order", Steps: search(false), DurationMs: 600000})
	if err != nil {
		t.Fatal(err)
	}
	near, err := at(time.Now()).RecordTrajectory(ctx, trajectory.Trajectory{Domain: "shop.example",
		Goal: "sign in to the shop and open the order", Steps: search(true), DurationMs: 5000})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts browsermcp.Options
		want string
	}{
		{"by similarity", browsermcp.Options{}, exact.ID},
		{"weighted", browsermcp.Options{TraceScoring: true}, near.ID},
		{"within 14 days", browsermcp.Options{TraceTTLDays: 14}, near.ID},
		{"within 30 days", browsermcp.Options{TraceTTLDays: 30}, exact.ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Open = func(context.Context) (engine.Browser, error) { return newPage(), nil }
			opts.RunsDir = filepath.Join(dir, "runs")
			f := &fixture{c: at(time.Time{}), dir: dir}
			if f.bs, f.srv, err = browsermcp.New(ctx, f.c, opts); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.bs.Close() })
			cs, _ := f.connect(t)
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "memory_task_start",
				Arguments: map[string]any{"goal": "sign in to the shop and open the first order", "url": "https://shop.example/login"}})
			if err != nil || res.IsError {
				t.Fatalf("memory_task_start: %v %+v", err, res)
			}
			b, _ := json.Marshal(res.StructuredContent)
			var got browsermcp.TaskStarted
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got.Trajectory != tc.want {
				t.Fatalf("memory_task_start answered with %s (similarity %.2f), want %s", got.Trajectory, got.Similarity, tc.want)
			}
		})
	}
}
