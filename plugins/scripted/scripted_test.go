package scripted

import (
	"context"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

func TestPluginScriptedRules(t *testing.T) {
	r, err := Parse([]byte(`{"rules": [
		{"name": "once", "prompt_contains": "racket", "text": "first", "times": 1},
		{"prompt_contains": "racket", "tool_calls": [{"name": "fill", "arguments": "{\"ref\": e7"}]},
		{"step": 3, "error": "provider down"},
		{"system_contains": "SYS", "last_contains": "done", "text": "bye"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := New(r)
	ctx := context.Background()
	req := engine.ModelRequest{System: "SYS", Messages: []engine.Message{{Role: "user", Content: "a racket"}}}

	r1, err := m.Complete(ctx, req)
	if err != nil || r1.Text != "first" {
		t.Fatalf("step 1: %+v %v", r1, err)
	}
	// times: 1 is used up, the next rule answers, with malformed arguments
	// passed through as written.
	r2, err := m.Complete(ctx, req)
	if err != nil || len(r2.ToolCalls) != 1 || r2.ToolCalls[0].Arguments != `{"ref": e7` || r2.ToolCalls[0].ID != "call_2_1" {
		t.Fatalf("step 2: %+v %v", r2, err)
	}
	_, err = m.Complete(ctx, engine.ModelRequest{Messages: []engine.Message{{Role: "user", Content: "x"}}})
	if err == nil || err.Error() != "scripted: rule #3 at step 3: provider down" {
		t.Fatalf("step 3: %v", err)
	}
	r4, err := m.Complete(ctx, engine.ModelRequest{System: "SYS", Messages: []engine.Message{{Role: "tool", Content: "done"}}})
	if err != nil || r4.Text != "bye" {
		t.Fatalf("step 4: %+v %v", r4, err)
	}
	_, err = m.Complete(ctx, engine.ModelRequest{Messages: []engine.Message{{Role: "tool", Content: "nothing"}}})
	if err == nil || !strings.Contains(err.Error(), `no rule matches step 5 (last message, role "tool": "nothing")`) {
		t.Fatalf("step 5: %v", err)
	}
}

func TestPluginScriptedUsage(t *testing.T) {
	short := engine.ModelRequest{System: "abcd", Messages: []engine.Message{{Role: "user", Content: "abcd"}}}
	// 4 + (4+4) characters = 12 → 3 tokens, plus 3 for the one message.
	if got := PromptTokens(short); got != 6 {
		t.Fatalf("PromptTokens = %d, want 6", got)
	}
	long := short
	long.Tools = []engine.Tool{{Name: "click", Description: strings.Repeat("x", 400)}}
	if PromptTokens(long) <= PromptTokens(short)+100 {
		t.Fatalf("tool definitions should count: %d vs %d", PromptTokens(long), PromptTokens(short))
	}
}

func TestPluginScriptedBadFiles(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{`{"rules": []}`, "no rules"},
		{`{"rules": [{"step": 1}]}`, "gives neither text, tool_calls nor error"},
		{`{"rules": [{"text": "x", "stpe": 1}]}`, `unknown field "stpe"`},
		{`{"rules": [{"tool_calls": [{"arguments": {}}]}]}`, "tool call with no name"},
		{`{"rules": [{"text": "x", "times": -1}]}`, "must not be negative"},
		{`not json`, "scripted rules"},
	} {
		if _, err := Parse([]byte(c.file)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s) = %v, want %q", c.file, err, c.want)
		}
	}
}
