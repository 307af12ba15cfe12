package scripted

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

// FuzzParseRules feeds rules files to the scripted LLM: Parse refuses them
// or returns rules that obey the file's rules (at least one rule, each
// answering with something, named tool calls, non-negative step and times,
// arguments an object or a string); the rules survive an encode → parse
// round trip; and a model answering from them never panics and answers
// every request with a rule's answer or an error.
func FuzzParseRules(f *testing.F) {
	for _, s := range []string{
		`{"rules":[{"step":1,"tool_calls":[{"name":"navigate","arguments":{"url":"http://shop.test/"}}]},{"prompt_contains":"checkout","text":"done"}]}`,
		`{"rules":[{"last_contains":"not an input","system_contains":"Tips","text":"ok","tool_calls":[{"name":"click","arguments":"{\"ref\": e7"}],"times":1}]}`,
		`{"rules":[{"error":"provider down"}]}`,
		`{"rules":[{"text":"x"}]} {"rules":[]}`,
		`{"rules":[{"tool_calls":[{"name":"click","arguments":5}]}]}`,
		`{"rules":[{"step":-1,"text":"x"}]}`,
		`{"rules":[]}`, `{"rulez":[]}`, `null`,
	} {
		f.Add([]byte(s), "a racket", "SYS")
	}
	f.Fuzz(func(t *testing.T, data []byte, prompt, system string) {
		r, err := Parse(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "scripted rules: ") {
				t.Fatalf("error does not say it is about the rules: %v", err)
			}
			return
		}
		if len(r.Rules) == 0 {
			t.Fatal("no rules and no error")
		}
		for i, rule := range r.Rules {
			if rule.Text == "" && len(rule.ToolCalls) == 0 && rule.Error == "" || rule.Step < 0 || rule.Times < 0 {
				t.Fatalf("rule %d accepted: %+v", i+1, rule)
			}
			for _, c := range rule.ToolCalls {
				if c.Name == "" {
					t.Fatalf("rule %d has an unnamed tool call", i+1)
				}
			}
		}
		enc, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("encode accepted rules: %v", err)
		}
		r2, err := Parse(enc)
		if err != nil {
			t.Fatalf("accepted rules do not parse again: %v\n%s", err, enc)
		}
		if enc2, _ := json.Marshal(r2); string(enc2) != string(enc) {
			t.Fatalf("rules changed in a round trip:\n%s\n%s", enc, enc2)
		}
		m := New(r)
		ctx := context.Background()
		for range 3 {
			resp, err := m.Complete(ctx, engine.ModelRequest{System: system, Messages: []engine.Message{{Role: "user", Content: prompt}}})
			if err != nil {
				if !strings.HasPrefix(err.Error(), "scripted: ") {
					t.Fatalf("error does not name the provider: %v", err)
				}
				continue
			}
			for _, c := range resp.ToolCalls {
				if c.Name == "" || c.ID == "" {
					t.Fatalf("tool call without name or id: %+v", c)
				}
			}
			if resp.Text == "" && len(resp.ToolCalls) == 0 {
				t.Fatalf("empty answer: %+v", resp)
			}
		}
	})
}

// A rules file with a second JSON value after the first used to load, the
// rest silently ignored; arguments that are neither an object nor a string
// were sent as a bare number.
func TestParseRulesRefusesTrailingDataAndBadArguments(t *testing.T) {
	for data, want := range map[string]string{
		`{"rules":[{"text":"x"}]} {"rules":[]}`:                           "more than one JSON value in the file",
		`{"rules":[{"tool_calls":[{"name":"click","arguments":5}]}]}`:     "the arguments of click are 5: want a JSON object or a string",
		`{"rules":[{"tool_calls":[{"name":"click","arguments":[1,2]}]}]}`: "the arguments of click are [1,2]",
	} {
		if _, err := Parse([]byte(data)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want %q", data, err, want)
		}
	}
	if _, err := Parse([]byte(`{"rules":[{"tool_calls":[{"name":"finish","arguments":null}]}]}` + "\n")); err != nil {
		t.Errorf("null arguments: %v", err)
	}
}
