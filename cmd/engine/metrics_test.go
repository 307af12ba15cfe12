package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/engine-dev/engine/engine/server/service"
)

// `engine serve --log-format json` answers /metrics behind the token on
// TCP and logs each request as one JSON line on stderr, with its route and
// namespace and never its token.
func TestServeMetricsAndAccessLog(t *testing.T) {
	dir := t.TempDir()
	createNamespaces(t, dir, "a")
	p := startServe(t, dir, "--listen", "127.0.0.1:0", "--log-format", "json", "--namespace", "a")
	addr := regexp.MustCompile(`and (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(p.serving)
	if addr == nil {
		t.Fatalf("no TCP address in %q", p.serving)
	}
	b, err := os.ReadFile(service.TokenPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(string(b))
	get := func(path, tok string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, addr[1]+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/v1/health", tok); code != http.StatusOK {
		t.Fatalf("health: %d %s", code, body)
	}
	if out, err := engineCmd(t, dir, "query", "lessons").CombinedOutput(); err != nil {
		t.Fatalf("engine query lessons through the server: %v\n%s", err, out)
	}
	if code, _ := get("/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, want 401", code)
	}
	code, body := get("/metrics", tok)
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	for _, want := range []string{
		`engine_http_requests_total{method="GET",route="/v1/health",status="200"} 1`,
		`engine_lock_wait_seconds_count{mode="shared"}`,
		`engine_store_bytes `,
		`engine_open_connections{listener="tcp"} `,
		`engine_recall_index_rebuild_seconds_count{kind="build"} `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.wait(t); err != nil {
		t.Fatalf("engine serve: %v\n%s", err, p.log())
	}
	var routes []string
	for _, l := range strings.Split(p.log(), "\n") {
		if !strings.HasPrefix(l, "{") {
			continue // the lines engine serve prints for a person
		}
		if strings.Contains(l, tok) {
			t.Errorf("a log line holds the token: %s", l)
		}
		var e struct {
			Msg       string `json:"msg"`
			Route     string `json:"route"`
			Status    int    `json:"status"`
			Namespace string `json:"namespace"`
			Remote    string `json:"remote"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, l)
		}
		if e.Msg == "request" {
			routes = append(routes, e.Remote+" "+e.Route+" "+e.Namespace)
		}
	}
	for _, want := range []string{"127.0.0.1 /v1/health a", "unix /v1/lessons a", "127.0.0.1 unmatched a", "127.0.0.1 /metrics a"} {
		found := false
		for _, r := range routes {
			found = found || r == want
		}
		if !found {
			t.Errorf("no access log line %q in %q", want, routes)
		}
	}
}

// A --log-format engine serve does not know is refused before it serves.
func TestServeLogFormatRefused(t *testing.T) {
	out, err := engineCmd(t, t.TempDir(), "serve", "--log-format", "xml").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `--log-format "xml": want text or json`) {
		t.Fatalf("engine serve --log-format xml: %v\n%s", err, out)
	}
}
