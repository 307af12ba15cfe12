package agentcmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/agent"
	"github.com/engine-dev/engine/engine/server/attach"
	"github.com/engine-dev/engine/plugins/llm/llmtest"
	"github.com/engine-dev/engine/plugins/loader"
)

// A hostile OpenAI-compatible provider, behind the real openai plugin
// (a subprocess), driving the real static browser plugin (a subprocess)
// on a login page: every pathology of a provider either is retried, or
// becomes something the model is told, or ends the run with a clear
// reason; none hangs or crashes the run.

var finishOK = llmtest.Answer("", "finish", `{"answer":"signed in","success":true}`)

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
		script  []llmtest.Behaviour
		success bool
		reason  string
		check   func(t *testing.T, h *llmtest.Server, lines []llmLine, raw string)
	}{
		{"500 then ok", []llmtest.Behaviour{llmtest.Status(500, ""), llmtest.Answer("", "fill", `{"element":"Password","text":"hunter2-secret"}`), finishOK}, true, "finished",
			func(t *testing.T, h *llmtest.Server, lines []llmLine, raw string) {
				if lines[0].Attempts != 2 || len(lines[0].Retries) != 1 || !strings.Contains(lines[0].Retries[0].Error, "HTTP 500") {
					t.Fatalf("first call: %+v", lines[0])
				}
				if strings.Contains(raw, "hunter2") || !strings.Contains(raw, agent.Redacted) {
					t.Fatalf("the secret is in llm.jsonl:\n%.3000s", raw)
				}
			}},
		{"429 then ok", []llmtest.Behaviour{llmtest.Status(429, "0"), finishOK}, true, "finished",
			func(t *testing.T, h *llmtest.Server, lines []llmLine, _ string) {
				if lines[0].Attempts != 2 || !strings.Contains(lines[0].Retries[0].Error, "rate limited (HTTP 429)") {
					t.Fatalf("first call: %+v", lines[0])
				}
			}},
		{"reset then ok", []llmtest.Behaviour{llmtest.Reset, finishOK}, true, "finished",
			func(t *testing.T, h *llmtest.Server, lines []llmLine, _ string) {
				if lines[0].Attempts != 2 || !strings.Contains(lines[0].Retries[0].Error, "connection failed") {
					t.Fatalf("first call: %+v", lines[0])
				}
			}},
		{"always 503", []llmtest.Behaviour{llmtest.Status(503, "")}, false, "llm_failed: ",
			func(t *testing.T, h *llmtest.Server, lines []llmLine, _ string) {
				if len(lines) != 1 || lines[0].Attempts != 3 || !strings.Contains(lines[0].Error, "gave up after 3 attempts") {
					t.Fatalf("%+v", lines)
				}
			}},
		{"hang", []llmtest.Behaviour{llmtest.Hang}, false, "llm_failed: model call timed out after 300ms",
			func(t *testing.T, h *llmtest.Server, lines []llmLine, _ string) {
				if len(lines) != 1 || !strings.Contains(lines[0].Error, "timed out") {
					t.Fatalf("%+v", lines)
				}
			}},
		{"huge text", []llmtest.Behaviour{llmtest.Answer(huge, "finish", `{"answer":"done","success":true}`)}, true, "finished",
			func(t *testing.T, h *llmtest.Server, lines []llmLine, raw string) {
				if len(raw) > 64<<10 || lines[0].TextBytes < 1<<20 {
					t.Fatalf("llm.jsonl is %d bytes; text_bytes %d", len(raw), lines[0].TextBytes)
				}
			}},
		{"huge tool arguments", []llmtest.Behaviour{llmtest.Answer("", "fill", `{"element":"Password","text":"`+huge+`"}`), finishOK}, true, "finished",
			func(t *testing.T, h *llmtest.Server, lines []llmLine, raw string) {
				if m := h.LastUser(1); !strings.Contains(m, "a tool call may carry") {
					t.Fatalf("the model was not told: %s", m)
				}
				if len(raw) > 64<<10 {
					t.Fatalf("llm.jsonl is %d bytes", len(raw))
				}
			}},
		{"malformed arguments", []llmtest.Behaviour{llmtest.Answer("", "fill", `{"element":"Password","text":`), finishOK}, true, "finished",
			func(t *testing.T, h *llmtest.Server, _ []llmLine, _ string) {
				if m := h.LastUser(1); !strings.Contains(m, "malformed arguments for fill") {
					t.Fatalf("the model was not told: %s", m)
				}
			}},
		{"unknown tool", []llmtest.Behaviour{llmtest.Answer("", "teleport", `{}`), finishOK}, true, "finished",
			func(t *testing.T, h *llmtest.Server, _ []llmLine, _ string) {
				if m := h.LastUser(1); !strings.Contains(m, `unknown tool "teleport"`) {
					t.Fatalf("the model was not told: %s", m)
				}
			}},
		{"finish without success", []llmtest.Behaviour{llmtest.Answer("", "finish", `{"answer":"no password given","success":false}`)}, false, "gave_up: no password given", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := llmtest.New(t, c.script...)
			// Generous (a loaded machine under -race parses 5 MB slowly),
			// except where the timeout is the point.
			timeout := 30 * time.Second
			if c.name == "hang" {
				timeout = 300 * time.Millisecond
			}
			t.Setenv("OPENAI_API_KEY", "")
			ctx := context.Background()
			opts := loader.Options{}
			m, err := loader.OpenModel(ctx, "openai:local", loader.ModelOptions{Options: opts, BaseURL: h.URL + "/v1", RequestTimeout: 10 * time.Second, MaxTokens: 321})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			b, err := loader.OpenBrowser(ctx, "static", loader.BrowserOptions{Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			dir := t.TempDir()
			mem, err := attach.Open(ctx, dir, attach.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			res, err := agent.Run(ctx, agent.Config{Goal: "sign in", StartURL: site.URL, Browser: b, Model: m, Memory: mem.Client,
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
			for i, body := range h.Bodies() {
				if body["max_tokens"] != float64(321) {
					t.Errorf("request %d: max_tokens = %v", i+1, body["max_tokens"])
				}
			}
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
	h := llmtest.New(t, llmtest.Hang)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", h.URL+"/v1")
	var out, errb strings.Builder
	code := agentMain([]string{"run", "--quiet", "--browser", "static", "--llm", "openai:local", "--llm-timeout", "300ms", "--llm-max-tokens", "99",
		"--goal", "sign in", "--url", site.URL, "--data-dir", t.TempDir()}, strings.NewReader(""), &out, &errb)
	if code != 1 || !strings.Contains(out.String()+errb.String(), "llm_failed: model call timed out after 300ms") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if bodies := h.Bodies(); len(bodies) != 1 || bodies[0]["max_tokens"] != float64(99) {
		t.Fatalf("bodies: %v", bodies)
	}
}
