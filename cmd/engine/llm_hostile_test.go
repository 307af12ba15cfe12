package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/agent"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/plugins/host"
)

// A hostile OpenAI-compatible provider, behind the real openai plugin
// (a subprocess), driving the real static browser plugin (a subprocess)
// on a login page: every pathology of a provider either is retried, or
// becomes something the model is told, or ends the run with a clear
// reason; none hangs or crashes the run.

type behaviour func(w http.ResponseWriter, r *http.Request)

type hostile struct {
	*httptest.Server
	mu     sync.Mutex
	next   []behaviour
	bodies []map[string]any
}

func newHostile(t *testing.T, bs ...behaviour) *hostile {
	h := &hostile{next: bs}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		h.mu.Lock()
		h.bodies = append(h.bodies, body)
		b := h.next[0]
		if len(h.next) > 1 {
			h.next = h.next[1:]
		}
		h.mu.Unlock()
		b(w, r)
	}))
	t.Cleanup(h.Server.Close)
	return h
}

// lastUser is the last user message of request i.
func (h *hostile) lastUser(i int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i >= len(h.bodies) {
		return ""
	}
	msgs, _ := h.bodies[i]["messages"].([]any)
	if len(msgs) == 0 {
		return ""
	}
	return fmt.Sprint(msgs[len(msgs)-1].(map[string]any)["content"])
}

func toolCall(text, name, args string) behaviour {
	return func(w http.ResponseWriter, _ *http.Request) {
		msg := map[string]any{"role": "assistant", "content": text,
			"tool_calls": []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": name, "arguments": args}}}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "local",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "tool_calls"}},
			"usage":   map[string]any{"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}})
	}
}

func httpStatus(code int, retryAfter string) behaviour {
	return func(w http.ResponseWriter, _ *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"message":"hostile %d","type":"server_error"}}`, code)
	}
}

func reset(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	conn.Close()
}

func hang(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

var finishOK = toolCall("", "finish", `{"answer":"signed in","success":true}`)

const loginPage = `<!doctype html><title>Sign in</title><h1>Sign in</h1>
<form action="/welcome"><label for="pw">Password</label><input id="pw" name="pw" type="password"><button>Sign in</button></form>`

type llmLine struct {
	Attempts int `json:"attempts"`
	Retries  []struct {
		Error  string `json:"error"`
		WaitMS int64  `json:"wait_ms"`
	} `json:"retries"`
	LatencyMS *int64 `json:"latency_ms"`
	TextBytes int    `json:"text_bytes"`
	Error     string `json:"error"`
	Request   struct {
		System   string `json:"system"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	} `json:"request"`
}

func readLLM(t *testing.T, dir string) ([]llmLine, string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, agent.LLMFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []llmLine
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l llmLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%v: %.300s", err, sc.Text())
		}
		out = append(out, l)
	}
	return out, string(raw)
}

func TestAgentHostileProvider(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, loginPage)
	}))
	defer site.Close()
	huge := strings.Repeat("blah ", 1_000_000) // 5 MB
	for _, c := range []struct {
		name    string
		script  []behaviour
		success bool
		reason  string
		check   func(t *testing.T, h *hostile, lines []llmLine, raw string)
	}{
		{"500 then ok", []behaviour{httpStatus(500, ""), toolCall("", "fill", `{"element":"Password","text":"hunter2-secret"}`), finishOK}, true, "finished",
			func(t *testing.T, h *hostile, lines []llmLine, raw string) {
				if lines[0].Attempts != 2 || len(lines[0].Retries) != 1 || !strings.Contains(lines[0].Retries[0].Error, "HTTP 500") {
					t.Fatalf("first call: %+v", lines[0])
				}
				if strings.Contains(raw, "hunter2") || !strings.Contains(raw, agent.Redacted) {
					t.Fatalf("the secret is in llm.jsonl:\n%.3000s", raw)
				}
			}},
		{"429 then ok", []behaviour{httpStatus(429, "0"), finishOK}, true, "finished",
			func(t *testing.T, h *hostile, lines []llmLine, _ string) {
				if lines[0].Attempts != 2 || !strings.Contains(lines[0].Retries[0].Error, "rate limited (HTTP 429)") {
					t.Fatalf("first call: %+v", lines[0])
				}
			}},
		{"reset then ok", []behaviour{reset, finishOK}, true, "finished",
			func(t *testing.T, h *hostile, lines []llmLine, _ string) {
				if lines[0].Attempts != 2 || !strings.Contains(lines[0].Retries[0].Error, "connection failed") {
					t.Fatalf("first call: %+v", lines[0])
				}
			}},
		{"always 503", []behaviour{httpStatus(503, "")}, false, "llm_failed: ",
			func(t *testing.T, h *hostile, lines []llmLine, _ string) {
				if len(lines) != 1 || lines[0].Attempts != 3 || !strings.Contains(lines[0].Error, "gave up after 3 attempts") {
					t.Fatalf("%+v", lines)
				}
			}},
		{"hang", []behaviour{hang}, false, "llm_failed: model call timed out after 300ms",
			func(t *testing.T, h *hostile, lines []llmLine, _ string) {
				if len(lines) != 1 || !strings.Contains(lines[0].Error, "timed out") {
					t.Fatalf("%+v", lines)
				}
			}},
		{"huge text", []behaviour{toolCall(huge, "finish", `{"answer":"done","success":true}`)}, true, "finished",
			func(t *testing.T, h *hostile, lines []llmLine, raw string) {
				if len(raw) > 64<<10 || lines[0].TextBytes < 1<<20 {
					t.Fatalf("llm.jsonl is %d bytes; text_bytes %d", len(raw), lines[0].TextBytes)
				}
			}},
		{"huge tool arguments", []behaviour{toolCall("", "fill", `{"element":"Password","text":"`+huge+`"}`), finishOK}, true, "finished",
			func(t *testing.T, h *hostile, lines []llmLine, raw string) {
				if m := h.lastUser(1); !strings.Contains(m, "a tool call may carry") {
					t.Fatalf("the model was not told: %s", m)
				}
				if len(raw) > 64<<10 {
					t.Fatalf("llm.jsonl is %d bytes", len(raw))
				}
			}},
		{"malformed arguments", []behaviour{toolCall("", "fill", `{"element":"Password","text":`), finishOK}, true, "finished",
			func(t *testing.T, h *hostile, _ []llmLine, _ string) {
				if m := h.lastUser(1); !strings.Contains(m, "malformed arguments for fill") {
					t.Fatalf("the model was not told: %s", m)
				}
			}},
		{"unknown tool", []behaviour{toolCall("", "teleport", `{}`), finishOK}, true, "finished",
			func(t *testing.T, h *hostile, _ []llmLine, _ string) {
				if m := h.lastUser(1); !strings.Contains(m, `unknown tool "teleport"`) {
					t.Fatalf("the model was not told: %s", m)
				}
			}},
		{"finish without success", []behaviour{toolCall("", "finish", `{"answer":"no password given","success":false}`)}, false, "gave_up: no password given", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHostile(t, c.script...)
			// Generous (a loaded machine under -race parses 5 MB slowly),
			// except where the timeout is the point.
			timeout := 30 * time.Second
			if c.name == "hang" {
				timeout = 300 * time.Millisecond
			}
			t.Setenv("OPENAI_API_KEY", "")
			ctx := context.Background()
			opts := host.Options{}
			m, err := host.OpenModel(ctx, "openai:local", host.ModelOptions{Options: opts, BaseURL: h.URL + "/v1", RequestTimeout: 10 * time.Second, MaxTokens: 321})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			b, err := host.OpenBrowser(ctx, "static", host.BrowserOptions{Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			dir := t.TempDir()
			open := func(ctx context.Context) (kv.Store, error) {
				return kv.Open(ctx, filepath.Join(dir, "db"), kv.Options{GCInterval: -1})
			}
			res, err := agent.Run(ctx, agent.Config{Goal: "sign in", StartURL: site.URL, Browser: b, Model: m, OpenDB: open,
				Approve: agent.ApproveAuto, RunsDir: filepath.Join(dir, "runs"), NoMemory: true,
				LLM: agent.LLMPolicy{Timeout: timeout, Retries: 2, Backoff: 5 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Success != c.success || !strings.HasPrefix(res.Reason, c.reason) {
				t.Fatalf("success %v reason %q, want %v %q", res.Success, res.Reason, c.success, c.reason)
			}
			lines, raw := readLLM(t, res.Dir)
			if len(lines) == 0 || lines[0].LatencyMS == nil || lines[0].Request.System == "" || len(lines[0].Request.Messages) != 1 {
				t.Fatalf("llm.jsonl:\n%.2000s", raw)
			}
			h.mu.Lock()
			for i, body := range h.bodies {
				if body["max_tokens"] != float64(321) {
					t.Errorf("request %d: max_tokens = %v", i+1, body["max_tokens"])
				}
			}
			h.mu.Unlock()
			if c.check != nil {
				c.check(t, h, lines, raw)
			}
		})
	}
}

// The CLI's --llm-timeout bounds a call to a provider that never answers.
func TestAgentLLMTimeoutFlag(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, loginPage) }))
	defer site.Close()
	h := newHostile(t, hang)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", h.URL+"/v1")
	var out, errb strings.Builder
	code := Main([]string{"run", "--quiet", "--browser", "static", "--llm", "openai:local", "--llm-timeout", "300ms", "--llm-max-tokens", "99",
		"--goal", "sign in", "--url", site.URL, "--data-dir", t.TempDir()}, strings.NewReader(""), &out, &errb)
	if code != 1 || !strings.Contains(out.String()+errb.String(), "llm_failed: model call timed out after 300ms") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.bodies) != 1 || h.bodies[0]["max_tokens"] != float64(99) {
		t.Fatalf("bodies: %v", h.bodies)
	}
}
