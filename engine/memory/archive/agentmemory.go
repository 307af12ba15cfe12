package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/session"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// The browser-agent-driver's .agent-memory layout:
//
//	domains/<host>/knowledge.json        facts + session history
//	domains/<host>/selectors.json        element → selector mappings
//	domains/<host>/trajectories/*.json   successful run recordings
//	agent-runs/*.json                    run manifests
//	hints.json, runs/*.json              suite hints and results (not memory; ignored)
//
// Its JSON is camelCase; these types read it.

type bamKnowledge struct {
	Domain    string       `json:"domain"`
	Facts     []bamFact    `json:"facts"`
	Sessions  []bamSession `json:"sessions"`
	UpdatedAt string       `json:"updatedAt,omitempty"`
}

type bamFact struct {
	Type       string   `json:"type"`
	Key        string   `json:"key"`
	Value      string   `json:"value"`
	Confidence *float64 `json:"confidence"`
	Sources    int      `json:"sources"`
	LastSeen   string   `json:"lastSeen"`
}

type bamSession struct {
	ID         string `json:"id"`
	Goal       string `json:"goal"`
	Outcome    string `json:"outcome"`
	Success    bool   `json:"success"`
	FinalURL   string `json:"finalUrl"`
	Timestamp  string `json:"timestamp"`
	TurnsUsed  int    `json:"turnsUsed"`
	DurationMS int64  `json:"durationMs"`
}

type bamSelectorFile struct {
	Entries   map[string]bamSelectorEntry `json:"entries"`
	UpdatedAt string                      `json:"updatedAt,omitempty"`
}

type bamSelectorEntry struct {
	Element        string `json:"element"`
	LastRef        string `json:"lastRef,omitempty"`
	StableSelector string `json:"stableSelector"`
	SuccessCount   int    `json:"successCount"`
	LastUsed       string `json:"lastUsed"`
}

type bamTrajectory struct {
	ID         string    `json:"id"`
	Goal       string    `json:"goal"`
	Steps      []bamStep `json:"steps"`
	Success    *bool     `json:"success"`
	DurationMS int64     `json:"durationMs"`
	Timestamp  string    `json:"timestamp"`
}

type bamRun struct {
	RunID         string   `json:"runId"`
	SessionID     string   `json:"sessionId,omitempty"`
	ParentRunID   string   `json:"parentRunId,omitempty"`
	Status        string   `json:"status"`
	Goal          string   `json:"goal"`
	Domain        string   `json:"domain"`
	StartURL      string   `json:"startUrl"`
	FinalURL      string   `json:"finalUrl"`
	CurrentURL    string   `json:"currentUrl"`
	StartedAt     string   `json:"startedAt"`
	UpdatedAt     string   `json:"updatedAt"`
	CompletedAt   string   `json:"completedAt"`
	Success       *bool    `json:"success"`
	Summary       string   `json:"summary"`
	ArtifactPaths []string `json:"artifactPaths"`
	TurnCount     int      `json:"turnCount"`
	Result        string   `json:"result"`
	Reason        string   `json:"reason"`
}

// readJSON decodes file into v, naming the line of a problem.
func readJSON(file string, v any) error {
	b, err := engine.ReadInputFile(file, engine.MaxInputFile)
	if err != nil {
		return invalidIn(file, unwrapPath(err))
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return invalidIn(file, errors.New("the file is empty (is it half-written?)"))
	}
	if err := json.Unmarshal(b, v); err != nil {
		return invalidIn(file, engine.JSONProblem(b, err))
	}
	return nil
}

// isoTime parses a JavaScript ISO time ("" is the zero time).
func isoTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q is not an ISO 8601 time", field, v)
	}
	return t.UTC(), nil
}

// The stores' own validations the reader runs; they read and write no
// store, so reading a directory needs none (a client reads it before
// sending the document to a memory server).
var (
	sessionCheck = session.New(nil, session.Options{})
	runCheck     = run.New(nil, run.Options{})
)

// readAgentMemory reads a .agent-memory directory (or a directory holding
// one) into a document, validating every record as it goes.
func readAgentMemory(dir string) (*Document, []string, error) {
	if _, err := os.Stat(filepath.Join(dir, "domains")); errors.Is(err, os.ErrNotExist) {
		if fi, err := os.Stat(filepath.Join(dir, ".agent-memory")); err == nil && fi.IsDir() {
			dir = filepath.Join(dir, ".agent-memory")
		}
	}
	_, errD := os.Stat(filepath.Join(dir, "domains"))
	_, errR := os.Stat(filepath.Join(dir, "agent-runs"))
	if errD != nil && errR != nil {
		return nil, nil, invalidIn(dir, errors.New("not an .agent-memory directory: it has neither domains/ nor agent-runs/"))
	}
	d := &Document{Format: Format, Version: Version}
	var notes []string
	hosts, err := subdirs(filepath.Join(dir, "domains"))
	if err != nil {
		return nil, nil, err
	}
	for _, name := range hosts {
		host, err := domain.Host(name)
		if err != nil {
			return nil, nil, invalidIn(filepath.Join(dir, "domains", name), fmt.Errorf("directory name is not a domain: %v", err))
		}
		ddir := filepath.Join(dir, "domains", name)
		n, err := readKnowledge(d, filepath.Join(ddir, "knowledge.json"), host)
		if err != nil {
			return nil, nil, err
		}
		notes = append(notes, n...)
		n, err = readSelectors(d, filepath.Join(ddir, "selectors.json"), host)
		if err != nil {
			return nil, nil, err
		}
		notes = append(notes, n...)
		files, err := jsonFiles(filepath.Join(ddir, "trajectories"))
		if err != nil {
			return nil, nil, err
		}
		for _, f := range files {
			n, err := readTrajectory(d, f, host)
			if err != nil {
				return nil, nil, err
			}
			notes = append(notes, n...)
		}
	}
	files, err := jsonFiles(filepath.Join(dir, "agent-runs"))
	if err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		if err := readRun(d, f); err != nil {
			return nil, nil, err
		}
	}
	for _, other := range []string{"hints.json", "runs"} {
		if _, err := os.Stat(filepath.Join(dir, other)); err == nil {
			notes = append(notes, fmt.Sprintf("%s: suite hints and results are not memory; ignored", filepath.Join(dir, other)))
		}
	}
	d.fillEmpty()
	return d, notes, nil
}

func subdirs(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, invalidIn(dir, unwrapPath(err))
	}
	var out []string
	for _, e := range es {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func jsonFiles(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, invalidIn(dir, unwrapPath(err))
	}
	var out []string
	for _, e := range es {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

func exists(file string) bool {
	_, err := os.Stat(file)
	return err == nil
}

func readKnowledge(d *Document, file, host string) ([]string, error) {
	if !exists(file) {
		return nil, nil
	}
	var k bamKnowledge
	if err := readJSON(file, &k); err != nil {
		return nil, err
	}
	if k.Domain != "" {
		h, err := domain.Host(k.Domain)
		if err != nil {
			return nil, invalidIn(file, fmt.Errorf("domain: %v", err))
		}
		host = h
	}
	bad := func(what string, i int, err error) error {
		return invalidIn(file, fmt.Errorf("%s[%d]: %w", what, i, err))
	}
	for i, bf := range k.Facts {
		if bf.Confidence == nil {
			return nil, bad("facts", i, engine.Invalid("fact", "confidence is missing"))
		}
		seen, err := isoTime("lastSeen", bf.LastSeen)
		if err != nil {
			return nil, bad("facts", i, engine.Invalid("fact", err.Error()))
		}
		f := fact.Fact{Domain: host, Type: fact.Type(bf.Type), Key: bf.Key, Value: bf.Value,
			Confidence: *bf.Confidence, Sources: bf.Sources, LastSeen: seen}
		if err := checkFact(f); err != nil {
			return nil, bad("facts", i, err)
		}
		d.Facts = append(d.Facts, f)
	}
	var ss []session.Session
	for i, bs := range k.Sessions {
		at, err := isoTime("timestamp", bs.Timestamp)
		if err != nil {
			return nil, bad("sessions", i, engine.Invalid("session", err.Error()))
		}
		ss = append(ss, session.Session{ID: bs.ID, Domain: host, Goal: bs.Goal, Outcome: bs.Outcome, Success: bs.Success,
			FinalURL: bs.FinalURL, Timestamp: at, TurnsUsed: bs.TurnsUsed, DurationMS: bs.DurationMS})
	}
	if _, err := sessionCheck.Prepare(ss); err != nil {
		return nil, invalidIn(file, err)
	}
	d.Sessions = append(d.Sessions, ss...)
	return nil, nil
}

// elementRe splits the design's element identity: role "accessible name".
var elementRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*([A-Za-z][\w-]*)\s+"(.*)"\s*$`) })

func readSelectors(d *Document, file, host string) ([]string, error) {
	if !exists(file) {
		return nil, nil
	}
	var sf bamSelectorFile
	if err := readJSON(file, &sf); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(sf.Entries))
	for k := range sf.Entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var notes []string
	for _, k := range keys {
		e := sf.Entries[k]
		bad := func(err error) error {
			return invalidIn(file, fmt.Errorf("entries[%q]: %w", k, err))
		}
		el := e.Element
		if el == "" {
			el = k
		}
		mm := elementRe().FindStringSubmatch(el)
		if mm == nil {
			return nil, bad(engine.Invalid("selector", fmt.Sprintf("element %q is not `role \"accessible name\"`", el)))
		}
		if e.StableSelector == "" {
			notes = append(notes, fmt.Sprintf("%s: %s has only a volatile @ref (%s); left out", file, el, e.LastRef))
			continue
		}
		used, err := isoTime("lastUsed", e.LastUsed)
		if err != nil {
			return nil, bad(engine.Invalid("selector", err.Error()))
		}
		s := selector.Selector{Domain: host, Role: strings.ToLower(mm[1]), Name: mm[2], Selector: e.StableSelector,
			Successes: e.SuccessCount, FirstSeen: used, LastSuccess: used}
		if err := checkSelector(s); err != nil {
			return nil, bad(err)
		}
		d.Selectors = append(d.Selectors, s)
	}
	return notes, nil
}

func readTrajectory(d *Document, file, host string) ([]string, error) {
	var bt bamTrajectory
	if err := readJSON(file, &bt); err != nil {
		return nil, err
	}
	if bt.Success != nil && !*bt.Success {
		return []string{fmt.Sprintf("%s: not a successful run; left out", file)}, nil
	}
	at, err := isoTime("timestamp", bt.Timestamp)
	if err != nil {
		return nil, invalidIn(file, engine.Invalid("trajectory", err.Error()))
	}
	t := trajectory.Trajectory{Domain: host, Goal: bt.Goal, DurationMs: bt.DurationMS, RecordedAt: at}
	for i, bs := range bt.Steps {
		str := func(k string) string { s, _ := bs.Action[k].(string); return s }
		act := str("action")
		if act == "complete" || act == "abort" {
			continue
		}
		if act == "" {
			return nil, invalidIn(file, fmt.Errorf("steps[%d]: %w", i, engine.Invalid("trajectory", "the step has no action")))
		}
		st := trajectory.Step{Action: act, Selector: str("selector"), URL: bs.URL, Verified: bs.Verified}
		switch {
		case str("text") != "":
			st.Value = str("text")
		case str("value") != "":
			st.Value = str("value")
		case str("key") != "":
			st.Value = str("key")
		case act == "navigate":
			st.Value = str("url")
		}
		t.Steps = append(t.Steps, st)
	}
	if err := checkTrajectory(t); err != nil {
		return nil, invalidIn(file, err)
	}
	d.Trajectories = append(d.Trajectories, t)
	return nil, nil
}

func readRun(d *Document, file string) error {
	var br bamRun
	if err := readJSON(file, &br); err != nil {
		return err
	}
	mf := run.Manifest{RunID: br.RunID, SessionID: br.SessionID, ParentRunID: br.ParentRunID, Status: run.Status(br.Status),
		Goal: br.Goal, Domain: br.Domain, StartURL: br.StartURL, FinalURL: br.FinalURL, CurrentURL: br.CurrentURL,
		Success: br.Success, Summary: br.Summary, ArtifactPaths: br.ArtifactPaths, TurnCount: br.TurnCount,
		Result: br.Result, Reason: br.Reason}
	var err error
	for _, t := range []struct {
		field string
		v     string
		to    *time.Time
	}{{"startedAt", br.StartedAt, &mf.StartedAt}, {"updatedAt", br.UpdatedAt, &mf.UpdatedAt}, {"completedAt", br.CompletedAt, &mf.CompletedAt}} {
		if *t.to, err = isoTime(t.field, t.v); err != nil {
			return invalidIn(file, engine.Invalid("run", err.Error()))
		}
	}
	ms, err := runCheck.Prepare([]run.Manifest{mf})
	if err != nil {
		return invalidIn(file, errors.Unwrap(err))
	}
	d.Runs = append(d.Runs, ms[0])
	return nil
}
