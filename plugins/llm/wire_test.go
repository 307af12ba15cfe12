package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/engine-dev/engine/engine"
)

// The real langchaingo clients against local servers that speak each
// provider's wire protocol.

// conversation is a request with every kind of message: a system prompt,
// a user turn, an assistant turn with text and a tool call, the tool's
// answer, and a tool definition.
func conversation() engine.ModelRequest {
	return engine.ModelRequest{
		System: "You drive a browser.\nTips from previous experience: close the cookie banner first.",
		Messages: []engine.Message{
			{Role: engine.RoleUser, Content: "Buy a padel racket."},
			{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "call_1", Name: "fill", Arguments: `{"ref":"e7","value":"padel"}`}}},
			{Role: engine.RoleTool, ToolCallID: "call_1", Name: "fill", Content: "element is not an input"},
		},
		Tools: []engine.Tool{{
			Name: "click", Description: "Click an element by ref",
			Parameters: json.RawMessage(`{"type":"object","properties":{"ref":{"type":"string"}},"required":["ref"]}`),
		}},
	}
}

// recorder keeps the last request body a fake server saw.
type recorder struct {
	mu     sync.Mutex
	body   map[string]any
	header http.Header
	path   string
}

func (r *recorder) record(req *http.Request) error {
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.header, r.path = req.Header.Clone(), req.URL.Path
	r.body = nil
	return json.Unmarshal(b, &r.body)
}

func (r *recorder) get() (map[string]any, http.Header, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.body, r.header, r.path
}

// OpenAIServer answers chat completions with a tool call, as OpenAI does.
func OpenAIServer(t testing.TB) (*httptest.Server, *recorder) {
	rec := &recorder{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		if err := rec.record(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt-test",
			"choices":[{"index":0,"message":{"role":"assistant","content":"Closing the banner first.",
			  "tool_calls":[{"id":"call_abc","type":"function","function":{"name":"click","arguments":"{\"ref\":\"e12\"}"}}]},
			  "finish_reason":"tool_calls"}],
			"usage":{"prompt_tokens":57,"completion_tokens":9,"total_tokens":66}}`)
	}))
	t.Cleanup(ts.Close)
	return ts, rec
}

// AnthropicServer answers the messages API with text and a tool_use block.
func AnthropicServer(t testing.TB) (*httptest.Server, *recorder) {
	rec := &recorder{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" {
			http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not found"}}`, http.StatusNotFound)
			return
		}
		if err := rec.record(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test",
			"content":[{"type":"text","text":"Closing the banner first."},
			           {"type":"tool_use","id":"toolu_1","name":"click","input":{"ref":"e12"}}],
			"stop_reason":"tool_use","stop_sequence":null,
			"usage":{"input_tokens":120,"output_tokens":15}}`)
	}))
	t.Cleanup(ts.Close)
	return ts, rec
}

func checkAnswer(t *testing.T, resp *engine.ModelResponse, id string, usage engine.Usage) {
	t.Helper()
	if resp.Text != "Closing the banner first." {
		t.Errorf("text = %q", resp.Text)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID != id || resp.ToolCalls[0].Name != "click" {
		t.Fatalf("tool calls = %+v", resp.ToolCalls)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(resp.ToolCalls[0].Arguments), &args); err != nil || args["ref"] != "e12" {
		t.Errorf("arguments = %q", resp.ToolCalls[0].Arguments)
	}
	if resp.Usage != usage {
		t.Errorf("usage = %+v, want %+v", resp.Usage, usage)
	}
}

func TestPluginOpenAIWire(t *testing.T) {
	ts, rec := OpenAIServer(t)
	t.Setenv("OPENAI_API_KEY", "sk-test-123")
	m := New("openai")
	if err := m.Open(context.Background(), map[string]string{"model": "gpt-test", "base_url": ts.URL + "/v1"}); err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(context.Background(), conversation())
	if err != nil {
		t.Fatal(err)
	}
	checkAnswer(t, resp, "call_abc", engine.Usage{PromptTokens: 57, CompletionTokens: 9})

	body, header, _ := rec.get()
	if got := header.Get("Authorization"); got != "Bearer sk-test-123" {
		t.Errorf("Authorization = %q", got)
	}
	if body["model"] != "gpt-test" {
		t.Errorf("model = %v", body["model"])
	}
	msgs := body["messages"].([]any)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool" {
		t.Fatalf("roles = %v", roles)
	}
	if c := msgs[0].(map[string]any)["content"]; !strings.Contains(fmt.Sprint(c), "Tips from previous experience") {
		t.Errorf("system content = %v", c)
	}
	asst := msgs[2].(map[string]any)
	tc := asst["tool_calls"].([]any)[0].(map[string]any)
	if tc["id"] != "call_1" || tc["function"].(map[string]any)["name"] != "fill" {
		t.Errorf("assistant tool call = %v", tc)
	}
	tool := msgs[3].(map[string]any)
	if tool["tool_call_id"] != "call_1" || !strings.Contains(fmt.Sprint(tool["content"]), "element is not an input") {
		t.Errorf("tool message = %v", tool)
	}
	tools := body["tools"].([]any)
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	if fn["name"] != "click" || fn["parameters"].(map[string]any)["required"].([]any)[0] != "ref" {
		t.Errorf("tools = %v", tools)
	}
}

func TestPluginOpenAICompatibleNeedsNoKey(t *testing.T) {
	ts, rec := OpenAIServer(t)
	t.Setenv("OPENAI_API_KEY", "")
	m := New("openai")
	if err := m.Open(context.Background(), map[string]string{"model": "local", "base_url": ts.URL + "/v1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Complete(context.Background(), engine.ModelRequest{Messages: []engine.Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if body, _, _ := rec.get(); body["model"] != "local" {
		t.Fatalf("model = %v", body["model"])
	}
}

func TestPluginOllamaWire(t *testing.T) {
	ts, rec := OpenAIServer(t)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OLLAMA_HOST", strings.TrimPrefix(ts.URL, "http://")) // Ollama's host:port form
	m := New("ollama")
	if err := m.Open(context.Background(), map[string]string{"model": "qwen2.5:7b"}); err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(context.Background(), conversation())
	if err != nil {
		t.Fatal(err)
	}
	checkAnswer(t, resp, "call_abc", engine.Usage{PromptTokens: 57, CompletionTokens: 9})
	if body, _, path := rec.get(); body["model"] != "qwen2.5:7b" || path != "/v1/chat/completions" || body["tools"] == nil {
		t.Fatalf("server saw model %v at %s, tools %v", body["model"], path, body["tools"])
	}
	for in, want := range map[string]string{
		"":                       "http://127.0.0.1:11434/v1",
		"gpu-box:11434":          "http://gpu-box:11434/v1",
		"https://ollama.test/":   "https://ollama.test/v1",
		"http://ollama.test/v1/": "http://ollama.test/v1",
	} {
		if got := OllamaBaseURL(in); got != want {
			t.Errorf("OllamaBaseURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPluginAnthropicWire(t *testing.T) {
	ts, rec := AnthropicServer(t)
	t.Setenv("ANTHROPIC_API_KEY", "ant-test-456")
	m := New("anthropic")
	if err := m.Open(context.Background(), map[string]string{"model": "claude-test", "base_url": ts.URL + "/v1"}); err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(context.Background(), conversation())
	if err != nil {
		t.Fatal(err)
	}
	checkAnswer(t, resp, "toolu_1", engine.Usage{PromptTokens: 120, CompletionTokens: 15})

	body, header, _ := rec.get()
	if got := header.Get("X-Api-Key"); got != "ant-test-456" {
		t.Errorf("x-api-key = %q", got)
	}
	if body["model"] != "claude-test" || !strings.Contains(fmt.Sprint(body["system"]), "Tips from previous experience") {
		t.Errorf("model %v system %v", body["model"], body["system"])
	}
	msgs := body["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages = %v", msgs)
	}
	use := msgs[1].(map[string]any)["content"].([]any)[0].(map[string]any)
	if msgs[1].(map[string]any)["role"] != "assistant" || use["type"] != "tool_use" || use["id"] != "call_1" || use["input"].(map[string]any)["ref"] != "e7" {
		t.Errorf("assistant tool_use = %v", msgs[1])
	}
	res := msgs[2].(map[string]any)["content"].([]any)[0].(map[string]any)
	if msgs[2].(map[string]any)["role"] != "user" || res["type"] != "tool_result" || res["tool_use_id"] != "call_1" || res["content"] != "element is not an input" {
		t.Errorf("tool_result = %v", msgs[2])
	}
	tools := body["tools"].([]any)
	if tools[0].(map[string]any)["name"] != "click" || tools[0].(map[string]any)["input_schema"] == nil {
		t.Errorf("tools = %v", tools)
	}
}

// GeminiServer answers the Gemini REST API (streamGenerateContent with
// alt=json: a JSON array of responses) with text and a function call.
func GeminiServer(t testing.TB) (*httptest.Server, *recorder) {
	rec := &recorder{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/v1beta/models/") || !strings.Contains(r.URL.Path, "GenerateContent") && !strings.Contains(r.URL.Path, "generateContent") {
			http.Error(w, `{"error":{"code":404,"message":"not found"}}`, http.StatusNotFound)
			return
		}
		if err := rec.record(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"candidates":[{"content":{"role":"model","parts":[
			{"text":"Closing the banner first."},
			{"functionCall":{"name":"click","args":{"ref":"e12"}}}]},
			"finishReason":"STOP","index":0}],
			"usageMetadata":{"promptTokenCount":42,"candidatesTokenCount":7,"totalTokenCount":49}}]`)
	}))
	t.Cleanup(ts.Close)
	return ts, rec
}

func TestPluginGoogleAIWire(t *testing.T) {
	ts, rec := GeminiServer(t)
	t.Setenv("GOOGLE_API_KEY", "g-key-789")
	m := New("googleai")
	if err := m.Open(context.Background(), map[string]string{"model": "gemini-test", "base_url": ts.URL}); err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(context.Background(), conversation())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Closing the banner first." || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "click" || resp.ToolCalls[0].ID == "" {
		t.Fatalf("resp = %+v", resp)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(resp.ToolCalls[0].Arguments), &args); err != nil || args["ref"] != "e12" {
		t.Errorf("arguments = %q", resp.ToolCalls[0].Arguments)
	}
	if resp.Usage != (engine.Usage{PromptTokens: 42, CompletionTokens: 7}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	body, header, path := rec.get()
	if got := header.Get("X-Goog-Api-Key"); got != "g-key-789" {
		t.Errorf("x-goog-api-key = %q", got)
	}
	if !strings.Contains(path, "/models/gemini-test:") {
		t.Errorf("path = %s", path)
	}
	if !strings.Contains(fmt.Sprint(body["systemInstruction"]), "Tips from previous experience") {
		t.Errorf("systemInstruction = %v", body["systemInstruction"])
	}
	contents := body["contents"].([]any)
	if len(contents) != 3 {
		t.Fatalf("contents = %v", contents)
	}
	call := contents[1].(map[string]any)["parts"].([]any)[0].(map[string]any)["functionCall"].(map[string]any)
	if call["name"] != "fill" || call["args"].(map[string]any)["ref"] != "e7" {
		t.Errorf("function call = %v", call)
	}
	res := contents[2].(map[string]any)["parts"].([]any)[0].(map[string]any)["functionResponse"].(map[string]any)
	if res["name"] != "fill" || !strings.Contains(fmt.Sprint(res["response"]), "element is not an input") {
		t.Errorf("function response = %v", res)
	}
	decl := body["tools"].([]any)[0].(map[string]any)["functionDeclarations"].([]any)[0].(map[string]any)
	if decl["name"] != "click" {
		t.Errorf("tools = %v", body["tools"])
	}
}

func TestPluginMissingKeysNameTheVariable(t *testing.T) {
	for _, c := range []struct{ provider, env string }{
		{"openai", "OPENAI_API_KEY"},
		{"anthropic", "ANTHROPIC_API_KEY"},
		{"googleai", "GOOGLE_API_KEY or GEMINI_API_KEY"},
	} {
		t.Run(c.provider, func(t *testing.T) {
			for _, v := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY"} {
				t.Setenv(v, "")
			}
			err := New(c.provider).Open(context.Background(), map[string]string{})
			if err == nil || !strings.Contains(err.Error(), "set "+c.env) {
				t.Fatalf("err = %v, want it to name %s", err, c.env)
			}
		})
	}
}

func TestPluginProviderErrorsSurface(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
	}))
	defer ts.Close()
	t.Setenv("OPENAI_API_KEY", "wrong")
	m := New("openai")
	if err := m.Open(context.Background(), map[string]string{"base_url": ts.URL + "/v1"}); err != nil {
		t.Fatal(err)
	}
	_, err := m.Complete(context.Background(), engine.ModelRequest{Messages: []engine.Message{{Role: "user", Content: "hi"}}})
	if err == nil || !strings.Contains(err.Error(), "Incorrect API key provided") {
		t.Fatalf("err = %v", err)
	}
}

func TestPluginUsageNormalised(t *testing.T) {
	for _, c := range []struct {
		info map[string]any
		want engine.Usage
	}{
		{map[string]any{"PromptTokens": 10, "CompletionTokens": 3}, engine.Usage{PromptTokens: 10, CompletionTokens: 3}},
		{map[string]any{"InputTokens": int64(7), "OutputTokens": int64(2)}, engine.Usage{PromptTokens: 7, CompletionTokens: 2}},
		{map[string]any{"PromptTokens": int32(5), "CompletionTokens": float64(1)}, engine.Usage{PromptTokens: 5, CompletionTokens: 1}},
		{nil, engine.Usage{}},
	} {
		if got := Usage(c.info); got != c.want {
			t.Errorf("Usage(%v) = %+v, want %+v", c.info, got, c.want)
		}
	}
}
