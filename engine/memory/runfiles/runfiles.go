// Package runfiles owns the format of a run's artifact folder,
// <data-dir>/runs/<run-id>/, and reads it back: the records of its action
// log, its model calls, a summary of both, and single files (screenshots)
// inside the folder. The
// folder is always found from the run id, never from the manifest's
// artifact paths, which any API caller may set: a reader cannot be steered
// to another file. The agent loop (engine/agent) writes these files; the
// MCP resources and the web inspector read them through this package.
package runfiles

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/run"
)

// File names in a run's folder (the names engine/agent writes).
const (
	ActionsFile  = "actions.jsonl"       // the action log, one line per action
	EventsFile   = "memory_events.jsonl" // every memory event of the run
	ManifestFile = "manifest.json"       // the run manifest, as the registry holds it
	LLMFile      = "llm.jsonl"           // every model call
	FinalShot    = "final.png"           // the screenshot at the end of the run
)

// Dir is run id's artifact folder <runsDir>/<id>. It is an error when id
// is not a valid run id (run.CheckID) or the folder would not be directly
// inside runsDir.
func Dir(runsDir, id string) (string, error) {
	if err := run.CheckID(id); err != nil {
		return "", err
	}
	dir := filepath.Join(runsDir, id)
	if filepath.Dir(dir) != filepath.Clean(runsDir) || filepath.Base(dir) != id {
		return "", fmt.Errorf("run id %q does not name a folder inside %s", id, runsDir)
	}
	// A link would lead readers (the inspector, engine runs) out of the
	// data dir: a run's folder is a folder of its own, or nothing.
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		return "", fmt.Errorf("the folder of run %s is not a plain folder (%s): refused: %w", id, fi.Mode().Type(), os.ErrNotExist)
	}
	return dir, nil
}

// Record is one line of actions.jsonl: the engine's own action record
// ({"step","action","ref","value","ok","error","url"}, which engine learn
// reads) plus what the run knew about the step. The agent loop writes it
// (engine/agent embeds it in its own step record) and the readers here
// read it back, so the line has this one definition.
type Record struct {
	Step      int    `json:"step"`
	Action    string `json:"action"`
	Ref       string `json:"ref,omitempty"`
	Value     string `json:"value,omitempty"`
	OK        bool   `json:"ok"`
	Error     string `json:"error,omitempty"`
	URL       string `json:"url,omitempty"`
	Role      string `json:"role,omitempty"`
	Name      string `json:"name,omitempty"`
	Replayed  bool   `json:"replayed,omitempty"`
	Approval  string `json:"approval,omitempty"` // approved or rejected (rejected: not run)
	ToolError string `json:"tool_error,omitempty"`
	// Origin says where a failure came from: "browser" (the page refused
	// the action: learning may learn from it) or "engine" (refused for its
	// arguments or by the engine: never learned from).
	Origin     string   `json:"origin,omitempty"`
	Screenshot string   `json:"screenshot,omitempty"`       // the path the agent wrote; see ScreenshotName
	Lessons    []string `json:"lessons_shown,omitempty"`    // lesson ids recalled into this step's message
	Trajectory string   `json:"trajectory_shown,omitempty"` // id of the reference trajectory shown
}

// Rejected reports whether the approver refused the action (it did not run).
func (s Record) Rejected() bool { return s.Approval == "rejected" }

// Failed reports whether the action ran and failed: an error of the run.
func (s Record) Failed() bool { return !s.OK && !s.Rejected() }

// ScreenshotName is the base name of the step's screenshot ("" for none):
// the file is looked up in the run's own folder by this name only.
func (s Record) ScreenshotName() string {
	if s.Screenshot == "" {
		return ""
	}
	return filepath.Base(s.Screenshot)
}

// Call is one line of llm.jsonl: one model call, redacted and clipped by
// the agent as it wrote it (engine/agent writes this type).
type Call struct {
	Step      int           `json:"step"`
	Request   Request       `json:"request"`
	Attempts  int           `json:"attempts"`
	Retries   []Retry       `json:"retries,omitempty"`
	LatencyMS int64         `json:"latency_ms"`
	Text      string        `json:"text,omitempty"`
	TextBytes int           `json:"text_bytes,omitempty"`
	ToolCalls []ToolCall    `json:"tool_calls,omitempty"`
	Usage     *engine.Usage `json:"usage,omitempty"`
	Error     string        `json:"error,omitempty"`
}

// Request is what a model call sent.
type Request struct {
	System      string    `json:"system"`
	SystemBytes int       `json:"system_bytes,omitempty"`
	Messages    []Message `json:"messages"`
	Tools       []string  `json:"tools,omitempty"`
}

// Message is one message of a model call's request.
type Message struct {
	Role         string     `json:"role"`
	Content      string     `json:"content,omitempty"`
	ContentBytes int        `json:"content_bytes,omitempty"`
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID   string     `json:"tool_call_id,omitempty"`
}

// ToolCall is a tool call in a model's answer (or an earlier message).
type ToolCall struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Arguments      string `json:"arguments"`
	ArgumentsBytes int    `json:"arguments_bytes,omitempty"`
}

// Retry is a failed attempt of a model call.
type Retry struct {
	Attempt      int    `json:"attempt"` // counted from 1
	Error        string `json:"error"`
	LatencyMS    int64  `json:"latency_ms"`
	WaitMS       int64  `json:"wait_ms,omitempty"`        // before the next attempt
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"` // what the provider asked for
}

// Records reads the action log of the run folder dir, up to max lines
// (0: all); more says lines were left. Lines cut short by a crash are
// skipped. A run that left no log gives an error satisfying
// errors.Is(err, os.ErrNotExist).
func Records(dir string, max int) (steps []Record, more bool, err error) {
	err = eachLine(dir, ActionsFile, func(b []byte) bool {
		var s Record
		if json.Unmarshal(b, &s) != nil {
			return true
		}
		if max > 0 && len(steps) == max {
			more = true
			return false
		}
		steps = append(steps, s)
		return true
	})
	return steps, more, err
}

// Calls reads the model calls of the run folder dir, up to max (0: all).
// A run that left no llm.jsonl gives an error satisfying
// errors.Is(err, os.ErrNotExist).
func Calls(dir string, max int) (calls []Call, more bool, err error) {
	err = eachLine(dir, LLMFile, func(b []byte) bool {
		var c Call
		if json.Unmarshal(b, &c) != nil {
			return true
		}
		if max > 0 && len(calls) == max {
			more = true
			return false
		}
		calls = append(calls, c)
		return true
	})
	return calls, more, err
}

// eachLine calls fn with each line of the file name of the run folder dir
// until fn returns false. The file must be the folder's own (OpenFile).
func eachLine(dir, name string, fn func([]byte) bool) error {
	path := filepath.Join(dir, name)
	f, _, err := OpenFile(dir, name)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), engine.MaxInputFile)
	for sc.Scan() {
		if !fn(sc.Bytes()) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Summary is what a run's files say about it, for a list of runs.
type Summary struct {
	// Logged says the run left an action log (a run registered with
	// engine runs create has none).
	Logged   bool
	Steps    int // distinct step numbers in the action log
	Actions  int
	Errors   int // actions that ran and failed
	LLMCalls int
	Tokens   int // prompt plus completion tokens of every call
}

// SummaryOf is the summary of steps and calls already read (Steps,
// Records, Calls).
func SummaryOf(steps []Record, calls []Call) Summary {
	s := Summary{Logged: true, LLMCalls: len(calls)}
	s.count(steps)
	for _, c := range calls {
		if c.Usage != nil {
			s.Tokens += c.Usage.Total()
		}
	}
	return s
}

func (s *Summary) count(steps []Record) {
	last := -1
	for _, st := range steps {
		s.Actions++
		if st.Step != last {
			s.Steps++
			last = st.Step
		}
		if st.Failed() {
			s.Errors++
		}
	}
}

// summaryOfCall is the part of an llm.jsonl line a summary needs.
type summaryOfCall struct {
	Usage *engine.Usage `json:"usage"`
}

// Summarize reads the run folder dir's action log and model calls into a
// Summary. Files that are missing count as empty.
func Summarize(dir string) (Summary, error) {
	var s Summary
	steps, _, err := Records(dir, 0)
	s.Logged = err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	s.count(steps)
	err = eachLine(dir, LLMFile, func(b []byte) bool {
		var c summaryOfCall
		if json.Unmarshal(b, &c) != nil {
			return true
		}
		s.LLMCalls++
		if c.Usage != nil {
			s.Tokens += c.Usage.Total()
		}
		return true
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	return s, nil
}

// Summaries summarizes run folders, keeping each summary while the
// folder's action log and llm.jsonl keep their size and modification
// time, so a list of finished runs is read once. Safe for concurrent use.
type Summaries struct {
	mu   sync.Mutex
	max  int
	keep map[string]cached
}

type cached struct {
	stamp string
	sum   Summary
}

// NewSummaries returns a cache of at most max summaries (when full, it is
// emptied: a simple bound, as a page of runs holds far fewer).
func NewSummaries(max int) *Summaries {
	return &Summaries{max: max, keep: map[string]cached{}}
}

// Get returns the summary of the run folder dir.
func (c *Summaries) Get(dir string) (Summary, error) {
	stamp := stampOf(filepath.Join(dir, ActionsFile)) + "|" + stampOf(filepath.Join(dir, LLMFile))
	c.mu.Lock()
	if e, ok := c.keep[dir]; ok && e.stamp == stamp {
		c.mu.Unlock()
		return e.sum, nil
	}
	c.mu.Unlock()
	s, err := Summarize(dir)
	if err != nil {
		return s, err
	}
	c.mu.Lock()
	if len(c.keep) >= c.max {
		clear(c.keep)
	}
	c.keep[dir] = cached{stamp, s}
	c.mu.Unlock()
	return s, nil
}

func stampOf(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "-"
	}
	return fmt.Sprintf("%d:%d", fi.Size(), fi.ModTime().UnixNano())
}

// OpenFile opens the regular file name directly inside the run folder
// dir. name must be a plain file name (no separator, not hidden); a
// symbolic link is refused, so the file is the folder's own.
// A name that is not such a file gives an error satisfying
// errors.Is(err, os.ErrNotExist).
func OpenFile(dir, name string) (*os.File, os.FileInfo, error) {
	if name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") || strings.ContainsAny(name, `/\`) {
		return nil, nil, fmt.Errorf("%q is not a file of the run's folder: %w", name, os.ErrNotExist)
	}
	p := filepath.Join(dir, name)
	lfi, err := os.Lstat(p)
	if err != nil {
		return nil, nil, err
	}
	if !lfi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a regular file of the run's folder: %w", name, os.ErrNotExist)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	// The file opened must be the one looked at: not a link put there in
	// between.
	fi, err := f.Stat()
	if err == nil && !os.SameFile(lfi, fi) {
		err = fmt.Errorf("%s changed while it was opened: %w", name, os.ErrNotExist)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// Duration is how long a run took: to its end, or to its last update
// while it runs (0 when unknown).
func Duration(m *run.Manifest) time.Duration {
	end := m.CompletedAt
	if end.IsZero() {
		end = m.UpdatedAt
	}
	if end.IsZero() || end.Before(m.StartedAt) {
		return 0
	}
	return end.Sub(m.StartedAt)
}
