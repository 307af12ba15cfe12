package engine

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Model is a chat model that can call tools. Implementations live in
// plugins/ (langchaingo providers, the scripted provider) and are reached
// over go-plugin.
type Model interface {
	Complete(ctx context.Context, req ModelRequest) (*ModelResponse, error)
}

// ModelRequest is one turn: the system prompt, the conversation so far and
// the tools the model may call.
type ModelRequest struct {
	System   string    `json:"system"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
}

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one entry of the conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and Name identify the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
}

// Tool describes one function the model may call; Parameters is a JSON
// schema object.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ToolCall is one call the model made; Arguments is a JSON object as text,
// exactly as the model produced it (it may be malformed).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ModelResponse is the model's answer to one request.
type ModelResponse struct {
	Text      string     `json:"text,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Usage     Usage      `json:"usage"`
}

// Usage is token usage normalised across providers.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Total is prompt plus completion tokens.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.PromptTokens + o.PromptTokens, u.CompletionTokens + o.CompletionTokens}
}

// ModelError is a model call that failed in a way worth retrying: the
// provider was rate limited (HTTP 429), failed on its side (5xx) or dropped
// the connection. RetryAfter is how long the provider asked to wait (0: it
// did not say). Model implementations return it; the agent loop retries.
type ModelError struct {
	Err        error
	Temporary  bool
	RetryAfter time.Duration
}

func (e *ModelError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ModelError) Unwrap() error { return e.Err }

// AsModelError finds a *ModelError in err's chain.
func AsModelError(err error) (*ModelError, bool) {
	var me *ModelError
	ok := errors.As(err, &me)
	return me, ok
}
