// Package llm is the LLM plugin built on langchaingo: one plugin process
// per provider (openai, anthropic, googleai, ollama). The openai provider
// also speaks to any OpenAI-compatible server (vLLM, llama.cpp server, LM
// Studio, Ollama's /v1) given a base URL.
//
// Keys come from the usual environment variables, which the plugin inherits
// from the engine: OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_API_KEY (or
// GEMINI_API_KEY); ollama needs none. A missing key is an error from Open
// naming the variable. Base URLs: the base_url option, else OPENAI_BASE_URL,
// ANTHROPIC_BASE_URL, OLLAMA_HOST. The ollama provider speaks to Ollama's
// OpenAI-compatible /v1 endpoint, since langchaingo's native Ollama client
// has no tool calls.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/googleai"
	"github.com/tmc/langchaingo/llms/openai"
	"google.golang.org/api/option"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/plugins/shared"
)

// Version is the langchaingo plugin's version.
const Version = "1.0.0"

// Provider describes one provider.
type Provider struct {
	Name         string
	KeyEnv       []string // the first one set is used
	BaseURLEnv   string
	DefaultModel string
	Description  string
}

// Providers are the langchaingo providers served as built-in plugins.
var Providers = []Provider{
	{Name: "openai", KeyEnv: []string{"OPENAI_API_KEY"}, BaseURLEnv: "OPENAI_BASE_URL", DefaultModel: "gpt-4o-mini",
		Description: "OpenAI chat completions, or any OpenAI-compatible server by base URL (vLLM, llama.cpp, LM Studio, Ollama /v1)"},
	{Name: "anthropic", KeyEnv: []string{"ANTHROPIC_API_KEY"}, BaseURLEnv: "ANTHROPIC_BASE_URL", DefaultModel: "claude-3-5-haiku-latest",
		Description: "Anthropic messages API"},
	{Name: "googleai", KeyEnv: []string{"GOOGLE_API_KEY", "GEMINI_API_KEY"}, BaseURLEnv: "GOOGLE_AI_BASE_URL", DefaultModel: "gemini-2.0-flash",
		Description: "Google AI (Gemini) API"},
	{Name: "ollama", BaseURLEnv: "OLLAMA_HOST", DefaultModel: "llama3.2",
		Description: "a local Ollama server, through its OpenAI-compatible /v1 endpoint"},
}

// LookupProvider finds a provider by name.
func LookupProvider(name string) (Provider, bool) {
	for _, p := range Providers {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// Model is one provider's model behind engine.Model.
type Model struct {
	provider Provider

	mu        sync.Mutex
	llm       llms.Model
	model     string
	timeout   time.Duration
	maxTokens int
	legacyMax bool // send max_tokens, not max_completion_tokens (OpenAI-compatible servers)
}

// New returns the unopened model of a provider (see Providers).
func New(provider string) *Model {
	p, ok := LookupProvider(provider)
	if !ok {
		p = Provider{Name: provider}
	}
	return &Model{provider: p}
}

// Describe implements shared.Model.
func (m *Model) Describe() shared.Info {
	return shared.Info{
		Name:            m.provider.Name,
		Version:         Version,
		Kind:            shared.KindLLM,
		Capabilities:    []string{"tools", "usage"},
		ProtocolVersion: shared.ProtocolVersion,
		Description:     m.provider.Description + " (langchaingo)",
	}
}

func (m *Model) key() (string, error) {
	for _, v := range m.provider.KeyEnv {
		if k := os.Getenv(v); k != "" {
			return k, nil
		}
	}
	if len(m.provider.KeyEnv) == 0 {
		return "", nil
	}
	return "", fmt.Errorf("%s: no API key: set %s", m.provider.Name, strings.Join(m.provider.KeyEnv, " or "))
}

// Open implements shared.Model: it builds the client and checks the key.
func (m *Model) Open(ctx context.Context, o map[string]string) error {
	model := o[shared.OptModel]
	if model == "" {
		model = m.provider.DefaultModel
	}
	base := o[shared.OptBaseURL]
	if base == "" && m.provider.BaseURLEnv != "" {
		base = os.Getenv(m.provider.BaseURLEnv)
	}
	timeout, maxTokens := DefaultTimeout, DefaultMaxTokens
	if v := o[shared.OptTimeout]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("%s: option timeout %q: want a positive Go duration such as 90s", m.provider.Name, v)
		}
		timeout = d
	}
	if v := o[shared.OptMaxTokens]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("%s: option max_tokens %q: want a positive number", m.provider.Name, v)
		}
		maxTokens = n
	}
	hc := httpClient(timeout, nil)
	// OpenAI's own API wants max_completion_tokens (o1 and later refuse
	// max_tokens); OpenAI-compatible servers (llama.cpp, vLLM, Ollama)
	// know max_tokens.
	legacyMax := m.provider.Name == "ollama" || base != ""
	var (
		l   llms.Model
		err error
	)
	switch m.provider.Name {
	case "openai":
		key, kerr := m.key()
		if kerr != nil {
			if base == "" {
				return kerr
			}
			key = "unused" // a local OpenAI-compatible server needs no key
		}
		opts := []openai.Option{openai.WithToken(key), openai.WithModel(model), openai.WithHTTPClient(hc)}
		if base != "" {
			opts = append(opts, openai.WithBaseURL(base))
		}
		l, err = openai.New(opts...)
	case "anthropic":
		key, kerr := m.key()
		if kerr != nil {
			return kerr
		}
		opts := []anthropic.Option{anthropic.WithToken(key), anthropic.WithModel(model), anthropic.WithHTTPClient(hc)}
		if base != "" {
			opts = append(opts, anthropic.WithBaseURL(base))
		}
		l, err = anthropic.New(opts...)
	case "googleai":
		key, kerr := m.key()
		if kerr != nil {
			return kerr
		}
		opts := []googleai.Option{googleai.WithAPIKey(key), googleai.WithDefaultModel(model)}
		if base != "" {
			// A Gemini-compatible REST server (or a proxy) at base. Google's
			// client ignores the API key option with a custom HTTP client,
			// so that client sends the key itself.
			hc = httpClient(timeout, http.Header{"X-Goog-Api-Key": {key}})
			opts = append(opts, googleai.WithRest(), googleai.WithHTTPClient(hc), func(o *googleai.Options) {
				o.ClientOptions = append(o.ClientOptions, option.WithEndpoint(base))
			})
		}
		l, err = googleai.New(ctx, opts...)
	case "ollama":
		// langchaingo's native ollama client cannot send or receive tool
		// calls; Ollama's OpenAI-compatible endpoint can.
		l, err = openai.New(openai.WithToken("ollama"), openai.WithModel(model), openai.WithBaseURL(OllamaBaseURL(base)), openai.WithHTTPClient(hc))
	default:
		return fmt.Errorf("llm: unknown provider %q", m.provider.Name)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", m.provider.Name, err)
	}
	m.mu.Lock()
	m.llm, m.model, m.timeout, m.maxTokens, m.legacyMax = l, model, timeout, maxTokens, legacyMax
	m.mu.Unlock()
	return nil
}

// OllamaBaseURL turns an Ollama address (OLLAMA_HOST style: "host:port",
// "http://host:port", or empty for the default) into its OpenAI-compatible
// base URL.
func OllamaBaseURL(host string) string {
	if host == "" {
		host = "http://127.0.0.1:11434"
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	host = strings.TrimRight(host, "/")
	if !strings.HasSuffix(host, "/v1") {
		host += "/v1"
	}
	return host
}

// Complete implements engine.Model.
func (m *Model) Complete(ctx context.Context, req engine.ModelRequest) (*engine.ModelResponse, error) {
	m.mu.Lock()
	l, timeout, maxTokens, legacyMax := m.llm, m.timeout, m.maxTokens, m.legacyMax
	m.mu.Unlock()
	if l == nil {
		return nil, errors.New("llm: Complete before Open")
	}
	msgs, err := Messages(m.provider.Name, req)
	if err != nil {
		return nil, err
	}
	opts := []llms.CallOption{llms.WithMaxTokens(maxTokens)}
	if legacyMax {
		opts = append(opts, openai.WithLegacyMaxTokensField())
	}
	if len(req.Tools) > 0 {
		tools, err := Tools(req.Tools)
		if err != nil {
			return nil, err
		}
		opts = append(opts, llms.WithTools(tools))
	}
	ctx, x := withExchange(ctx)
	resp, err := l.GenerateContent(ctx, msgs, opts...)
	if err != nil {
		return nil, classify(m.provider.Name, err, x, ctx, timeout)
	}
	return Response(resp), nil
}

// Messages converts a request to langchaingo's messages. Anthropic's
// converter reads one part per assistant message, so there each tool call
// goes in a message of its own.
func Messages(provider string, req engine.ModelRequest) ([]llms.MessageContent, error) {
	var out []llms.MessageContent
	if req.System != "" {
		out = append(out, llms.TextParts(llms.ChatMessageTypeSystem, req.System))
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case engine.RoleUser:
			out = append(out, llms.TextParts(llms.ChatMessageTypeHuman, msg.Content))
		case engine.RoleAssistant:
			var parts []llms.ContentPart
			if msg.Content != "" {
				parts = append(parts, llms.TextPart(msg.Content))
			}
			for _, tc := range msg.ToolCalls {
				args := tc.Arguments
				if !json.Valid([]byte(args)) {
					args = "{}" // the model's malformed arguments cannot be sent back as JSON
				}
				parts = append(parts, llms.ToolCall{ID: tc.ID, Type: "function", FunctionCall: &llms.FunctionCall{Name: tc.Name, Arguments: args}})
			}
			if len(parts) == 0 {
				parts = append(parts, llms.TextPart(""))
			}
			if provider == "anthropic" {
				for _, p := range parts {
					out = append(out, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{p}})
				}
			} else {
				out = append(out, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: parts})
			}
		case engine.RoleTool:
			out = append(out, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
				llms.ToolCallResponse{ToolCallID: msg.ToolCallID, Name: msg.Name, Content: msg.Content},
			}})
		default:
			return nil, fmt.Errorf("llm: message %d has unknown role %q", i, msg.Role)
		}
	}
	return out, nil
}

// Tools converts tool definitions.
func Tools(tools []engine.Tool) ([]llms.Tool, error) {
	out := make([]llms.Tool, len(tools))
	for i, t := range tools {
		var params any = map[string]any{"type": "object", "properties": map[string]any{}}
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &params); err != nil {
				return nil, fmt.Errorf("llm: tool %s: parameters are not JSON: %w", t.Name, err)
			}
		}
		out[i] = llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: params}}
	}
	return out, nil
}

// Response merges langchaingo's choices (Anthropic gives one per content
// block) into one answer and normalises token usage across providers.
func Response(resp *llms.ContentResponse) *engine.ModelResponse {
	out := &engine.ModelResponse{}
	var texts []string
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		if c.Content != "" {
			texts = append(texts, c.Content)
		}
		for _, tc := range c.ToolCalls {
			if tc.FunctionCall == nil {
				continue
			}
			out.ToolCalls = append(out.ToolCalls, engine.ToolCall{ID: tc.ID, Name: tc.FunctionCall.Name, Arguments: tc.FunctionCall.Arguments})
		}
		if len(c.ToolCalls) == 0 && c.FuncCall != nil {
			out.ToolCalls = append(out.ToolCalls, engine.ToolCall{Name: c.FuncCall.Name, Arguments: c.FuncCall.Arguments})
		}
		if out.Usage == (engine.Usage{}) {
			out.Usage = Usage(c.GenerationInfo)
		}
	}
	out.Text = strings.Join(texts, "\n")
	// Some providers (Gemini) give calls no id; the agent pairs tool
	// results with calls by id, so make them.
	for i := range out.ToolCalls {
		if out.ToolCalls[i].ID == "" {
			out.ToolCalls[i].ID = fmt.Sprintf("call_%d_%s", i+1, out.ToolCalls[i].Name)
		}
	}
	return out
}

// Usage reads token usage from a choice's GenerationInfo: openai, ollama and
// googleai say PromptTokens/CompletionTokens, anthropic InputTokens/
// OutputTokens.
func Usage(info map[string]any) engine.Usage {
	pick := func(keys ...string) int {
		for _, k := range keys {
			if n, ok := toInt(info[k]); ok {
				return n
			}
		}
		return 0
	}
	return engine.Usage{
		PromptTokens:     pick("PromptTokens", "InputTokens", "input_tokens", "prompt_tokens"),
		CompletionTokens: pick("CompletionTokens", "OutputTokens", "output_tokens", "completion_tokens"),
	}
}

func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int32:
		return int(n), true
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	case float32:
		return int(n), true
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}
