package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engine-dev/engine/engine/server/mcp/mcptest"
	"github.com/engine-dev/engine/engine/server/service"
)

// startMCP runs `engine mcp` on dataDir as a subprocess and connects the
// SDK's client to it over its stdin and stdout.
func startMCP(t testing.TB, ctx context.Context, dataDir string) (*sdk.ClientSession, *bytes.Buffer) {
	t.Helper()
	cmd := engineCmd(t, dataDir, "mcp")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: hang}, nil)
	if err != nil {
		t.Fatalf("engine mcp: %v\n%s", err, stderr.String())
	}
	return cs, &stderr
}

// TestMCPStdio is an MCP host spawning `engine mcp`: every tool and the
// resources through the SDK's client, another engine command going
// through the socket it serves meanwhile, and a clean exit when the host
// closes its stdin.
func TestMCPStdio(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cs, stderr := startMCP(t, ctx, dir)
	mcptest.Check(t, ctx, cs)

	// engine mcp holds the data dir and serves it: a CLI command on the
	// same data dir goes through it (else it would wait for the lock).
	create := engineCmd(t, dir, "runs", "create", "--id", "run_mcp", "--goal", "buy a racket", "--url", "https://shop.example/")
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("engine runs create: %v\n%s", err, out)
	}
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "engine://runs/run_mcp"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "- goal: buy a racket\n- status: running") {
		t.Fatalf("run resource: %+v, %v", rr, err)
	}
	mcptest.OK(t, ctx, cs, "memory_query", map[string]any{"kind": "runs"}, `run_mcp running on shop.example: "buy a racket"`)

	if err := cs.Close(); err != nil {
		t.Fatalf("engine mcp after stdin closed: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "engine: serving MCP on stdio, memory held here and served on "+filepath.Join(dir, "engine.sock")) {
		t.Fatalf("stderr: %s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "engine.sock")); !os.IsNotExist(err) {
		t.Fatalf("the socket after engine mcp ended: %v", err)
	}
}

// BenchmarkMCPRecallError is one memory_recall_error call through
// `engine mcp` over stdio, the whole round trip (JSON-RPC over the pipes,
// the tool, the API in the subprocess, badger): "lessons200" on a store
// with 200 lessons on the site (engine/api's BenchmarkRecallError store),
// "small" on one as a few runs leave it (the seeds and 5 of the site's,
// BenchmarkRecallSocketSmall's).
func BenchmarkMCPRecallError(b *testing.B) {
	for _, n := range []int{200, 5} {
		name := "lessons200"
		if n == 5 {
			name = "small"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			cs, stderr := startMCP(b, ctx, b.TempDir())
			defer func() {
				if err := cs.Close(); err != nil {
					b.Fatalf("engine mcp: %v\n%s", err, stderr.String())
				}
			}()
			for i := range n {
				mcptest.OK(b, ctx, cs, "memory_record_lesson", map[string]any{"lesson": "scroll first", "category": "site_specific",
					"failed_command": "click", "error_pattern": "not visible " + string(rune('a'+i%26)) + string(rune('a'+i/26)), "domain": "shop.example"}, "Recorded")
			}
			args := map[string]any{"command": "click e12", "error": "element not visible ab", "domain": "shop.example"}
			for b.Loop() {
				if res := mcptest.Call(b, ctx, cs, "memory_recall_error", args); res.IsError {
					b.Fatal(mcptest.Text(b, res))
				}
			}
		})
	}
}

// TestMCPStdioAnswersBeforeEOF writes requests and closes stdin at once,
// as a script piping into engine mcp does: every request is answered
// before it exits.
func TestMCPStdioAnswersBeforeEOF(t *testing.T) {
	cmd := engineCmd(t, t.TempDir(), "mcp")
	var in bytes.Buffer
	in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := 2; i <= 6; i++ {
		in.WriteString(`{"jsonrpc":"2.0","id":` + string(rune('0'+i)) + `,"method":"tools/call","params":{"name":"memory_recall_error","arguments":{"command":"click e1","error":"would receive the click"}}}` + "\n")
	}
	in.WriteString(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_recall_error","arguments":{"command":"","error":"x"}}}` + "\n")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("engine mcp: %v\n%s", err, stderr.String())
	}
	ids := map[int]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", sc.Bytes(), err)
		}
		ids[m.ID] = string(m.Result)
	}
	for i := 1; i <= 7; i++ {
		if ids[i] == "" {
			t.Fatalf("request %d got no answer:\n%s", i, out)
		}
	}
	if !strings.Contains(ids[2], "press Escape") || !strings.Contains(ids[7], `"isError":true`) || !strings.Contains(ids[7], "invalid recall: the command is empty") {
		t.Fatalf("answers:\n%s", out)
	}
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(r)
}

// TestMCPServed is an MCP client of a real `engine serve` at /mcp: on TCP
// with the bearer token, refused without it, and on the unix socket with
// no token.
func TestMCPServed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := startServe(t, dir, "--listen", "127.0.0.1:0")
	addr := regexp.MustCompile(`and (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(p.serving)
	if addr == nil {
		t.Fatalf("no TCP address in %q", p.serving)
	}
	tok, err := os.ReadFile(service.TokenPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	connect := func(hc *http.Client, endpoint string) (*sdk.ClientSession, error) {
		return sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	}

	if _, err := connect(http.DefaultClient, addr[1]+"/mcp"); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("without the token: %v", err)
	}
	cs, err := connect(&http.Client{Transport: bearer{token: strings.TrimSpace(string(tok)), rt: http.DefaultTransport}}, addr[1]+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	mcptest.Check(t, ctx, cs)

	sc, err := service.Dial(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.CloseIdleConnections()
	us, err := connect(sc.HTTP, sc.BaseURL+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer us.Close()
	mcptest.OK(t, ctx, us, "memory_recall_domain", map[string]any{"host": "shop.example"}, "Scroll the cart into view")
}
