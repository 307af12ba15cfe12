// Package memctx builds the memory part of the LLM's per-step context: one
// function, Build, gathers for (domain, goal, step state) what the memory
// holds (session history, a reference trajectory, app knowledge, known
// selectors and Tier 2 tips) and fits it into a token budget by priority.
//
// Sections and their default priorities (higher survives trimming):
//
//	sessions     50  SESSION HISTORY       what previous runs on the site did
//	error_tips   45  Tips from previous experience (only when the step
//	                 state carries a failed command: advice for that error)
//	trajectory   40  REFERENCE TRAJECTORY  best match for the goal, bound
//	domain_tips  35  Tips for this site    Tier 2 lessons bound to the domain
//	knowledge    30  APP KNOWLEDGE         confident facts
//	selectors    25  KNOWN SELECTORS       selectors for the current page
//
// The four numbers of the trajectory memory design (50, 40, 30, 25) keep
// their sources; the design has no Tier 2 tips, so they slot in where their
// use says: tips for the error the agent is stuck on right now rank just
// below the session history, tips for the site between the reference
// trajectory and the facts.
//
// Trimming: sections are placed in priority order, each as a whole when it
// fits in what is left of the budget; otherwise its first items (the best
// ones: newest sessions, first steps, most confident facts, best
// selectors) with a note of how many were cut; when not even one item
// fits, the section is dropped. A lower section may still fit after a
// higher one was trimmed. The Result lists every trimmed or dropped
// section, and Build emits a context_built event that says the same.
//
// What a run sends: the memory block (Result.Text) goes into the step's
// message, and the error tips (Result.ErrorTips, Trigger A) follow the
// failed action's error, as the design draws; both come from this one
// Build, and Result.Prompt joins them as `engine query context` prints
// them. The error tips compete for the budget at their priority like any
// section; they are only placed elsewhere.
//
// Tokens are estimated as one per four characters (runes), rounded up.
package memctx

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/session"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// Section names.
const (
	Sessions   = "sessions"
	ErrorTips  = "error_tips"
	Trajectory = "trajectory"
	DomainTips = "domain_tips"
	Knowledge  = "knowledge"
	Selectors  = "selectors"
)

// DefaultPriorities are the sections' priorities.
var DefaultPriorities = map[string]int{
	Sessions: 50, ErrorTips: 45, Trajectory: 40, DomainTips: 35, Knowledge: 30, Selectors: 25,
}

// Defaults for Options.
const (
	DefaultBudget       = 2000
	DefaultMaxSessions  = session.DefaultKeep
	DefaultMaxFacts     = 20
	DefaultMaxSelectors = 20
)

// EventBuilt is the memory event emitted by every Build.
const EventBuilt = "context_built"

// Headings the sections are shown under.
const (
	SessionsHeading   = "SESSION HISTORY (previous runs on this site, newest first):"
	TrajectoryHeading = "REFERENCE TRAJECTORY (a past successful run of a similar goal; follow or adapt it):"
	KnowledgeHeading  = "APP KNOWLEDGE (facts learned about this site):"
	SelectorsHeading  = "KNOWN SELECTORS (element → selector that worked before):"
)

// The sources Build reads. Each is satisfied by the store of its package;
// a nil source contributes nothing.
type (
	SessionSource interface {
		Recent(ctx context.Context, host string, n int) ([]session.Session, error)
	}
	TrajectorySource interface {
		Match(ctx context.Context, host, goal string) (*trajectory.Match, error)
	}
	FactSource interface {
		Confident(ctx context.Context, host string) ([]fact.Fact, error)
	}
	SelectorSource interface {
		Known(ctx context.Context, pageURL string, limit int) ([]selector.Selector, error)
	}
	LessonSource interface {
		RecallDomain(ctx context.Context, host string) ([]lesson.Lesson, error)
		RecallError(ctx context.Context, command, errText, host string) ([]lesson.Lesson, error)
	}
)

// Sources are the stores Build reads.
type Sources struct {
	Sessions     SessionSource
	Trajectories TrajectorySource
	Facts        FactSource
	Selectors    SelectorSource
	Lessons      LessonSource
}

// Options configure a Builder.
type Options struct {
	// Budget is the token budget when the Request gives none; zero means
	// DefaultBudget.
	Budget int
	// Priorities override DefaultPriorities, by section name.
	Priorities map[string]int
	// MaxSessions, MaxFacts and MaxSelectors cap how many of each are
	// considered (zero: the defaults).
	MaxSessions, MaxFacts, MaxSelectors int
	// Events receives the context_built event; nil drops it.
	Events event.Func
}

// Builder builds contexts from a fixed set of sources.
type Builder struct {
	src  Sources
	opts Options
	prio map[string]int
}

// New returns a Builder over src.
func New(src Sources, opts Options) *Builder {
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxFacts <= 0 {
		opts.MaxFacts = DefaultMaxFacts
	}
	if opts.MaxSelectors <= 0 {
		opts.MaxSelectors = DefaultMaxSelectors
	}
	prio := map[string]int{}
	for k, v := range DefaultPriorities {
		prio[k] = v
	}
	for k, v := range opts.Priorities {
		prio[k] = v
	}
	return &Builder{src: src, opts: opts, prio: prio}
}

// Request is one step's state.
type Request struct {
	URL  string // the page the agent is on (or the start URL, or a host)
	Goal string
	// Step is the step number, 1 for the first; informational (events).
	Step int
	// LastCommand and LastError describe the previous action when it
	// failed; they select the error tips.
	LastCommand, LastError string
	// Budget overrides Options.Budget when positive.
	Budget int
	// SkipDomainTips leaves out the site's tips (Trigger B): an agent asks
	// for them only on the step it entered the domain.
	SkipDomainTips bool
}

// Shown is a selector the context offered: what an agent needs to record
// the selector's failure when the element it names then fails.
type Shown struct {
	Role     string `json:"role"`
	Name     string `json:"name"`
	Selector string `json:"selector"`
	Path     string `json:"path,omitempty"`
}

// Section is one part of the built context.
type Section struct {
	Name     string `json:"name"`
	Priority int    `json:"priority"`
	Text     string `json:"text"` // heading and items, as the LLM reads them
	Tokens   int    `json:"tokens"`
	Items    int    `json:"items"`   // items shown
	Trimmed  int    `json:"trimmed"` // items cut to fit the budget
}

// Dropped is a section left out, or cut, to fit the budget.
type Dropped struct {
	Name     string `json:"name"`
	Priority int    `json:"priority"`
	Items    int    `json:"items"`  // items left out
	Tokens   int    `json:"tokens"` // what the whole section needed
	Reason   string `json:"reason"` // "over budget" (dropped) or "trimmed" (some items cut)
}

// Result is the built context.
type Result struct {
	Domain string `json:"domain"`
	Goal   string `json:"goal"`
	Budget int    `json:"budget"`
	Tokens int    `json:"tokens"`
	// Text is the memory block of the step's message, exactly as the
	// run sends it (every kept section but error_tips).
	Text string `json:"text"`
	// ErrorTips is the error_tips section (Trigger A), exactly as the run
	// appends it to the failed action's error; "" when none was kept.
	ErrorTips string    `json:"error_tips,omitempty"`
	Sections  []Section `json:"sections"` // kept, in priority order (Text's, with error_tips)
	Dropped   []Dropped `json:"dropped"`
	// Match is the reference trajectory with its bindings and rewritten
	// steps, for an agent that replays it; nil when none matched (or its
	// section was dropped).
	Match *trajectory.Match `json:"match,omitempty"`
	// Lessons are the ids of the lessons shown (tips kept under the
	// budget, error tips first, in order), for an agent that attributes
	// success to them.
	Lessons []string `json:"lessons,omitempty"`
	// LessonTexts are their texts, one each, for an agent that judges
	// whether its next action followed a lesson (lesson.UsedBy).
	LessonTexts []string `json:"lesson_texts,omitempty"`
	// Selectors are the selectors shown (kept under the budget), for an
	// agent that records a failure of one.
	Selectors []Shown `json:"selectors,omitempty"`
	// Facts are the facts shown (kept under the budget), by identity,
	// for an agent that attributes what a step saw.
	Facts []ShownFact `json:"facts,omitempty"`
}

// ShownFact is a fact the context offered, by its identity (domain, type,
// key, value).
type ShownFact struct {
	Domain string    `json:"domain"`
	Type   fact.Type `json:"type"`
	Key    string    `json:"key"`
	Value  string    `json:"value"`
}

// Prompt is everything the run sends the model from memory at this step,
// as `engine query context` prints it: the memory block, then (after a
// blank line) the error tips.
func (r *Result) Prompt() string {
	switch {
	case r.ErrorTips == "":
		return r.Text
	case r.Text == "":
		return r.ErrorTips
	}
	return r.Text + sep + r.ErrorTips
}

// Tokens estimates the tokens of s: one per four runes, rounded up.
func Tokens(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }

// candidate is a section before budgeting: heading and items.
type candidate struct {
	name    string
	heading string
	items   []string
	// ids are the lessons behind items, one each (lesson sections only).
	ids   []string
	texts []string // the lessons' texts, one each
	// shown are the selectors behind items, one each (selectors only).
	shown []Shown
	// facts are the facts behind items, one each (facts only).
	facts []ShownFact
	// more renders the note for n cut items.
	more func(n int) string
}

func (c *candidate) render(k int) string {
	var b strings.Builder
	b.WriteString(c.heading)
	for _, it := range c.items[:k] {
		b.WriteString("\n")
		b.WriteString(it)
	}
	if k < len(c.items) {
		b.WriteString("\n")
		b.WriteString(c.more(len(c.items) - k))
	}
	return b.String()
}

// sep is what joins sections in Text.
const sep = "\n\n"

// Build gathers the memory for req and fits it into the budget.
func (b *Builder) Build(ctx context.Context, req Request) (*Result, error) {
	host, err := domain.Host(req.URL)
	if err != nil {
		return nil, engine.Invalid("context request", fmt.Sprintf("url: %v", err))
	}
	budget := req.Budget
	if budget <= 0 {
		budget = b.opts.Budget
	}
	res := &Result{Domain: host, Goal: req.Goal, Budget: budget, Sections: []Section{}, Dropped: []Dropped{}}
	cands, match, err := b.gather(ctx, host, req)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(cands, func(x, y candidate) int { return b.prio[y.name] - b.prio[x.name] })

	left := budget
	var texts []string
	placed := false // the error tips were placed (outside Text)
	for i := range cands {
		c := &cands[i]
		p := b.prio[c.name]
		cost := 0
		if len(texts) > 0 || placed {
			cost = Tokens(sep)
		}
		full := c.render(len(c.items))
		need := Tokens(full)
		k, text := len(c.items), full
		if cost+need > left {
			k = 0
			for n := len(c.items) - 1; n >= 1; n-- {
				if t := c.render(n); cost+Tokens(t) <= left {
					k, text = n, t
					break
				}
			}
		}
		if k == 0 {
			res.Dropped = append(res.Dropped, Dropped{Name: c.name, Priority: p, Items: len(c.items), Tokens: need, Reason: "over budget"})
			continue
		}
		if k < len(c.items) {
			res.Dropped = append(res.Dropped, Dropped{Name: c.name, Priority: p, Items: len(c.items) - k, Tokens: need, Reason: "trimmed"})
		}
		t := Tokens(text)
		left -= cost + t
		if c.name == ErrorTips {
			res.ErrorTips = text
			placed = true // its separator was counted, as if it were in Text
		} else {
			texts = append(texts, text)
		}
		res.Sections = append(res.Sections, Section{Name: c.name, Priority: p, Text: text, Tokens: t, Items: k, Trimmed: len(c.items) - k})
		if c.ids != nil {
			res.Lessons = append(res.Lessons, c.ids[:k]...)
			res.LessonTexts = append(res.LessonTexts, c.texts[:k]...)
		}
		if c.shown != nil {
			res.Selectors = append(res.Selectors, c.shown[:k]...)
		}
		if c.facts != nil {
			res.Facts = append(res.Facts, c.facts[:k]...)
		}
		if c.name == Trajectory {
			res.Match = match
		}
	}
	res.Text = strings.Join(texts, sep)
	res.Tokens = Tokens(res.Prompt())

	kept := make([]string, len(res.Sections))
	for i, s := range res.Sections {
		kept[i] = s.Name
	}
	dropped := make([]map[string]any, len(res.Dropped))
	for i, d := range res.Dropped {
		dropped[i] = map[string]any{"section": d.Name, "priority": d.Priority, "items": d.Items, "tokens": d.Tokens, "reason": d.Reason}
	}
	fields := map[string]any{
		"domain": host, "goal": req.Goal, "step": req.Step, "budget": budget, "tokens": res.Tokens,
		"sections": kept, "dropped": dropped, "domain_tips": !req.SkipDomainTips,
	}

	if match != nil {
		fields["trajectory_id"] = match.Trajectory.ID
	}
	b.opts.Events.Emit(EventBuilt, fields)
	return res, nil
}

// gather reads every source and renders its candidate section.
func (b *Builder) gather(ctx context.Context, host string, req Request) ([]candidate, *trajectory.Match, error) {
	var cands []candidate
	add := func(c candidate) {
		if len(c.items) > 0 {
			cands = append(cands, c)
		}
	}
	if b.src.Sessions != nil {
		ss, err := b.src.Sessions.Recent(ctx, host, b.opts.MaxSessions)
		if err != nil {
			return nil, nil, fmt.Errorf("memctx: sessions: %w", err)
		}
		add(sessionSection(ss))
	}
	if b.src.Lessons != nil && strings.TrimSpace(req.LastError) != "" {
		ls, err := b.src.Lessons.RecallError(ctx, req.LastCommand, req.LastError, host)
		if err != nil {
			return nil, nil, fmt.Errorf("memctx: error tips: %w", err)
		}
		add(lessonSection(ErrorTips, lesson.ErrorTipsHeading, ls)) // recall leaves out stale ones: they wait to be learned again
	}
	var match *trajectory.Match
	if b.src.Trajectories != nil && strings.TrimSpace(req.Goal) != "" {
		m, err := b.src.Trajectories.Match(ctx, host, req.Goal)
		if err != nil {
			return nil, nil, fmt.Errorf("memctx: trajectory: %w", err)
		}
		if m != nil {
			match = m
			add(trajectorySection(m))
		}
	}
	if b.src.Lessons != nil && !req.SkipDomainTips {
		ls, err := b.src.Lessons.RecallDomain(ctx, host)
		if err != nil {
			return nil, nil, fmt.Errorf("memctx: domain tips: %w", err)
		}
		add(lessonSection(DomainTips, lesson.DomainTipsHeading, ls))
	}
	if b.src.Facts != nil {
		fs, err := b.src.Facts.Confident(ctx, host)
		if err != nil {
			return nil, nil, fmt.Errorf("memctx: facts: %w", err)
		}
		add(factSection(fs[:min(len(fs), b.opts.MaxFacts)]))
	}
	if b.src.Selectors != nil {
		ss, err := b.src.Selectors.Known(ctx, req.URL, b.opts.MaxSelectors)
		if err != nil {
			return nil, nil, fmt.Errorf("memctx: selectors: %w", err)
		}
		add(selectorSection(ss))
	}
	return cands, match, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func sessionSection(ss []session.Session) candidate {
	c := candidate{name: Sessions, heading: SessionsHeading,
		more: func(n int) string { return fmt.Sprintf("(%s not shown)", plural(n, "older run", "older runs")) }}
	// session.Render numbers and details the newest sessions; render each
	// prefix so an item is one session's lines.
	prev := ""
	for i := range ss {
		r := strings.TrimRight(session.Render(ss[:i+1]), "\n")
		item := strings.TrimPrefix(r, prev)
		item = strings.TrimPrefix(item, "\n")
		c.items = append(c.items, item)
		prev = r
	}
	return c
}

func lessonSection(name, heading string, ls []lesson.Lesson) candidate {
	c := candidate{name: name, heading: heading,
		more: func(n int) string { return fmt.Sprintf("(%s not shown)", plural(n, "more tip", "more tips")) }}
	for _, l := range ls {
		c.items = append(c.items, lesson.Item(l))
		c.ids = append(c.ids, l.ID)
		c.texts = append(c.texts, l.Lesson)
	}
	return c
}

func trajectorySection(m *trajectory.Match) candidate {
	t := &m.Trajectory
	head := fmt.Sprintf("%s\nGoal: %q (similarity %.2f, recorded %s)", TrajectoryHeading, t.Goal, m.Similarity, t.RecordedAt.Format("2006-01-02"))
	var bound []string
	for _, b := range m.Bindings {
		if b.Bound && b.Value != b.Recorded {
			bound = append(bound, fmt.Sprintf("%q → %q", b.Recorded, b.Value))
		}
	}
	if len(bound) > 0 {
		head += "\nAdapted to your goal: " + strings.Join(bound, ", ")
	}
	c := candidate{name: Trajectory, heading: head,
		more: func(n int) string { return fmt.Sprintf("(%s not shown)", plural(n, "more step", "more steps")) }}
	for i, s := range m.Steps {
		c.items = append(c.items, fmt.Sprintf("%d. %s", i+1, StepLine(s)))
	}
	return c
}

// StepLine renders one trajectory step for the prompt:
// `type "tennis balls" into searchbox "Search" [#q] (on https://…) [verified]`.
func StepLine(s trajectory.Step) string {
	var b strings.Builder
	b.WriteString(s.Action)
	if s.Value != "" {
		if s.Secret {
			b.WriteString(" " + s.Value + " (a secret: fill it in yourself)")
		} else {
			fmt.Fprintf(&b, " %q", oneLine(s.Value))
		}
	}
	if s.Role != "" || s.Name != "" {
		if s.Value != "" {
			b.WriteString(" into")
		}
		target := strings.TrimSpace(s.Role + " " + quote(s.Name))
		b.WriteString(" " + target)
	}
	if s.Selector != "" {
		b.WriteString(" [" + s.Selector + "]")
	}
	if s.URL != "" {
		b.WriteString(" (on " + s.URL + ")")
	}
	if s.Verified {
		b.WriteString(" [verified]")
	}
	return b.String()
}

func quote(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("%q", s)
}

func factSection(fs []fact.Fact) candidate {
	c := candidate{name: Knowledge, heading: KnowledgeHeading,
		more: func(n int) string {
			return fmt.Sprintf("(%s not shown)", plural(n, "less confident fact", "less confident facts"))
		}}
	for _, f := range fs {
		c.items = append(c.items, fmt.Sprintf("- [%s] %s: %s (confidence %.2f)", f.Type, f.Key, oneLine(f.Value), f.Confidence))
		c.facts = append(c.facts, ShownFact{Domain: f.Domain, Type: f.Type, Key: f.Key, Value: f.Value})
	}
	return c
}

func selectorSection(ss []selector.Selector) candidate {
	c := candidate{name: Selectors, heading: SelectorsHeading,
		more: func(n int) string { return fmt.Sprintf("(%s not shown)", plural(n, "more selector", "more selectors")) }}
	for _, s := range ss {
		line := fmt.Sprintf("- %s %q → %s (%d ok, %d failed)", s.Role, s.Name, s.Selector, s.Successes, s.Failures)
		if s.Path != "" {
			line += " on " + s.Path
		}
		c.items = append(c.items, line)
		c.shown = append(c.shown, Shown{Role: s.Role, Name: s.Name, Selector: s.Selector, Path: s.Path})
	}
	return c
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
