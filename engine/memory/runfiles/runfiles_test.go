package runfiles_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/memory/runfiles"
)

// A run's folder is directly inside the runs dir, named by a valid run id.
func TestDir(t *testing.T) {
	runs := t.TempDir()
	if got, err := runfiles.Dir(runs, "run_1700000000000_ab12"); err != nil || got != filepath.Join(runs, "run_1700000000000_ab12") {
		t.Fatalf("Dir = %q, %v", got, err)
	}
	for _, id := range []string{"..", "../x", "a/b", "", ".hidden", strings.Repeat("a", 65)} {
		if got, err := runfiles.Dir(runs, id); err == nil {
			t.Errorf("Dir(%q) = %q, want an error", id, got)
		}
	}
}

func TestStepsCallsAndSummary(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, runfiles.ActionsFile), []byte(`{"step":1,"action":"click","ok":true,"lessons_shown":["l1"]}
{"step":2,"action":"type","ok":false,"error":"covered","screenshot":"/other/place/error-step-02.png"}
{"step":2,"action":"click","ok":false,"approval":"rejected"}
{"step":3,"action":"click","ok":true,"replayed":true}
{"step":4,"action":"cl`), 0o644) // the last line cut short by a crash
	os.WriteFile(filepath.Join(dir, runfiles.LLMFile), []byte(`{"step":1,"request":{"system":"s","messages":[{"role":"user","content":"hi"}]},"attempts":1,"text":"ok","usage":{"prompt_tokens":10,"completion_tokens":2}}
{"step":2,"request":{"system":"s","messages":[]},"attempts":2,"error":"rate limited"}
`), 0o644)
	steps, more, err := runfiles.Records(dir, 0)
	if err != nil || more || len(steps) != 4 {
		t.Fatalf("steps %+v %v %v", steps, more, err)
	}
	if steps[1].ScreenshotName() != "error-step-02.png" || !steps[1].Failed() || steps[2].Failed() || !steps[2].Rejected() || steps[0].Lessons[0] != "l1" {
		t.Fatalf("steps %+v", steps)
	}
	if s, more, _ := runfiles.Records(dir, 2); len(s) != 2 || !more {
		t.Fatalf("first 2: %d %v", len(s), more)
	}
	calls, _, err := runfiles.Calls(dir, 0)
	if err != nil || len(calls) != 2 || calls[0].Request.Messages[0].Content != "hi" || calls[1].Error != "rate limited" {
		t.Fatalf("calls %+v %v", calls, err)
	}
	sum, err := runfiles.Summarize(dir)
	want := runfiles.Summary{Logged: true, Steps: 3, Actions: 4, Errors: 1, LLMCalls: 2, Tokens: 12}
	if err != nil || sum != want {
		t.Fatalf("summary %+v %v, want %+v", sum, err, want)
	}
	if steps, _, _ := runfiles.Records(dir, 0); runfiles.SummaryOf(steps, calls) != want {
		t.Fatalf("SummaryOf %+v", runfiles.SummaryOf(steps, calls))
	}
	// The cache follows the files.
	c := runfiles.NewSummaries(8)
	if got, _ := c.Get(dir); got != want {
		t.Fatalf("cached %+v", got)
	}
	f, _ := os.OpenFile(filepath.Join(dir, runfiles.ActionsFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n{\"step\":5,\"action\":\"click\",\"ok\":false}\n")
	f.Close()
	if got, _ := c.Get(dir); got.Errors != 2 || got.Steps != 4 {
		t.Fatalf("after the log grew: %+v", got)
	}
	empty := t.TempDir()
	if s, err := runfiles.Summarize(empty); err != nil || s.Logged {
		t.Fatalf("no files: %+v %v", s, err)
	}
	if _, _, err := runfiles.Records(empty, 0); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no action log: %v", err)
	}
}

func TestOpenFileStaysInTheFolder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "run_1")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "final.png"), []byte("png"), 0o644)
	os.WriteFile(filepath.Join(root, "secret.png"), []byte("secret"), 0o644)
	os.Symlink(filepath.Join(root, "secret.png"), filepath.Join(dir, "link.png"))
	os.Mkdir(filepath.Join(dir, "sub.png"), 0o755)
	f, fi, err := runfiles.OpenFile(dir, "final.png")
	if err != nil || fi.Size() != 3 {
		t.Fatalf("final.png: %v", err)
	}
	f.Close()
	for _, name := range []string{"link.png", "../secret.png", "sub.png", ".", "..", "", ".hidden", "a/b.png", `..\secret.png`, "missing.png"} {
		if f, _, err := runfiles.OpenFile(dir, name); !errors.Is(err, os.ErrNotExist) {
			if f != nil {
				f.Close()
			}
			t.Errorf("%q: %v, want not found", name, err)
		}
	}
}
