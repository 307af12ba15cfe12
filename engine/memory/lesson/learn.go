package lesson

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/internal/check"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// Action is one step of a run's action log, as learning needs it.
type Action struct {
	Step    int
	Command string // the whole command line, e.g. "fill e37 padel rackets"
	OK      bool
	Error   string // why it failed; empty when OK
	URL     string // the page the step ran on, when known
	// Origin says where a failure came from: OriginBrowser (the page
	// refused a well-formed action: something to learn from) or
	// OriginEngine (the action was refused for its arguments or by the
	// engine itself: never learned from). Read from the record's "origin",
	// else inferred (see inferOrigin).
	Origin string
}

// Where a failed action's error came from (an action record's "origin").
const (
	// OriginBrowser: the browser took a well-formed action and the page
	// refused it (covered element, not an input, timeout, navigation).
	OriginBrowser = "browser"
	// OriginEngine: the action never reached the page as meant: the
	// engine's or the browser plugin's argument checks (a ref that is not
	// in the snapshot, an unknown tool, malformed arguments), the
	// navigation policy, or a model answer that was not an action.
	OriginEngine = "engine"
)

// textAnswers are the verbs of records that are the model's answers, not
// browser actions: never a failure to learn from, never a recovery.
var textAnswers = []string{"finish", "answer", "invalid_tool_call", "invalid_plan"}

// argumentCheckRe matches the messages of the engine's and its browser
// plugins' argument checks, for engine records written before "origin"
// existed: such a failure is the model's mistake, not the page's.
var argumentCheckRe = lazyRegexp(`(?i)is not a snapshot ref|no element has ref|no element named|needs a ref|needs a url|needs a key|needs "|unknown action|unknown key|unknown tool|malformed arguments|scroll direction|navigation to .* blocked|is not a valid ref`)

// inferOrigin is the origin of a failed record that does not say: a
// design-shaped record (the command line tool is the browser) is the
// browser's; an engine record with a tool_error, a text answer's verb or
// an argument-check message is the engine's; any other engine record the
// browser's.
func inferOrigin(a *Action, toolError string) string {
	switch {
	case toolError != "", slices.Contains(textAnswers, Verb(a.Command)):
		return OriginEngine
	case argumentCheckRe().MatchString(a.Error):
		return OriginEngine
	}
	return OriginBrowser
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
	// Origin is "browser" or "engine" (see OriginBrowser); absent in
	// logs written before it existed and in the design's shape.
	Origin    *string `json:"origin"`
	ToolError string  `json:"tool_error"`
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
		return Action{}, fmt.Errorf("not a JSON object: %s", engine.JSONError(err))
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
	switch {
	case rec.Origin != nil:
		switch *rec.Origin {
		case OriginBrowser, OriginEngine:
			a.Origin = *rec.Origin
		default:
			return Action{}, fmt.Errorf("origin %q is neither %s nor %s", *rec.Origin, OriginBrowser, OriginEngine)
		}
	case rec.Command != nil && !slices.Contains(textAnswers, Verb(a.Command)):
		a.Origin = OriginBrowser
	default:
		a.Origin = inferOrigin(&a, rec.ToolError)
	}
	return a, nil
}

var (
	// The parts of an error that change between runs, each replaced by a
	// placeholder, in this order: quoted text, URLs, refs (e37), numbers
	// (3, 5000ms, 0x1f).
	volatile = []struct {
		re          func() *regexp.Regexp
		placeholder string
	}{
		{lazyRegexp(`"[^"]*"|'[^']*'`), "<text>"},
		{lazyRegexp(`https?://\S+`), "<url>"},
		{lazyRegexp(`\b[a-z]\d+\b`), "<ref>"},
		{lazyRegexp(`\b\d+[a-z0-9]*\b`), "<n>"},
	}
	placeholderRe = lazyRegexp(`<(text|url|ref|n)>`)
	spaceRe       = lazyRegexp(`\s+`)
	wordRe        = lazyRegexp(`[a-z]{2,}`)
	// ansiRe matches terminal escape sequences (colours in a CLI's stderr).
	ansiRe = lazyRegexp("\x1b\\[[0-9;?]*[ -/]*[@-~]")
)

// lazyRegexp returns expr compiled on its first call: a short command
// that never learns from an error does not pay for compiling these.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// plainText makes error text safe to learn from: terminal escape sequences
// removed, invalid UTF-8 and control characters other than newlines turned
// into spaces (a NUL byte in a pattern would break the NUL-separated index
// entry it is filed in).
func plainText(s string) string {
	s = strings.ToValidUTF8(s, " ")
	if strings.IndexByte(s, 0x1b) >= 0 { // the expression only for text that has an escape
		s = ansiRe().ReplaceAllString(s, "")
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' {
			return ' '
		}
		return r
	}, s)
}

// normalLine is one lower-cased line of error text with its volatile
// parts replaced by placeholders and its spaces collapsed.
func normalLine(line string) string {
	for _, v := range volatile {
		line = v.re().ReplaceAllLiteralString(line, v.placeholder)
	}
	return strings.TrimSpace(spaceRe().ReplaceAllString(line, " "))
}

// words counts the words of s that are not placeholders.
func words(s string) int {
	return len(wordRe().FindAllString(placeholderRe().ReplaceAllString(s, " "), -1))
}

// ErrorPattern extracts the stable key phrase of an error message: its
// first line, lower-cased, with the parts that change between runs
// replaced by placeholders (quoted text <text>, URLs <url>, refs like e37
// <ref>, numbers <n>), up to its first colon.
// "too many arguments: expected 2, received 3" → "too many arguments";
// `"x" is not a snapshot ref (refs look like e37)` → "<text> is not a
// snapshot ref (refs look like <ref>)". A value removed always leaves its
// placeholder, never a hole. It returns "" for an error too thin to learn
// from (fewer than two words besides placeholders).
func ErrorPattern(errText string) string {
	s := strings.ToLower(strings.TrimSpace(plainText(errText)))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = normalLine(strings.TrimPrefix(s, "error: "))
	if i := strings.IndexByte(s, ':'); i > 0 && words(s[:i]) >= 2 {
		s = s[:i]
	}
	s = strings.Trim(s, " .,;:-")
	if words(s) < 2 {
		return ""
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80])
		// Not half a placeholder: cut before it.
		if i := strings.LastIndexByte(s, '<'); i > strings.LastIndexByte(s, '>') {
			s = s[:i]
		}
		s = strings.TrimSpace(s)
	}
	return s
}

// normalError is errText as patterns are matched against: lower-cased,
// each line normalised as ErrorPattern normalises the first.
func normalError(errText string) string {
	lines := strings.Split(strings.ToLower(plainText(errText)), "\n")
	for i, l := range lines {
		lines[i] = normalLine(l)
	}
	return strings.Join(lines, "\n")
}

// errorText is an error as patterns are matched against it: its plain
// lower-cased text, and its normalised text (normalError), worked out the
// first time a pattern with a placeholder needs it (four regular
// expressions per line cost more than the rest of a recall).
type errorText struct {
	raw, lower, normal string
	normalised         bool
}

func newErrorText(s string) *errorText {
	return &errorText{raw: s, lower: strings.ToLower(plainText(s))}
}

// has reports whether a lesson's lower-cased error pattern occurs in the
// error: in its plain text (a pattern written by hand), or, for a pattern
// with placeholders as learning writes them, in its normalised text.
func (e *errorText) has(pattern string) bool {
	switch {
	case pattern == "":
		return false
	case strings.Contains(e.lower, pattern):
		return true
	case !strings.Contains(pattern, "<"):
		return false // no placeholder
	}
	if !e.normalised {
		e.normal, e.normalised = normalError(e.raw), true
	}
	return strings.Contains(e.normal, pattern)
}

// Learned is what learning did with one failure→recovery pattern.
type Learned struct {
	Lesson   Lesson `json:"lesson"`
	Created  bool   `json:"created"`  // a new lesson; else a use of an existing one
	Step     int    `json:"step"`     // the failing step
	Recovery string `json:"recovery"` // the command that worked after it
}

// Learn scans a run's actions for failure→recovery patterns: step N fails
// on the browser's side (Origin browser) with a substantive error, and
// step N+1, a different command that is a browser action (not a text
// answer), succeeds. Failures the engine refused (an unknown ref or tool,
// malformed arguments, the navigation policy), failed recoveries and the
// model's answers teach nothing. Each pattern becomes a new error_recovery
// lesson, or a use of the lesson that already covers it (one whose
// failed_command and error_pattern both match the failure). host is where
// the run happened when the actions carry no URL; "" leaves such lessons
// unbound.
//
// A recovery that leaves the failure's site for another registrable domain
// teaches nothing (leavesSite): it says nothing of how the site works, and
// "go elsewhere" is what a poisoned log would teach.
//
// A lesson learned on a site is bound to that site (its registrable domain),
// so Trigger B recalls it there; seen again on another site it widens to
// every site (see countUse).
//
// A log is one piece of evidence: each lesson takes at most one use from
// it, so the same failure repeated on many steps or many sites of one log
// counts once toward use_count, the triggered domains, trust and promotion
// (later sightings are left out of the result). So is a run: with a run id
// in Options.Provenance, a lesson takes at most one use from all the logs
// of that run (claimRunUse).
//
// Learning is idempotent: a log is learned once. Its digest (LogDigest) is
// claimed under the site it ran on before anything is written, and the
// same log given again learns nothing (a lesson_log_skipped event says
// so).
func (s *Store) Learn(ctx context.Context, actions []Action, host string) ([]Learned, error) {
	if host != "" {
		h, err := domain.Host(host)
		if err != nil {
			return nil, engine.Invalid("lesson", fmt.Sprintf("domain: %v", err))
		}
		host = h
	}
	type pattern struct {
		a, b    Action
		failed  string
		pattern string
		where   string
	}
	var found []pattern
	for i := 0; i+1 < len(actions); i++ {
		a, b := actions[i], actions[i+1]
		if a.OK || a.Origin != OriginBrowser || !b.OK || b.Origin == OriginEngine || slices.Contains(textAnswers, Verb(b.Command)) {
			continue
		}
		failed, recovery := Verb(a.Command), Verb(b.Command)
		pat := ErrorPattern(a.Error)
		if failed == "" || failed == recovery || pat == "" || isWrapper(failed) || check.Text("", failed, check.MaxWord, false) != "" {
			continue
		}
		where := host
		if a.URL != "" {
			if h, err := domain.Host(a.URL); err == nil {
				where = h
			}
		}
		if leavesSite(where, b) {
			continue
		}
		found = append(found, pattern{a, b, failed, pat, where})
	}
	if len(found) == 0 {
		return nil, nil // nothing to learn, nothing to remember
	}
	digest, site := LogDigest(actions), keyspace.Global
	if found[0].where != "" {
		site = domain.Site(found[0].where)
	}
	fresh, err := s.claimLog(ctx, site, digest)
	if err != nil || !fresh {
		return nil, err
	}
	var out []Learned
	// One log is one piece of evidence: a lesson takes at most one use from
	// it, however many steps or sites repeat its failure.
	seenPattern, seenLesson := map[string]bool{}, map[string]bool{}
	for _, p := range found {
		key := p.failed + "\x00" + p.pattern
		if seenPattern[key] {
			continue
		}
		seenPattern[key] = true
		l := Lesson{
			Lesson:        fmt.Sprintf("If %s fails with %q, try %s instead.", p.failed, p.pattern, recoveryPhrase(p.b.Command)),
			Category:      ErrorRecovery,
			FailedCommand: p.failed,
			ErrorPattern:  p.pattern,
			Source:        SourceLearned,
		}
		if p.where != "" {
			l.Domain = domain.Site(p.where)
		}
		// An existing lesson that already covers this failure takes the use.
		covering, err := s.covering(ctx, p.failed, p.a.Error, p.where)
		var (
			stored  *Lesson
			created bool
		)
		// The lesson the use goes to: the covering one, else the one of
		// this failure's identity (new, or bound to another site).
		target := covering
		if target == "" {
			target = idFor(&l)
		}
		if err == nil && seenLesson[target] {
			continue
		}
		if err == nil {
			var first bool
			if first, err = s.claimRunUse(ctx, target); err == nil && !first {
				seenLesson[target] = true
				continue
			}
		}
		if err == nil && covering != "" {
			stored, err = s.dedupUse(ctx, covering, p.where)
		} else if err == nil {
			stored, created, err = s.record(ctx, l, p.where, SourceLearned, true)
		}
		if err != nil {
			if len(out) == 0 {
				// Nothing was written: the log can be learned again.
				err = errors.Join(err, s.db.Update(context.WithoutCancel(ctx), func(tx kv.Txn) error {
					return tx.Delete(keyspace.LearnedLog(site, digest))
				}))
			}
			return out, err
		}
		seenLesson[stored.ID] = true
		out = append(out, Learned{Lesson: *stored, Created: created, Step: p.a.Step, Recovery: p.b.Command})
	}
	return out, nil
}

// LogDigest identifies an action log by what learning reads of it (each
// action's step, command, result, error, URL and origin), so the same log
// written with other spacing or field order is the same log.
func LogDigest(actions []Action) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, a := range actions {
		_ = enc.Encode([]any{a.Step, a.Command, a.OK, a.Error, a.URL, a.Origin})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// claimLog marks the log with digest as learned under site; false means it
// was learned before.
func (s *Store) claimLog(ctx context.Context, site, digest string) (bool, error) {
	var when string
	fresh := false
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		v, err := tx.Get(keyspace.LearnedLog(site, digest))
		switch {
		case err == nil:
			when, fresh = string(v), false
			return nil
		case !errors.Is(err, kv.ErrNotFound):
			return err
		}
		fresh = true
		return tx.Set(keyspace.LearnedLog(site, digest), []byte(s.opts.Now().UTC().Format(time.RFC3339)), 0)
	})
	if err != nil {
		return false, fmt.Errorf("lesson: learn: %w", err)
	}
	if !fresh {
		s.opts.Events.Emit(event.LessonLogSkipped, map[string]any{"digest": digest, "learned_at": when})
	}
	return fresh, nil
}

// claimRunUse claims the use of lesson id by the run learning writes for
// (Options.Provenance.Run); false means that run counted a use of it
// already, from another log: one run is one piece of evidence. Without a
// run id every log is its own evidence and the claim always succeeds. The
// claim is a marker named by a digest of the run and the lesson, under the
// global site (it names no site).
func (s *Store) claimRunUse(ctx context.Context, id string) (bool, error) {
	run := s.opts.Provenance.Run
	if run == "" {
		return true, nil
	}
	sum := sha256.Sum256([]byte("run-use\x00" + run + "\x00" + id))
	key := keyspace.LearnedLog(keyspace.Global, "run-"+hex.EncodeToString(sum[:16]))
	first := false
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		_, err := tx.Get(key)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, kv.ErrNotFound):
			return err
		}
		first = true
		return tx.Set(key, []byte(s.opts.Now().UTC().Format(time.RFC3339)), 0)
	})
	if err != nil {
		return false, fmt.Errorf("lesson: learn: %w", err)
	}
	return first, nil
}

// covering returns the id of the best lesson whose failed_command is verb
// and whose error_pattern occurs in errText, or "". Only the recall's
// pattern hits can be such a lesson, so it reads those alone (from the
// recall index), not the verb's whole list.
func (s *Store) covering(ctx context.Context, verb, errText, host string) (string, error) {
	quiet := *s
	quiet.opts.Events = nil
	quiet.opts.MaxRecall = 1 << 30
	ls, err := quiet.recallOnError(ctx, verb, errText, host, true)
	if err != nil {
		return "", err
	}
	et := newErrorText(errText)
	for _, l := range ls {
		if l.FailedCommand == verb && et.has(strings.ToLower(l.ErrorPattern)) {
			return l.ID, nil
		}
	}
	return "", nil
}

// dedupUse counts a use of id found again by learning, with the design's
// lesson_deduplicated event.
func (s *Store) dedupUse(ctx context.Context, id, host string) (*Lesson, error) {
	l, ch, err := s.use(ctx, id, host, false)
	if err != nil {
		return nil, err
	}
	s.opts.Events.Emit(event.LessonDeduplicated, map[string]any{"lesson": l.Lesson, "new_use_count": l.UseCount})
	s.emitChange(l, ch)
	return l, nil
}

// leavesSite reports whether the recovery b ran on, or navigated to, a
// registrable domain other than where's (the failure's host; "" when
// unknown, and then nothing is said to leave).
func leavesSite(where string, b Action) bool {
	if where == "" {
		return false
	}
	site := domain.Site(where)
	targets := []string{b.URL}
	if Verb(b.Command) == "navigate" {
		if f := strings.Fields(b.Command); len(f) > 1 {
			targets = append(targets, f[1])
		}
	}
	for _, t := range targets {
		if t == "" {
			continue
		}
		if h, err := domain.Host(t); err == nil && domain.Site(h) != site {
			return true
		}
	}
	return false
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
