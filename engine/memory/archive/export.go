package archive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// The formats engine export writes besides its own document.
const (
	FormatMemoryJSON  = "memory-json"  // the two-tier design's memory.json, version 1
	FormatAgentMemory = "agent-memory" // browser-agent-driver's .agent-memory directory
)

// twoTierLesson is one lesson of a memory.json as the two-tier design
// writes it: its ten fields, null where a lesson has no command, pattern
// or domain. lesson.ReadFile reads it back.
type twoTierLesson struct {
	Lesson           string   `json:"lesson"`
	Category         string   `json:"category"`
	FailedCommand    *string  `json:"failed_command"`
	ErrorPattern     *string  `json:"error_pattern"`
	Domain           *string  `json:"domain"`
	UseCount         int      `json:"use_count"`
	CreatedAt        string   `json:"created_at"`
	LastUsed         string   `json:"last_used"`
	Source           string   `json:"source"`
	TriggeredDomains []string `json:"triggered_domains"`
}

type twoTierFile struct {
	Version int             `json:"version"`
	Lessons []twoTierLesson `json:"lessons"`
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// WriteMemoryJSON writes d's lessons as a two-tier memory.json (version
// 1). The format knows two sources: a seed stays "seed", every other
// lesson is "learned". Quarantined lessons are left out (the format has no
// way to hold a lesson back from the prompt); the count left out is
// returned.
func WriteMemoryJSON(w io.Writer, d *Document) (left int, err error) {
	f := twoTierFile{Version: 1, Lessons: []twoTierLesson{}}
	for _, l := range d.Lessons {
		if l.Trust == lesson.Quarantined || l.Quarantine != "" {
			left++
			continue
		}
		src := "learned"
		if l.Source == lesson.SourceSeed {
			src = "seed"
		}
		td := l.TriggeredDomains
		if td == nil {
			td = []string{}
		}
		f.Lessons = append(f.Lessons, twoTierLesson{
			Lesson: l.Lesson, Category: string(l.Category), FailedCommand: orNull(l.FailedCommand),
			ErrorPattern: orNull(l.ErrorPattern), Domain: orNull(l.Domain), UseCount: l.UseCount,
			CreatedAt: l.CreatedAt, LastUsed: l.LastUsed, Source: src, TriggeredDomains: td,
		})
	}
	return left, encode(w, f)
}

func encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// jsTime is a time as browser-agent-driver writes it (JavaScript's
// toISOString); the zero time is "".
func jsTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// bamStep is one step of a browser-agent-driver trajectory file.
type bamStep struct {
	URL      string         `json:"url"`
	Action   map[string]any `json:"action"`
	Verified bool           `json:"verified"`
}

// stepAction is a trajectory step as browser-agent-driver's action object:
// the value goes where readTrajectory takes it from (text for type, key
// for press, url for navigate, value otherwise).
func stepAction(s trajectory.Step) map[string]any {
	a := map[string]any{"action": s.Action}
	if s.Selector != "" {
		a["selector"] = s.Selector
	}
	if s.Value == "" {
		return a
	}
	switch s.Action {
	case "type", "fill":
		a["text"] = s.Value
	case "press":
		a["key"] = s.Value
	case "navigate", "goto":
		a["url"] = s.Value
	default:
		a["value"] = s.Value
	}
	return a
}

// AgentMemoryWritten counts what WriteAgentMemory wrote and left out.
type AgentMemoryWritten struct {
	Files int
	// Left lists what the layout cannot hold, one line per kind.
	Left []string
}

// WriteAgentMemory writes d as a browser-agent-driver .agent-memory
// directory under dir (created; files already there with the same names
// are replaced): per host, domains/<host>/knowledge.json (facts and
// sessions), selectors.json and trajectories/<id>.json; and
// agent-runs/<run id>.json. now stamps the files' updatedAt. Lessons and
// plans have no place in the layout and are counted in Left.
func WriteAgentMemory(dir string, d *Document, now time.Time) (AgentMemoryWritten, error) {
	var w AgentMemoryWritten
	type hostFiles struct {
		k   bamKnowledge
		sel map[string]bamSelectorEntry
	}
	hosts := map[string]*hostFiles{}
	host := func(h string) *hostFiles {
		if hosts[h] == nil {
			hosts[h] = &hostFiles{k: bamKnowledge{Domain: h, Facts: []bamFact{}, Sessions: []bamSession{}}, sel: map[string]bamSelectorEntry{}}
		}
		return hosts[h]
	}
	quarantined := 0
	for _, f := range d.Facts {
		if f.Quarantine != "" {
			quarantined++
			continue
		}
		c := f.Confidence
		host(f.Domain).k.Facts = append(host(f.Domain).k.Facts, bamFact{Type: string(f.Type), Key: f.Key, Value: f.Value,
			Confidence: &c, Sources: f.Sources, LastSeen: jsTime(f.LastSeen)})
	}
	for _, s := range d.Sessions {
		host(s.Domain).k.Sessions = append(host(s.Domain).k.Sessions, bamSession{ID: s.ID, Goal: s.Goal, Outcome: s.Outcome,
			Success: s.Success, FinalURL: s.FinalURL, Timestamp: jsTime(s.Timestamp), TurnsUsed: s.TurnsUsed, DurationMS: s.DurationMS})
	}
	for _, s := range d.Selectors {
		el := fmt.Sprintf("%s %q", s.Role, s.Name)
		key := el
		if s.Path != "" {
			key += " " + s.Path // the entry's key only: element stays the identity readSelectors parses
		}
		for n := 2; ; n++ {
			if _, taken := host(s.Domain).sel[key]; !taken {
				break
			}
			key = fmt.Sprintf("%s #%d", el, n)
		}
		last := s.LastSuccess
		if last.IsZero() {
			last = s.FirstSeen
		}
		host(s.Domain).sel[key] = bamSelectorEntry{Element: el, StableSelector: s.Selector, SuccessCount: s.Successes, LastUsed: jsTime(last)}
	}
	stamp := jsTime(now)
	write := func(file string, v any) error {
		var b bytes.Buffer
		if err := encode(&b, v); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if err := WriteFileAtomic(file, b.Bytes()); err != nil {
			return err
		}
		w.Files++
		return nil
	}
	for _, t := range d.Trajectories {
		if t.Quarantine != "" {
			quarantined++
			continue
		}
		bt := struct {
			ID         string    `json:"id"`
			Goal       string    `json:"goal"`
			Steps      []bamStep `json:"steps"`
			Success    bool      `json:"success"`
			DurationMS int64     `json:"durationMs"`
			Timestamp  string    `json:"timestamp"`
		}{ID: t.ID, Goal: t.Goal, Steps: []bamStep{}, Success: true, DurationMS: t.DurationMs, Timestamp: jsTime(t.RecordedAt)}
		for _, s := range t.Steps {
			bt.Steps = append(bt.Steps, bamStep{URL: s.URL, Action: stepAction(s), Verified: s.Verified})
		}
		if err := write(filepath.Join(dir, "domains", t.Domain, "trajectories", t.ID+".json"), bt); err != nil {
			return w, err
		}
	}
	names := make([]string, 0, len(hosts))
	for h := range hosts {
		names = append(names, h)
	}
	sort.Strings(names)
	for _, h := range names {
		hf := hosts[h]
		if len(hf.k.Facts) > 0 || len(hf.k.Sessions) > 0 {
			hf.k.UpdatedAt = stamp
			if err := write(filepath.Join(dir, "domains", h, "knowledge.json"), hf.k); err != nil {
				return w, err
			}
		}
		if len(hf.sel) > 0 {
			if err := write(filepath.Join(dir, "domains", h, "selectors.json"), bamSelectorFile{Entries: hf.sel, UpdatedAt: stamp}); err != nil {
				return w, err
			}
		}
	}
	for _, m := range d.Runs {
		br := bamRun{RunID: m.RunID, SessionID: m.SessionID, ParentRunID: m.ParentRunID, Status: string(m.Status),
			Goal: m.Goal, Domain: m.Domain, StartURL: m.StartURL, FinalURL: m.FinalURL, CurrentURL: m.CurrentURL,
			StartedAt: jsTime(m.StartedAt), UpdatedAt: jsTime(m.UpdatedAt), CompletedAt: jsTime(m.CompletedAt),
			Success: m.Success, Summary: m.Summary, ArtifactPaths: m.ArtifactPaths, TurnCount: m.TurnCount,
			Result: m.Result, Reason: m.Reason}
		if br.ArtifactPaths == nil {
			br.ArtifactPaths = []string{}
		}
		if err := write(filepath.Join(dir, "agent-runs", m.RunID+".json"), br); err != nil {
			return w, err
		}
	}
	if n := len(d.Lessons); n > 0 {
		w.Left = append(w.Left, fmt.Sprintf("%d lessons (the layout has no lessons; use --format memory-json)", n))
	}
	if n := len(d.Plans); n > 0 {
		w.Left = append(w.Left, fmt.Sprintf("%d plans (the layout has no planner history)", n))
	}
	if quarantined > 0 {
		w.Left = append(w.Left, fmt.Sprintf("%d quarantined records (the layout cannot hold a record back from the prompt)", quarantined))
	}
	return w, nil
}

// WriteFileAtomic writes b to a temporary file beside file and renames it
// into place, so a reader never sees half a file.
func WriteFileAtomic(file string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), file)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
