package agent

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/runfiles"
	"github.com/engine-dev/engine/engine/trust/redact"
)

// The line the agent writes to actions.jsonl is runfiles.Record: its bytes
// keep their field order and omissions (engine learn and older readers
// read them), and runfiles reads back the record that was written.
func TestActionRecordReadsBack(t *testing.T) {
	dir := t.TempDir()
	a, err := openArtifacts(dir)
	if err != nil {
		t.Fatal(err)
	}
	full := record{Record: runfiles.Record{Step: 7, Action: "fill", Ref: "e3", Value: "v", OK: true, Error: "err", URL: "http://x/",
		Role: "textbox", Name: "Q", Replayed: true, Approval: "approved", ToolError: "te", Origin: "browser",
		Screenshot: "/a/b.png", Lessons: []string{"l1", "l2"}, Trajectory: "t1"}, attributed: true, secret: true}
	a.log(full)
	a.log(record{})
	a.close(redact.New(redact.Options{}))

	b, err := os.ReadFile(filepath.Join(dir, ActionsFile))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"step":7,"action":"fill","ref":"e3","value":"v","ok":true,"error":"err","url":"http://x/","role":"textbox","name":"Q","replayed":true,"approval":"approved","tool_error":"te","origin":"browser","screenshot":"/a/b.png","lessons_shown":["l1","l2"],"trajectory_shown":"t1"}
{"step":0,"action":"","ok":false}
`
	if string(b) != want {
		t.Fatalf("actions.jsonl:\n%s\nwant:\n%s", b, want)
	}
	got, more, err := runfiles.Records(dir, 0)
	if err != nil || more {
		t.Fatal(more, err)
	}
	if wantRecs := []runfiles.Record{full.Record, {}}; !reflect.DeepEqual(got, wantRecs) {
		t.Fatalf("read back %+v\nwant %+v", got, wantRecs)
	}
}

// The line the agent writes to llm.jsonl is runfiles.Call: its bytes keep
// their field order and omissions, and runfiles reads back what was
// written, retries included.
func TestModelCallReadsBack(t *testing.T) {
	dir := t.TempDir()
	a, err := openArtifacts(dir)
	if err != nil {
		t.Fatal(err)
	}
	red := redact.New(redact.Options{})
	req := engine.ModelRequest{System: "sys", Messages: []engine.Message{{Role: "user", Content: "hi"},
		{Role: "assistant", ToolCalls: []engine.ToolCall{{ID: "c1", Name: "click", Arguments: `{"ref":"e1"}`}}},
		{Role: "tool", Content: "ok", ToolCallID: "c1"}},
		Tools: []engine.Tool{{Name: "click"}, {Name: "fill"}}}
	st := callStats{attempts: 2, retries: []runfiles.Retry{{Attempt: 1, Error: "HTTP 503", LatencyMS: 12, WaitMS: 40, RetryAfterMS: 40}}, latency: 1500 * time.Millisecond}
	a.llm(3, req, &engine.ModelResponse{Text: "done", ToolCalls: []engine.ToolCall{{ID: "c2", Name: "fill", Arguments: `{"ref":"e2","value":"x"}`}},
		Usage: engine.Usage{PromptTokens: 10, CompletionTokens: 2}}, st, nil, red)
	a.llm(4, engine.ModelRequest{}, nil, callStats{attempts: 1}, errors.New("boom"), red)
	a.close(red)

	b, err := os.ReadFile(filepath.Join(dir, LLMFile))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"step":3,"request":{"system":"sys","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c1","name":"click","arguments":"{\"ref\":\"e1\"}"}]},{"role":"tool","content":"ok","tool_call_id":"c1"}],"tools":["click","fill"]},"attempts":2,"retries":[{"attempt":1,"error":"HTTP 503","latency_ms":12,"wait_ms":40,"retry_after_ms":40}],"latency_ms":1500,"text":"done","tool_calls":[{"id":"c2","name":"fill","arguments":"{\"ref\":\"e2\",\"value\":\"x\"}"}],"usage":{"prompt_tokens":10,"completion_tokens":2}}
{"step":4,"request":{"system":"","messages":null},"attempts":1,"latency_ms":0,"error":"boom"}
`
	if string(b) != want {
		t.Fatalf("llm.jsonl:\n%s\nwant:\n%s", b, want)
	}
	calls, _, err := runfiles.Calls(dir, 0)
	if err != nil || len(calls) != 2 {
		t.Fatal(calls, err)
	}
	if c := calls[0]; c.Step != 3 || !reflect.DeepEqual(c.Retries, st.retries) || len(c.Request.Messages) != 3 ||
		c.Request.Messages[1].ToolCalls[0].Arguments != `{"ref":"e1"}` || c.Usage.Total() != 12 || c.Text != "done" {
		t.Fatalf("read back %+v", c)
	}
	if c := calls[1]; c.Step != 4 || c.Error != "boom" || c.Retries != nil {
		t.Fatalf("read back %+v", c)
	}
}

// The system prompt, the same at every step, is logged redacted by the
// Redactor as it is at that step: a secret added after one line was
// written is gone from the next.
func TestLLMLogSystemPromptFollowsSecrets(t *testing.T) {
	a, err := openArtifacts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	red := redact.New(redact.Options{})
	req := engine.ModelRequest{System: "Goal: log in with zq-amber-falcon-quill", Messages: []engine.Message{{Role: engine.RoleUser, Content: "step"}}}
	resp := &engine.ModelResponse{Text: "ok"}
	a.llm(1, req, resp, callStats{attempts: 1}, nil, red)
	a.llm(2, req, resp, callStats{attempts: 1}, nil, red)
	red.Add("zq-amber-falcon-quill")
	a.llm(3, req, resp, callStats{attempts: 1}, nil, red)
	f, err := os.Open(filepath.Join(a.dir, LLMFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var rec runfiles.Call
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		got = append(got, rec.Request.System)
	}
	a.close(red)
	want := []string{req.System, req.System, strings.Replace(req.System, "zq-amber-falcon-quill", redact.Secret, 1)}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("system prompts logged:\n%q\nwant\n%q", got, want)
	}
}

// redactField redacts an event's field as the Redactor's Value does.
func TestRedactFieldIsValue(t *testing.T) {
	red := redact.New(redact.Options{})
	red.Add("zq-amber-falcon-quill")
	r := &runner{red: red}
	for _, v := range []any{nil, true, 3, int64(4), 0.5, "plain", "code zq-amber-falcon-quill", "bob.vance@example.com",
		json.Number("12"), json.Number("4111111111111111"), []string{"zq-amber-falcon-quill"}, map[string]any{"k": "zq-amber-falcon-quill"},
		engine.ActionKind("type zq-amber-falcon-quill")} {
		want := v
		red.Value(&want)
		if got := r.redactField(v); !reflect.DeepEqual(got, want) {
			t.Errorf("redactField(%#v) = %#v, want %#v", v, got, want)
		}
	}
}
