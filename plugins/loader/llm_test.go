package loader

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

// The built-in openai plugin, as a subprocess, against a local server that
// speaks OpenAI chat completions.
func TestPluginOpenAISubprocess(t *testing.T) {
	var gotModel, gotAuth string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			Model string `json:"model"`
		}
		_ = json.Unmarshal(b, &req)
		gotModel, gotAuth = req.Model, r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,
			"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"navigate","arguments":"{\"url\":\"http://a.test/\"}"}}]},
			"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":31,"completion_tokens":12,"total_tokens":43}}`)
	}))
	defer ts.Close()
	t.Setenv("OPENAI_API_KEY", "sk-sub")
	opts, _ := testOptions(t, "")
	m, err := OpenModel(context.Background(), "openai:qwen2.5-7b", ModelOptions{Options: opts, BaseURL: ts.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	resp, err := m.Complete(context.Background(), engine.ModelRequest{
		System:   "sys",
		Messages: []engine.Message{{Role: "user", Content: "go"}},
		Tools:    []engine.Tool{{Name: "navigate", Description: "load a URL", Parameters: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID != "call_9" || resp.ToolCalls[0].Arguments != `{"url":"http://a.test/"}` {
		t.Fatalf("resp = %+v", resp)
	}
	if resp.Usage != (engine.Usage{PromptTokens: 31, CompletionTokens: 12}) {
		t.Fatalf("usage = %+v", resp.Usage)
	}
	if gotModel != "qwen2.5-7b" || gotAuth != "Bearer sk-sub" {
		t.Fatalf("server saw model %q auth %q", gotModel, gotAuth)
	}
}

func TestPluginMissingKeySubprocess(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	opts, _ := testOptions(t, "")
	_, err := OpenModel(context.Background(), "anthropic:claude-x", ModelOptions{Options: opts})
	if err == nil || !strings.Contains(err.Error(), "no API key: set ANTHROPIC_API_KEY") {
		t.Fatalf("err = %v", err)
	}
}
