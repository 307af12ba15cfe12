package lesson

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/internal/check"
)

// Action is one step of a run's action log, as learning needs it.
type Action struct {
	Step    int
	Command string // the whole command line, e.g. "fill e37 padel rackets"
	OK      bool
	Error   string // why it failed; empty when OK
	URL     string // the page the step ran on, when known
}

// actionRecord is one JSONL line of an action log. Two shapes are read:
// the two-tier design's agent (command, execution_result ok|error, stderr,
// stdout) and the engine's own (action, ref, value, ok, error, url).
type actionRecord struct {
	Step *int `json:"step"`
	// The design's agent.
	Command         *string `json:"command"`
	ExecutionResult *string `json:"execution_result"`
	ExecStatus      *string `json:"exec_status"`
	Stderr          string  `json:"stderr"`
	Stdout          string  `json:"stdout"`
	// The engine's own.
	Action *string `json:"action"`
	Ref    string  `json:"ref"`
	Value  string  `json:"value"`
	OK     *bool   `json:"ok"`
	Error  string  `json:"error"`
	URL    string  `json:"url"`
}

// ParseActionLog reads a JSONL action log. name is used in errors, which
// give the line and the problem (engine.ErrInvalid). Blank lines are
// skipped.
func ParseActionLog(r io.Reader, name string) ([]Action, error) {
	var out []Action
	sc := bufio.NewScanner(engine.LimitInput(r, engine.MaxInputFile))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		a, err := parseRecord(b)
		if err != nil {
			return nil, engine.MarkInvalid(fmt.Errorf("%s:%d: %v", name, line, err))
		}
		if a.Step == 0 {
			a.Step = len(out) + 1
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		return nil, engine.MarkInvalid(fmt.Errorf("%s:%d: %v", name, line+1, err))
	}
	return out, nil
}

func parseRecord(b []byte) (Action, error) {
	var rec actionRecord
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&rec); err != nil {
		return Action{}, fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return Action{}, fmt.Errorf("more than one JSON value on the line")
	}
	a := Action{URL: rec.URL}
	if rec.Step != nil {
		if *rec.Step < 0 {
			return Action{}, fmt.Errorf("step %d is negative", *rec.Step)
		}
		a.Step = *rec.Step
	}
	switch {
	case rec.Command != nil:
		a.Command = strings.TrimSpace(*rec.Command)
		status := rec.ExecutionResult
		if status == nil {
			status = rec.ExecStatus
		}
		if status == nil {
			return Action{}, fmt.Errorf(`"command" record has no "execution_result"`)
		}
		switch strings.ToLower(*status) {
		case "ok", "success":
			a.OK = true
		case "error", "failed", "failure":
			a.Error = strings.TrimSpace(rec.Stderr)
			if a.Error == "" {
				a.Error = strings.TrimSpace(rec.Stdout)
			}
		default:
			return Action{}, fmt.Errorf("execution_result %q is neither ok nor error", *status)
		}
	case rec.Action != nil:
		if rec.OK == nil {
			return Action{}, fmt.Errorf(`"action" record has no "ok"`)
		}
		a.Command = strings.TrimSpace(strings.Join(strings.Fields(*rec.Action+" "+rec.Ref+" "+rec.Value), " "))
		a.OK = *rec.OK
		a.Error = strings.TrimSpace(rec.Error)
	default:
		return Action{}, fmt.Errorf(`record has neither "command" nor "action"`)
	}
	if a.Command == "" {
		return Action{}, fmt.Errorf("the command is empty")
	}
	if p := check.Text("the command's verb", Verb(a.Command), check.MaxWord, false); p != "" {
		return Action{}, errors.New(p)
	}
	return a, nil
}

var (
	volatileRe = regexp.MustCompile(`"[^"]*"|'[^']*'|https?://\S+|\b[a-z]?\d+[a-z0-9]*\b`)
	spaceRe    = regexp.MustCompile(`\s+`)
	wordRe     = regexp.MustCompile(`[a-z]{2,}`)
	// ansiRe matches terminal escape sequences (colours in a CLI's stderr).
	ansiRe = regexp.MustCompile("\x1b\\[[0-9;?]*[ -/]*[@-~]")
)

// plainText makes error text safe to learn from: terminal escape sequences
// removed, invalid UTF-8 and control characters other than newlines turned
// into spaces (a NUL byte in a pattern would break the NUL-separated index
// entry it is filed in).
func plainText(s string) string {
	s = ansiRe.ReplaceAllString(strings.ToValidUTF8(s, " "), "")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' {
			return ' '
		}
		return r
	}, s)
}

// ErrorPattern extracts the stable key phrase of an error message: its
// first line up to the first colon, lower-cased, without the parts that
// change between runs (quoted text, URLs, numbers, refs like e37).
// "too many arguments: expected 2, received 3" → "too many arguments".
// It returns "" for an error too thin to learn from (fewer than two words).
func ErrorPattern(errText string) string {
	s := strings.ToLower(strings.TrimSpace(plainText(errText)))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimPrefix(s, "error: ")
	if i := strings.IndexByte(s, ':'); i > 0 && len(wordRe.FindAllString(s[:i], -1)) >= 2 {
		s = s[:i]
	}
	s = volatileRe.ReplaceAllString(s, " ")
	s = strings.Trim(spaceRe.ReplaceAllString(s, " "), " .,;:-")
	if len(wordRe.FindAllString(s, -1)) < 2 {
		return ""
	}
	if r := []rune(s); len(r) > 80 {
		s = strings.TrimSpace(string(r[:80]))
	}
	return s
}

// Learned is what learning did with one failure→recovery pattern.
type Learned struct {
	Lesson   Lesson
	Created  bool // a new lesson; else a use of an existing one
	Step     int  // the failing step
	Recovery string
}

// Learn scans a run's actions for failure→recovery patterns: step N fails
// with a substantive error and step N+1, a different command, succeeds.
// Each pattern becomes a new error_recovery lesson, or a use of the lesson
// that already covers it (one whose failed_command and error_pattern both
// match the failure). host is where the run happened when the actions carry
// no URL; "" leaves such lessons unbound.
//
// A lesson learned on a site is bound to that site (its registrable domain),
// so Trigger B recalls it there; seen again on another site it widens to
// every site (see countUse).
func (s *Store) Learn(ctx context.Context, actions []Action, host string) ([]Learned, error) {
	if host != "" {
		h, err := domain.Host(host)
		if err != nil {
			return nil, engine.Invalid("lesson", fmt.Sprintf("domain: %v", err))
		}
		host = h
	}
	var out []Learned
	for i := 0; i+1 < len(actions); i++ {
		a, b := actions[i], actions[i+1]
		if a.OK || !b.OK {
			continue
		}
		failed, recovery := Verb(a.Command), Verb(b.Command)
		pattern := ErrorPattern(a.Error)
		if failed == "" || failed == recovery || pattern == "" || isWrapper(failed) || check.Text("", failed, check.MaxWord, false) != "" {
			continue
		}
		where := host
		if a.URL != "" {
			if h, err := domain.Host(a.URL); err == nil {
				where = h
			}
		}
		l := Lesson{
			Lesson:        fmt.Sprintf("If %s fails with %q, try %s instead.", failed, pattern, recoveryPhrase(b.Command)),
			Category:      ErrorRecovery,
			FailedCommand: failed,
			ErrorPattern:  pattern,
			Source:        SourceLearned,
			UseCount:      1, // the run it was learned from is its first use
		}
		if where != "" {
			l.Domain = domain.Site(where)
		}
		// An existing lesson that already covers this failure takes the use.
		covering, err := s.covering(ctx, failed, a.Error, where)
		if err != nil {
			return out, err
		}
		var (
			stored  *Lesson
			created bool
		)
		if covering != "" {
			stored, err = s.dedupUse(ctx, covering, where)
		} else {
			stored, created, err = s.Record(ctx, l, where)
		}
		if err != nil {
			return out, err
		}
		out = append(out, Learned{Lesson: *stored, Created: created, Step: a.Step, Recovery: b.Command})
	}
	return out, nil
}

// covering returns the id of the best lesson whose failed_command is verb
// and whose error_pattern occurs in errText, or "".
func (s *Store) covering(ctx context.Context, verb, errText, host string) (string, error) {
	quiet := *s
	quiet.opts.Events = nil
	quiet.opts.MaxRecall = 1 << 30
	ls, err := quiet.RecallError(ctx, verb, errText, host)
	if err != nil {
		return "", err
	}
	for _, l := range ls {
		if l.FailedCommand == verb && l.ErrorPattern != "" &&
			strings.Contains(strings.ToLower(plainText(errText)), strings.ToLower(l.ErrorPattern)) {
			return l.ID, nil
		}
	}
	return "", nil
}

// dedupUse counts a use of id found again by learning, with the design's
// lesson_deduplicated event.
func (s *Store) dedupUse(ctx context.Context, id, host string) (*Lesson, error) {
	l, promoted, err := s.use(ctx, id, host, false)
	if err != nil {
		return nil, err
	}
	s.opts.Events.Emit(event.LessonDeduplicated, map[string]any{"lesson": l.Lesson, "new_use_count": l.UseCount})
	if promoted {
		s.emitPromoted(l)
	}
	return l, nil
}

// recoveryPhrase names the recovery a lesson advises: the command's verb,
// plus the key for a key press ("press Escape"). Refs and typed text are
// particular to one page and one task, so they are left out.
func recoveryPhrase(command string) string {
	verb := Verb(command)
	f := strings.Fields(command)
	for i, w := range f {
		if strings.EqualFold(w, verb) && verb == "press" && i+1 < len(f) {
			// A key name; anything else (control characters, a long
			// word) is not advice worth keeping.
			if check.Text("key", f[i+1], 40, false) != "" {
				return verb
			}
			return verb + " " + f[i+1]
		}
	}
	return verb
}
