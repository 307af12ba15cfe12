package agentcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/agent"
	"github.com/engine-dev/engine/engine/agent/demosite"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/server/attach"
	"github.com/engine-dev/engine/plugins/loader"
	"github.com/engine-dev/engine/plugins/scripted"
)

// clickModel clicks "Accept cookies" then "Search products", again and
// again, calling kill before its second answer.
type clickModel struct {
	n    int
	kill func()
}

func (m *clickModel) Complete(context.Context, engine.ModelRequest) (*engine.ModelResponse, error) {
	m.n++
	if m.n == 2 {
		m.kill()
	}
	name := "Accept cookies"
	if m.n > 1 {
		name = "Search products"
	}
	return &engine.ModelResponse{ToolCalls: []engine.ToolCall{{ID: "c", Name: "click", Arguments: `{"element": "` + name + `"}`}}}, nil
}

// A browser plugin that dies mid-run: the run ends as failed and says why,
// memory stays intact and usable.
func TestAgentBrowserPluginDiesMidRun(t *testing.T) {
	if !haveChromium() {
		t.Skip("no chromium")
	}
	ctx := context.Background()
	site, err := demosite.Start(demosite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	b, err := loader.OpenBrowser(ctx, "chromedp", loader.BrowserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	dir := t.TempDir()
	mem, err := attach.Open(ctx, dir, attach.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := &clickModel{kill: func() {
		if err := syscall.Kill(b.Pid(), syscall.SIGKILL); err != nil {
			t.Error(err)
		}
	}}
	res, err := agent.Run(ctx, agent.Config{Goal: demosite.Goal, StartURL: site.URL, Browser: b, Model: m, Memory: mem.Client,
		Approve: agent.ApproveAuto, RunsDir: filepath.Join(dir, "runs")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Success || !strings.HasPrefix(res.Reason, agent.ReasonBrowserFailed) || !strings.Contains(res.Reason, "plugin died") {
		t.Fatalf("%+v", res)
	}
	if err := mem.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	man, err := db.Runs.Get(ctx, res.RunID)
	if err != nil || man.Status != run.Failed || man.Reason != res.Reason {
		t.Fatalf("manifest: %+v %v", man, err)
	}
	if ls, err := db.Lessons.List(ctx, lesson.Filter{}); err != nil || len(ls) != 3 {
		t.Fatalf("lessons after the crash: %d %v", len(ls), err)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "manifest.json")); err != nil {
		t.Fatal(err)
	}
}

// The demo's bundled rules are a valid scripted rules file.
func TestDemoRulesParse(t *testing.T) {
	if _, err := scripted.Parse(demosite.Rules); err != nil {
		t.Fatal(err)
	}
}

// openAIFromRules is a local server speaking OpenAI's chat completions wire
// protocol whose answers come from scripted rules: the engine's real
// provider plugin talks to it as it would to api.openai.com.
func openAIFromRules(t *testing.T, rules []byte) (*httptest.Server, *int) {
	r, err := scripted.Parse(rules)
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New(r)
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var mr engine.ModelRequest
		for _, m := range body.Messages {
			text := fmt.Sprint(m.Content)
			if parts, ok := m.Content.([]any); ok {
				text = ""
				for _, p := range parts {
					if pm, ok := p.(map[string]any); ok {
						text += fmt.Sprint(pm["text"])
					}
				}
			}
			if m.Role == "system" {
				mr.System = text
			} else {
				mr.Messages = append(mr.Messages, engine.Message{Role: m.Role, Content: text})
			}
		}
		mu.Lock()
		calls++
		resp, err := model.Complete(req.Context(), mr)
		mu.Unlock()
		if err != nil {
			http.Error(w, `{"error":{"message":"`+err.Error()+`"}}`, http.StatusBadRequest)
			return
		}
		type fn struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}
		type tc struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function fn     `json:"function"`
		}
		var tcs []tc
		for _, c := range resp.ToolCalls {
			tcs = append(tcs, tc{ID: c.ID, Type: "function", Function: fn{c.Name, c.Arguments}})
		}
		out := map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-4o-mini",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls",
				"message": map[string]any{"role": "assistant", "content": resp.Text, "tool_calls": tcs}}},
			"usage": map[string]any{"prompt_tokens": resp.Usage.PromptTokens, "completion_tokens": resp.Usage.CompletionTokens,
				"total_tokens": resp.Usage.Total()}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// engine demo with a real provider plugin (openai, over its wire protocol).
func TestAgentDemoWithOpenAIProvider(t *testing.T) {
	if !haveChromium() {
		t.Skip("no chromium")
	}
	srv, calls := openAIFromRules(t, demosite.Rules)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	var out, errb strings.Builder
	code := agentMain([]string{"demo", "--quiet", "--llm", "openai:gpt-4o-mini", "--data-dir", t.TempDir()}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"LLM: openai:gpt-4o-mini", "cold    completed  11     4       11", "warm    completed  7      0       7", "replay  completed  7      0       0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	if *calls != 18 {
		t.Errorf("the provider saw %d calls, want 18", *calls)
	}
}
