package agent

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/trust/redact"
)

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
		var rec llmRecord
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
