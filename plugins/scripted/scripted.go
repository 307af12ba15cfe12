// Package scripted is the built-in LLM provider for demos and tests that
// need no network: it answers from a rules file, reports token usage like a
// real provider, and fails loudly when no rule matches.
//
// Rules file (JSON; documented in plugins/README.md):
//
//	{"rules": [
//	  {"step": 1, "tool_calls": [{"name": "navigate", "arguments": {"url": "http://shop.test/"}}]},
//	  {"last_contains": "element is not an input", "system_contains": "Tips from previous experience",
//	   "text": "Using the tip.", "tool_calls": [{"name": "click", "arguments": {"ref": "e12"}}], "times": 1},
//	  {"prompt_contains": "checkout", "text": "done"}
//	]}
//
// A rule matches when every condition it sets holds: step (the 1-based
// number of this request in the session), system_contains (a substring of
// the system prompt), last_contains (of the last message's content),
// prompt_contains (of the system prompt or any message). The first match
// wins; times limits how often a rule may fire (0: no limit). A rule answers
// with text and/or tool_calls, or with error (a provider failure).
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/plugins/shared"
)

// Version is the scripted provider's version.
const Version = "1.0.0"

// Rules is the rules file.
type Rules struct {
	Rules []Rule `json:"rules"`
}

// Rule is one scripted answer and the conditions for giving it.
type Rule struct {
	// Name labels the rule in errors and logs; optional.
	Name string `json:"name,omitempty"`

	Step           int    `json:"step,omitempty"`
	SystemContains string `json:"system_contains,omitempty"`
	LastContains   string `json:"last_contains,omitempty"`
	PromptContains string `json:"prompt_contains,omitempty"`
	// Times is how many times the rule may fire; 0 means no limit.
	Times int `json:"times,omitempty"`

	Text      string     `json:"text,omitempty"`
	ToolCalls []RuleCall `json:"tool_calls,omitempty"`
	// Error makes the request fail with this message.
	Error string `json:"error,omitempty"`
}

// RuleCall is one tool call a rule makes. Arguments is a JSON object, or a
// JSON string whose text is sent as is (to script malformed arguments).
type RuleCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Parse reads and checks a rules file's content.
func Parse(data []byte) (*Rules, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Rules
	if err := dec.Decode(&r); err != nil {
		switch {
		case errors.Is(err, io.EOF):
			return nil, errors.New(`scripted rules: the file is empty: want {"rules": [...]}`)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("scripted rules: the JSON ends before it is whole (a file cut short?): %w", err)
		}
		return nil, fmt.Errorf("scripted rules: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("scripted rules: more than one JSON value in the file")
	}
	if len(r.Rules) == 0 {
		return nil, errors.New("scripted rules: no rules")
	}
	for i, rule := range r.Rules {
		if rule.Text == "" && len(rule.ToolCalls) == 0 && rule.Error == "" {
			return nil, fmt.Errorf("scripted rules: rule %d (%s) gives neither text, tool_calls nor error", i+1, rule.label(i))
		}
		for _, c := range rule.ToolCalls {
			if c.Name == "" {
				return nil, fmt.Errorf("scripted rules: rule %d (%s) has a tool call with no name", i+1, rule.label(i))
			}
			// Arguments are an object, or a string sent as is.
			if a := bytes.TrimSpace(c.Arguments); len(a) > 0 && a[0] != '{' && a[0] != '"' && string(a) != "null" {
				return nil, fmt.Errorf("scripted rules: rule %d (%s): the arguments of %s are %s: want a JSON object or a string", i+1, rule.label(i), c.Name, a)
			}
		}
		if rule.Step < 0 || rule.Times < 0 {
			return nil, fmt.Errorf("scripted rules: rule %d (%s): step and times must not be negative", i+1, rule.label(i))
		}
	}
	return &r, nil
}

// Load reads a rules file.
func Load(path string) (*Rules, error) {
	data, err := engine.ReadInputFile(path, engine.MaxInputFile)
	if err != nil {
		return nil, fmt.Errorf("scripted rules: %w", err)
	}
	return Parse(data)
}

func (r Rule) label(i int) string {
	if r.Name != "" {
		return r.Name
	}
	return fmt.Sprintf("#%d", i+1)
}

// Model answers from rules. It is safe for concurrent use; the step count
// is per Model (one model per plugin process, so one per run).
type Model struct {
	mu    sync.Mutex
	rules *Rules
	step  int
	fired []int
}

// New returns a model answering from rules (nil: set by Open).
func New(rules *Rules) *Model {
	m := &Model{}
	if rules != nil {
		m.setRules(rules)
	}
	return m
}

func (m *Model) setRules(r *Rules) {
	m.rules = r
	m.fired = make([]int, len(r.Rules))
	m.step = 0
}

// Describe implements shared.Model.
func (m *Model) Describe() shared.Info {
	return shared.Info{
		Name:            "scripted",
		Version:         Version,
		Kind:            shared.KindLLM,
		Capabilities:    []string{"tools", "usage"},
		ProtocolVersion: shared.ProtocolVersion,
		Description:     "answers from a rules file; no network (option rules_file)",
	}
}

// Open loads the rules file named by the rules_file option.
func (m *Model) Open(_ context.Context, options map[string]string) error {
	path := options[shared.OptRulesFile]
	if path == "" {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.rules != nil {
			return nil
		}
		return errors.New("scripted: no rules file: set ENGINE_LLM_RULES (or the rules_file option)")
	}
	r, err := Load(path)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.setRules(r)
	m.mu.Unlock()
	return nil
}

// Complete implements engine.Model.
func (m *Model) Complete(ctx context.Context, req engine.ModelRequest) (*engine.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rules == nil {
		return nil, errors.New("scripted: Complete before Open: no rules loaded")
	}
	m.step++
	step := m.step
	last := ""
	lastRole := ""
	if n := len(req.Messages); n > 0 {
		last, lastRole = req.Messages[n-1].Content, req.Messages[n-1].Role
	}
	for i, r := range m.rules.Rules {
		if r.Times > 0 && m.fired[i] >= r.Times {
			continue
		}
		if r.Step != 0 && r.Step != step {
			continue
		}
		if r.SystemContains != "" && !strings.Contains(req.System, r.SystemContains) {
			continue
		}
		if r.LastContains != "" && !strings.Contains(last, r.LastContains) {
			continue
		}
		if r.PromptContains != "" && !promptContains(req, r.PromptContains) {
			continue
		}
		m.fired[i]++
		if r.Error != "" {
			return nil, fmt.Errorf("scripted: rule %s at step %d: %s", r.label(i), step, r.Error)
		}
		resp := &engine.ModelResponse{Text: r.Text}
		for j, c := range r.ToolCalls {
			resp.ToolCalls = append(resp.ToolCalls, engine.ToolCall{
				ID:        fmt.Sprintf("call_%d_%d", step, j+1),
				Name:      c.Name,
				Arguments: argumentsText(c.Arguments),
			})
		}
		resp.Usage = engine.Usage{PromptTokens: PromptTokens(req), CompletionTokens: completionTokens(resp)}
		return resp, nil
	}
	return nil, fmt.Errorf("scripted: no rule matches step %d (last message, role %q: %q)", step, lastRole, clip(last, 300))
}

func promptContains(req engine.ModelRequest, s string) bool {
	if strings.Contains(req.System, s) {
		return true
	}
	for _, msg := range req.Messages {
		if strings.Contains(msg.Content, s) {
			return true
		}
		for _, tc := range msg.ToolCalls {
			if strings.Contains(tc.Arguments, s) {
				return true
			}
		}
	}
	return false
}

func argumentsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "{}"
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// tokens estimates tokens the way most tokenizers average on English and
// markup: one per four characters, at least one for non-empty text.
func tokens(chars int) int {
	if chars == 0 {
		return 0
	}
	return (chars + 3) / 4
}

// PromptTokens estimates the prompt tokens of a request: the system prompt,
// every message (content, tool calls) and the tool definitions, plus a few
// tokens of framing per message as chat formats add.
func PromptTokens(req engine.ModelRequest) int {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Role) + len(m.Content) + len(m.Name) + len(m.ToolCallID)
		for _, tc := range m.ToolCalls {
			n += len(tc.Name) + len(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return tokens(n) + 3*len(req.Messages)
}

func completionTokens(r *engine.ModelResponse) int {
	n := len(r.Text)
	for _, tc := range r.ToolCalls {
		n += len(tc.Name) + len(tc.Arguments)
	}
	return tokens(n)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
