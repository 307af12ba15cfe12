package memctx

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/session"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

var t0 = time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)

type env struct {
	t      *testing.T
	db     kv.Store
	src    Sources
	events []event.Event
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db := badgertest.Open(t)
	now := func() time.Time { return t0 }
	e := &env{t: t, db: db}
	e.src = Sources{
		Sessions:     session.New(db, session.Options{Now: now}),
		Trajectories: trajectory.New(db, trajectory.Options{Now: now}),
		Facts:        fact.New(db, fact.Options{Now: now}),
		Selectors:    selector.New(db, selector.Options{Now: now}),
		Lessons:      lesson.New(db, lesson.Options{Now: now}),
	}
	return e
}

func (e *env) builder(opts Options) *Builder {
	opts.Events = func(ev event.Event) { e.events = append(e.events, ev) }
	return New(e.src, opts)
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// fill writes one of everything for shop.example.
func (e *env) fill() {
	ctx := context.Background()
	t := e.t
	ss := e.src.Sessions.(*session.Store)
	for i, g := range []string{"find a padel racket", "compare two rackets", "add a racket to the cart"} {
		must[session.Session](t)(ss.Record(ctx, session.Session{
			ID: "s" + string(rune('1'+i)), Domain: "www.shop.example", Goal: g, Outcome: "done: " + g, Success: true,
			FinalURL: "https://www.shop.example/p/" + string(rune('1'+i)), Timestamp: t0.Add(time.Duration(i) * time.Hour),
			TurnsUsed: 4 + i, DurationMS: 30000,
		}))
	}
	must[trajectory.Trajectory](t)(e.src.Trajectories.(*trajectory.Store).Record(ctx, trajectory.Trajectory{
		Domain: "www.shop.example", Goal: "search padel rackets", Steps: []trajectory.Step{
			{Action: "type", Role: "searchbox", Name: "Search", Selector: "#q", Value: "padel rackets", Verified: true},
			{Action: "press", Value: "Enter", Verified: true},
			{Action: "type", Role: "textbox", Name: "Password", Value: "hunter2"},
		}}))
	fs := e.src.Facts.(*fact.Store)
	for range 2 {
		must[fact.Outcome](t)(fs.Observe(ctx, fact.Observation{Domain: "shop.example", Type: fact.Quirk, Key: "modals", Value: "uses shadow DOM for modals"}))
	}
	if _, _, err := fs.Put(ctx, fact.Fact{Domain: "shop.example", Type: fact.Timing, Key: "load", Value: "under the line: not confident", Confidence: 0.45}); err != nil {
		t.Fatal(err)
	}
	must[selector.Selector](t)(e.src.Selectors.(*selector.Store).Record(ctx, selector.Observation{Domain: "www.shop.example", Role: "button", Name: "Search", Selector: "[data-testid=search]"}))
	ls := e.src.Lessons.(*lesson.Store)
	must[*lesson.Lesson](t)(lessonRecord(ls.Record(ctx, lesson.Lesson{Lesson: "Close the cookie banner first", Category: lesson.SiteSpecific, Domain: "shop.example", Source: lesson.SourceLearned}, "shop.example")))
	must[*lesson.Lesson](t)(lessonRecord(ls.Record(ctx, lesson.Lesson{Lesson: "Scroll the element into view before clicking", Category: lesson.ErrorRecovery, FailedCommand: "click", ErrorPattern: "not clickable", Source: lesson.SourceLearned}, "")))
}

func lessonRecord(l *lesson.Lesson, _ bool, err error) (*lesson.Lesson, error) { return l, err }

func names(ss []Section) string {
	var b []string
	for _, s := range ss {
		b = append(b, s.Name)
	}
	return strings.Join(b, " ")
}

func TestFullContext(t *testing.T) {
	e := newEnv(t)
	e.fill()
	r, err := e.builder(Options{}).Build(context.Background(), Request{
		URL: "https://www.shop.example/", Goal: "search tennis balls", Step: 3,
		LastCommand: "click #buy", LastError: "Element is not clickable at point (10, 20)",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(r.Sections); got != "sessions error_tips trajectory domain_tips knowledge selectors" {
		t.Fatalf("sections %q", got)
	}
	if len(r.Dropped) != 0 || r.Tokens > r.Budget || r.Tokens != Tokens(r.Prompt()) {
		t.Fatalf("dropped %+v, tokens %d of %d", r.Dropped, r.Tokens, r.Budget)
	}
	for _, want := range []string{
		SessionsHeading + "\n1. [2026-03-12 12:00] \"add a racket to the cart\": succeeded (session s3)",
		"3. [2026-03-12 10:00] \"find a padel racket\": succeeded: done: find a padel racket",
		TrajectoryHeading + "\nGoal: \"search padel rackets\" (similarity 1.00, recorded 2026-03-12)\nAdapted to your goal: \"padel rackets\" → \"tennis balls\"",
		"1. type \"tennis balls\" into searchbox \"Search\" [#q] [verified]",
		"3. type {{secret}} (a secret: fill it in yourself) into textbox \"Password\"",
		lesson.DomainTipsHeading + "\n- (unverified) \"Close the cookie banner first",
		KnowledgeHeading + "\n- [quirk] modals: uses shadow DOM for modals (confidence 0.68)",
		SelectorsHeading + "\n- button \"Search\" → [data-testid=search] (1 ok, 0 failed)",
	} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("context lacks %q:\n%s", want, r.Text)
		}
	}
	// The error tips follow the error, not the memory block; Prompt is
	// the two as a run sends them.
	if !strings.HasPrefix(r.ErrorTips, lesson.ErrorTipsHeading+"\n- (unverified) \"Scroll the element into view before clicking") ||
		strings.Contains(r.Text, lesson.ErrorTipsHeading) || r.Prompt() != r.Text+"\n\n"+r.ErrorTips {
		t.Errorf("error tips %q, text:\n%s", r.ErrorTips, r.Text)
	}
	if len(r.Selectors) != 1 || r.Selectors[0] != (Shown{Role: "button", Name: "Search", Selector: "[data-testid=search]"}) {
		t.Errorf("selectors shown: %+v", r.Selectors)
	}
	if len(r.Facts) != 1 || r.Facts[0].Type != "quirk" || r.Facts[0].Key != "modals" || r.Facts[0].Domain == "" {
		t.Errorf("facts shown: %+v", r.Facts)
	}
	if strings.Contains(r.Text, "not confident") || strings.Contains(r.Text, "hunter2") {
		t.Errorf("context holds an unconfident fact or a secret:\n%s", r.Text)
	}
	if r.Match == nil || r.Match.Steps[0].Value != "tennis balls" {
		t.Errorf("match for replay: %+v", r.Match)
	}
	var built *event.Event
	for i := range e.events {
		if e.events[i].Name == EventBuilt {
			built = &e.events[i]
		}
	}
	if built == nil || built.Fields["domain"] != "www.shop.example" || built.Fields["tokens"] != r.Tokens || built.Fields["step"] != 3 {
		t.Fatalf("context_built event: %+v", built)
	}

	// Without an error in the step state there are no error tips.
	r, err = e.builder(Options{}).Build(context.Background(), Request{URL: "https://www.shop.example/", Goal: "search tennis balls"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(r.Sections); got != "sessions trajectory domain_tips knowledge selectors" {
		t.Fatalf("sections without an error %q", got)
	}
}

func TestBudgetKeepsHigherPriority(t *testing.T) {
	e := newEnv(t)
	e.fill()
	req := Request{URL: "https://www.shop.example/", Goal: "search tennis balls"}
	full, err := e.builder(Options{}).Build(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	tok := map[string]int{}
	for _, s := range full.Sections {
		tok[s.Name] = s.Tokens
	}
	sepT := Tokens(sep)

	// Room for sessions and the trajectory only: the three lower sections go.
	req.Budget = tok[Sessions] + sepT + tok[Trajectory] + 2
	r, err := e.builder(Options{}).Build(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(r.Sections); got != "sessions trajectory" {
		t.Fatalf("kept %q", got)
	}
	var dropped []string
	for _, d := range r.Dropped {
		dropped = append(dropped, d.Name+":"+d.Reason)
		if d.Tokens != tok[d.Name] {
			t.Errorf("%s: dropped tokens %d, want %d", d.Name, d.Tokens, tok[d.Name])
		}
	}
	if got := strings.Join(dropped, " "); got != "domain_tips:over budget knowledge:over budget selectors:over budget" {
		t.Errorf("dropped %q", got)
	}
	if r.Tokens > req.Budget {
		t.Errorf("%d tokens over the budget %d", r.Tokens, req.Budget)
	}
	ev := e.events[len(e.events)-1]
	if ev.Name != EventBuilt || len(ev.Fields["dropped"].([]map[string]any)) != 3 {
		t.Errorf("event %+v", ev)
	}

	// Less room than the sessions need: their oldest runs are trimmed.
	req.Budget = tok[Sessions] - 10
	r, err = e.builder(Options{}).Build(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sections[0].Name != Sessions || r.Sections[0].Trimmed == 0 || !strings.Contains(r.Sections[0].Text, "older run") {
		t.Fatalf("sessions not trimmed: %+v", r.Sections[0])
	}
	if r.Dropped[0].Name != Sessions || r.Dropped[0].Reason != "trimmed" || r.Dropped[0].Items != r.Sections[0].Trimmed {
		t.Errorf("dropped[0] = %+v", r.Dropped[0])
	}
	if r.Tokens > req.Budget {
		t.Errorf("%d tokens over the budget %d", r.Tokens, req.Budget)
	}

	// A zero-ish budget drops everything and says so.
	req.Budget = 1
	r, err = e.builder(Options{}).Build(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "" || len(r.Sections) != 0 || len(r.Dropped) != 5 || r.Match != nil {
		t.Fatalf("budget 1: %q %+v", r.Text, r.Dropped)
	}
}

func TestPrioritiesCanBeChanged(t *testing.T) {
	e := newEnv(t)
	e.fill()
	r, err := e.builder(Options{Priorities: map[string]int{Selectors: 60}}).Build(context.Background(),
		Request{URL: "https://www.shop.example/", Goal: "search tennis balls"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Sections[0].Name != Selectors || r.Sections[0].Priority != 60 {
		t.Fatalf("first section %+v", r.Sections[0])
	}
}

func TestEmptyMemoryAndBadURL(t *testing.T) {
	e := newEnv(t)
	r, err := e.builder(Options{}).Build(context.Background(), Request{URL: "https://new.example/", Goal: "anything"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "" || len(r.Sections) != 0 || len(r.Dropped) != 0 {
		t.Fatalf("empty memory: %+v", r)
	}
	if _, err := e.builder(Options{}).Build(context.Background(), Request{URL: "http://", Goal: "x"}); !errors.Is(err, engine.ErrInvalid) ||
		err.Error() != `invalid context request: url: "http://" has no host` {
		t.Fatalf("a URL without a host: %v", err)
	}
	// Nil sources are skipped.
	r, err = New(Sources{}, Options{}).Build(context.Background(), Request{URL: "a.example", Goal: "x"})
	if err != nil || r.Text != "" {
		t.Fatalf("no sources: %+v %v", r, err)
	}
}
