package agent

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
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
