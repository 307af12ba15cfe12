package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/run"
)

// Artifact file names in a run's folder.
const (
	ActionsFile  = "actions.jsonl"       // the action log (engine learn reads it)
	EventsFile   = "memory_events.jsonl" // every memory event of the run
	ManifestFile = "manifest.json"       // the run manifest, as the registry holds it
	LLMFile      = "llm.jsonl"           // every model call: tool calls, usage, errors
)

// record is one line of actions.jsonl: the engine's own action record
// ({"step","action","ref","value","ok","error","url"}, which engine learn
// reads) plus what the run knew about the step.
type record struct {
	Step       int      `json:"step"`
	Action     string   `json:"action"`
	Ref        string   `json:"ref,omitempty"`
	Value      string   `json:"value,omitempty"`
	OK         bool     `json:"ok"`
	Error      string   `json:"error,omitempty"`
	URL        string   `json:"url,omitempty"`
	Role       string   `json:"role,omitempty"`
	Name       string   `json:"name,omitempty"`
	Replayed   bool     `json:"replayed,omitempty"`
	Approval   string   `json:"approval,omitempty"` // approved or rejected (rejected: not run)
	ToolError  string   `json:"tool_error,omitempty"`
	Screenshot string   `json:"screenshot,omitempty"`
	Lessons    []string `json:"lessons_shown,omitempty"`    // lesson ids recalled into this step's message
	Trajectory string   `json:"trajectory_shown,omitempty"` // reference trajectory shown at this step

	attributed bool
}

// artifacts is a run's folder. A nil *artifacts writes nothing.
type artifacts struct {
	mu      sync.Mutex
	dir     string
	actions *os.File
	llmf    *os.File
	events  *event.JSONL
	shots   []string
}

// ArtifactDir is run id's artifact folder <runsDir>/<id>. It is an error
// when id is not a valid run id (run.CheckID) or the folder would not be
// directly inside runsDir: a run's files stay in its own folder.
func ArtifactDir(runsDir, id string) (string, error) {
	if err := run.CheckID(id); err != nil {
		return "", err
	}
	dir := filepath.Join(runsDir, id)
	if filepath.Dir(dir) != filepath.Clean(runsDir) || filepath.Base(dir) != id {
		return "", fmt.Errorf("run id %q does not name a folder inside %s", id, runsDir)
	}
	return dir, nil
}

func openArtifacts(dir string) (*artifacts, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	a := &artifacts{dir: dir}
	var err error
	if a.actions, err = os.OpenFile(filepath.Join(dir, ActionsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		return nil, err
	}
	if a.llmf, err = os.OpenFile(filepath.Join(dir, LLMFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		a.actions.Close()
		return nil, err
	}
	if a.events, err = event.AppendFile(filepath.Join(dir, EventsFile)); err != nil {
		a.actions.Close()
		a.llmf.Close()
		return nil, err
	}
	return a, nil
}

func (a *artifacts) line(f *os.File, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _ = f.Write(append(b, '\n'))
}

// Redacted replaces a secret's value in the artifacts.
const Redacted = "[redacted]"

var secretRe = regexp.MustCompile(`(?i)(password|passcode|passphrase|\bpin\b|cvv|cvc|card number|secret|token|api key)`)

func (a *artifacts) log(rec record) {
	if a == nil {
		return
	}
	if rec.Value != "" && secretRe.MatchString(rec.Name) {
		rec.Value = Redacted
	}
	a.line(a.actions, rec)
}

func (a *artifacts) llm(step int, resp *engine.ModelResponse, err error) {
	if a == nil {
		return
	}
	v := map[string]any{"step": step}
	if err != nil {
		v["error"] = err.Error()
	} else {
		v["tool_calls"] = resp.ToolCalls
		v["text"] = resp.Text
		v["usage"] = resp.Usage
	}
	a.line(a.llmf, v)
}

// screenshot writes a PNG and returns its path.
func (a *artifacts) screenshot(name string, png []byte) string {
	if a == nil || len(png) == 0 {
		return ""
	}
	p := filepath.Join(a.dir, name)
	if os.WriteFile(p, png, 0o644) != nil {
		return ""
	}
	a.mu.Lock()
	a.shots = append(a.shots, p)
	a.mu.Unlock()
	return p
}

func (a *artifacts) writeManifest(m *run.Manifest) {
	if a == nil {
		return
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return
	}
	tmp := filepath.Join(a.dir, ManifestFile+".tmp")
	if os.WriteFile(tmp, append(b, '\n'), 0o644) == nil {
		_ = os.Rename(tmp, filepath.Join(a.dir, ManifestFile))
	}
}

// paths lists the artifacts for the manifest.
func (a *artifacts) paths() []string {
	if a == nil {
		return nil
	}
	out := []string{filepath.Join(a.dir, ActionsFile), filepath.Join(a.dir, EventsFile), filepath.Join(a.dir, ManifestFile), filepath.Join(a.dir, LLMFile)}
	a.mu.Lock()
	defer a.mu.Unlock()
	return append(out, a.shots...)
}

func (a *artifacts) close() {
	a.actions.Close()
	a.llmf.Close()
	_ = a.events.Close()
}
