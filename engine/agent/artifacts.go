package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/runfiles"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/engine/trust/redact"
)

// Artifact file names in a run's folder: engine/memory/runfiles, which reads
// them back, is where they are written down.
const (
	ActionsFile  = runfiles.ActionsFile  // the action log (engine learn reads it)
	EventsFile   = runfiles.EventsFile   // every memory event of the run
	ManifestFile = runfiles.ManifestFile // the run manifest, as the registry holds it
	LLMFile      = runfiles.LLMFile      // every model call: tool calls, usage, errors
)

// record is one step's action as the run keeps it: the line it writes to
// actions.jsonl (runfiles.Record, which engine learn and the readers of a
// run's folder read) plus what the run knew about the step that is not
// written.
type record struct {
	runfiles.Record

	attributed  bool
	selectors   []memctx.Shown     // the selectors this step's context offered
	refSteps    []trajectory.Step  // the reference trajectory's steps shown at this step
	facts       []memctx.ShownFact // the facts this step's context showed
	afterEngine bool               // the record before it was a failure of engine origin
	secret      bool               // Value was typed into a secret field
	// checked is what the action was checked against: the page's path and
	// the structural fingerprints of its element and its page.
	checked engine.Checked
}

// artifacts is a run's folder. A nil *artifacts writes nothing.
type artifacts struct {
	mu      sync.Mutex
	dir     string
	actions *os.File
	llmf    *os.File
	events  *event.JSONL
	shots   []string
	// manifest rewrites manifest.json (under mu).
	manifest replacer
	// system is the last system prompt logged, redacted (under mu).
	system loggedText
}

// loggedText is a text as logText returned it, with the Redactor and how
// many secrets it held then: the same text is redacted again only once
// the Redactor holds more.
type loggedText struct {
	in, out string
	n       int // out's original size, or 0
	red     *redact.Redactor
	secrets int
}

// ArtifactDir is run id's artifact folder <runsDir>/<id>. It is an error
// when id is not a valid run id (run.CheckID) or the folder would not be
// directly inside runsDir: a run's files stay in its own folder.
func ArtifactDir(runsDir, id string) (string, error) { return runfiles.Dir(runsDir, id) }

func openArtifacts(dir string) (*artifacts, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	a := &artifacts{dir: dir, manifest: replacer{path: filepath.Join(dir, ManifestFile)}}
	var err error
	if a.actions, err = os.OpenFile(filepath.Join(dir, ActionsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		return nil, err
	}
	if a.llmf, err = os.OpenFile(filepath.Join(dir, LLMFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
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

// Redacted replaces a secret's value in everything a run writes
// (redact.Secret: the run's Redactor does it).
const Redacted = redact.Secret

// log writes rec, already redacted (runner.log), to actions.jsonl.
func (a *artifacts) log(rec record) {
	if a == nil {
		return
	}
	a.line(a.actions, rec)
}

// LogClip is how much of each text (system prompt, message, answer, tool
// arguments) llm.jsonl keeps; a clipped field has its original size
// beside it (…_bytes).
const LogClip = 4000

// logText redacts s and clips it to LogClip bytes; n is s's original
// size when it was clipped, else 0.
func logText(s string, red *redact.Redactor) (string, int) {
	s = red.String(s)
	if len(s) <= LogClip {
		return s, 0
	}
	return clipBytes(s, LogClip) + "…", len(s)
}

// systemText is logText(s, red) for the system prompt, which is the same
// at every step of a run: it is redacted again only when it or the
// Redactor's secrets changed.
func (a *artifacts) systemText(s string, red *redact.Redactor) (string, int) {
	secrets := red.Secrets() // before redacting: a secret added meanwhile redoes it next time
	a.mu.Lock()
	c := a.system
	a.mu.Unlock()
	if c.in == s && c.red == red && c.secrets == secrets && c.out != "" {
		return c.out, c.n
	}
	out, n := logText(s, red)
	a.mu.Lock()
	a.system = loggedText{in: s, out: out, n: n, red: red, secrets: secrets}
	a.mu.Unlock()
	return out, n
}

func logCalls(tcs []engine.ToolCall, red *redact.Redactor) []runfiles.ToolCall {
	var out []runfiles.ToolCall
	for _, tc := range tcs {
		c := runfiles.ToolCall{ID: tc.ID, Name: clipBytes(tc.Name, 200)}
		c.Arguments, c.ArgumentsBytes = logText(tc.Arguments, red)
		out = append(out, c)
	}
	return out
}

// llm logs one model call to llm.jsonl (runfiles.Call): the request and
// the answer (or the error), redacted and clipped, with its attempts and
// latency.
func (a *artifacts) llm(step int, req engine.ModelRequest, resp *engine.ModelResponse, st callStats, err error, red *redact.Redactor) {
	if a == nil {
		return
	}
	v := runfiles.Call{Step: step, Attempts: st.attempts, Retries: st.retries, LatencyMS: st.latency.Milliseconds()}
	for i := range v.Retries {
		v.Retries[i].Error, _ = logText(v.Retries[i].Error, red)
	}
	v.Request.System, v.Request.SystemBytes = a.systemText(req.System, red)
	for _, m := range req.Messages {
		lm := runfiles.Message{Role: m.Role, ToolCallID: m.ToolCallID, ToolCalls: logCalls(m.ToolCalls, red)}
		lm.Content, lm.ContentBytes = logText(m.Content, red)
		v.Request.Messages = append(v.Request.Messages, lm)
	}
	for _, t := range req.Tools {
		v.Request.Tools = append(v.Request.Tools, t.Name)
	}
	if err != nil {
		v.Error, _ = logText(err.Error(), red)
	} else {
		v.Text, v.TextBytes = logText(resp.Text, red)
		v.ToolCalls = logCalls(resp.ToolCalls, red)
		u := resp.Usage
		v.Usage = &u
	}
	a.line(a.llmf, v)
}

// rewrite redacts the run's line files again at its end: a line written
// before the model typed a secret (a goal or a page that names it, say)
// does not keep it either.
func (a *artifacts) rewrite(red *redact.Redactor) {
	if a == nil || red.Secrets() == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, name := range []string{LLMFile, ActionsFile, EventsFile} {
		p := filepath.Join(a.dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if out := red.String(string(b)); out != string(b) {
			tmp := p + ".tmp"
			if os.WriteFile(tmp, []byte(out), 0o600) == nil {
				_ = os.Rename(tmp, p)
			}
		}
	}
}

// screenshot writes a PNG and returns its path.
func (a *artifacts) screenshot(name string, png []byte) string {
	if a == nil || len(png) == 0 {
		return ""
	}
	p := filepath.Join(a.dir, name)
	if os.WriteFile(p, png, 0o600) != nil {
		return ""
	}
	a.mu.Lock()
	a.shots = append(a.shots, p)
	a.mu.Unlock()
	return p
}

// writeManifest mirrors the registry's manifest to manifest.json,
// redacted.
func (a *artifacts) writeManifest(m *run.Manifest, red *redact.Redactor) {
	if a == nil || m == nil {
		return
	}
	c := m.Clone() // m is not redacted in place
	red.Value(c)
	c.RunID, c.SessionID, c.ParentRunID = m.RunID, m.SessionID, m.ParentRunID // identifiers
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_ = a.manifest.write(append(b, '\n'))
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

func (a *artifacts) close(red *redact.Redactor) {
	a.actions.Close()
	a.llmf.Close()
	_ = a.events.Close()
	a.rewrite(red)
	a.mu.Lock()
	a.manifest.close()
	a.mu.Unlock()
}
