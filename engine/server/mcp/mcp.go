// Package mcp serves a data dir's memory to MCP hosts (Claude and other
// agents that reach tools through the Model Context Protocol): ten tools and
// three resource templates over the memory API's typed client. It opens no
// store itself: whoever holds the memory (this process, a memory server, a
// remote one) answers through the client, so MCP gets the same answers and
// the same one-line errors as the CLI.
package mcp

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// Options configure New.
type Options struct {
	// Version is the server's version in the MCP handshake.
	Version string
	// RunsDir is the data dir's run artifact folders (<data-dir>/runs), read
	// for a run's step timeline (its actions.jsonl); "" when the memory is
	// remote, and run resources then carry the manifest only.
	RunsDir string
	// Instructions replace the server's Instructions when not "".
	Instructions string
	// Extend adds further tools to the server (the browser tools of
	// engine mcp --browser); nil for none.
	Extend func(*sdk.Server)
	// RunsDirOf, when set, is the runs folder of one request's namespace
	// (a token of one namespace reads its own runs' files), in place of
	// RunsDir.
	RunsDirOf func(context.Context) string
}

// Instructions tell the host's model what the server is for.
const Instructions = `Memory for a browser agent, learned across runs. Before acting on a site call memory_context (or memory_recall_domain); after a command fails call memory_recall_error with the command and its error; when you found how to recover, call memory_record_lesson; record facts and selectors that worked. memory_query lists what memory holds.`

// New returns an MCP server whose tools and resources call c.
func New(c *api.Client, opts Options) *sdk.Server {
	if opts.Version == "" {
		opts.Version = "dev"
	}
	instructions := Instructions
	if opts.Instructions != "" {
		instructions = opts.Instructions
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "engine", Title: "engine memory", Version: opts.Version},
		&sdk.ServerOptions{Instructions: instructions})
	t := &tools{c: c, runsDir: opts.RunsDir, runsDirOf: opts.RunsDirOf}
	t.add(s)
	t.addResources(s)
	if opts.Extend != nil {
		opts.Extend(s)
	}
	return s
}

type tools struct {
	c       *api.Client
	runsDir string
	// runsDirOf, when set, replaces runsDir per request (Options.RunsDirOf).
	runsDirOf func(context.Context) string
}

// writer is the client a tool call writes through: a program over the API
// (source api), its model named by the MCP client's initialize info, so
// what it writes says which client wrote it.
func (t *tools) writer(ctx context.Context) *api.Client {
	if name := clientName(ctx); name != "" {
		return t.c.WithProvenance(engine.Provenance{Source: engine.SourceAPI, Model: name})
	}
	return t.c
}

func readOnly(title string) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true}
}

func writes(title string) *sdk.ToolAnnotations {
	no := false
	return &sdk.ToolAnnotations{Title: title, DestructiveHint: &no}
}

// Lessons is the structured answer of the recall tools.
type Lessons struct {
	Lessons []lesson.Lesson `json:"lessons" jsonschema:"the lessons, best first"`
}

// Tier1Input is memory_tier1's (empty) input.
type Tier1Input struct{}

// RecallErrorInput is memory_recall_error's input.
type RecallErrorInput struct {
	Command string `json:"command" jsonschema:"the command that failed, as you issued it (e.g. click e12)"`
	Error   string `json:"error" jsonschema:"the error it failed with, verbatim"`
	Domain  string `json:"domain,omitempty" jsonschema:"the host of the page it failed on; adds that site's lessons"`
}

// RecallDomainInput is memory_recall_domain's input.
type RecallDomainInput struct {
	Host string `json:"host" jsonschema:"the host (or URL) being entered, e.g. shop.example.com"`
}

// ContextInput is memory_context's input.
type ContextInput struct {
	URL         string `json:"url" jsonschema:"the page you are on (or the start URL, or a host)"`
	Goal        string `json:"goal" jsonschema:"the task you are working on"`
	Budget      int    `json:"budget,omitempty" jsonschema:"the most tokens the memory text may take (about 4 characters a token); default 2000"`
	LastCommand string `json:"last_command,omitempty" jsonschema:"your previous command, when it failed (give last_error too)"`
	LastError   string `json:"last_error,omitempty" jsonschema:"the error of your previous command: adds tips for it"`
	TraceInput
}

// TraceInput is how memory_context and memory_find_trajectory rank
// recorded runs, as GET /v1/context's and GET /v1/recall/trajectory's
// weighted and trace_ttl_days (the server checks them, with the API's
// errors).
type TraceInput struct {
	Weighted     bool `json:"weighted,omitempty" jsonschema:"rank recorded runs by a blend of similarity (60%), recency (20%), speed (10%) and verified steps (10%) instead of similarity alone: set it when the site changes often, so a recent, fast, verified run wins over an old one with a slightly closer goal"`
	TraceTTLDays int  `json:"trace_ttl_days,omitempty" jsonschema:"use only runs recorded at most this many days ago (0 or absent: every unexpired run, 30 days): set it when the site changed recently and older runs would mislead"`
}

// RecordLessonInput is memory_record_lesson's input.
type RecordLessonInput struct {
	Lesson        string `json:"lesson" jsonschema:"the advice, as a future agent should read it: what to do instead, and when"`
	Category      string `json:"category" jsonschema:"tool_fallback (another tool works when one fails), best_practice (general advice), error_recovery (how to recover from an error) or site_specific (true of one site; give domain)"`
	FailedCommand string `json:"failed_command,omitempty" jsonschema:"the command that failed (its verb, e.g. fill), so the lesson is recalled when it fails again"`
	ErrorPattern  string `json:"error_pattern,omitempty" jsonschema:"a key phrase of the error (e.g. not visible)"`
	Domain        string `json:"domain,omitempty" jsonschema:"bind the lesson to this site (and its subdomains); empty for every site"`
}

// LearnInput is memory_learn's input.
type LearnInput struct {
	Lines  []string `json:"lines" jsonschema:"the run's action log, one JSON object per line: {\"step\":1,\"action\":\"click\",\"ref\":\"e12\",\"ok\":false,\"error\":\"...\",\"url\":\"...\"} (or the command/execution_result/exec_status form)"`
	Domain string   `json:"domain,omitempty" jsonschema:"the host the run was on, for steps that carry no url"`
}

// Learned is memory_learn's structured answer.
type Learned struct {
	Learned []lesson.Learned `json:"learned" jsonschema:"one entry per failure→recovery pattern found"`
}

// ObserveFactInput is memory_observe_fact's input.
type ObserveFactInput struct {
	Domain string `json:"domain" jsonschema:"the host (or URL) it was seen on"`
	Type   string `json:"type" jsonschema:"timing (how long something takes), selector (where an element is), pattern (a flow of steps) or quirk (odd behaviour)"`
	Key    string `json:"key" jsonschema:"what the fact is about, e.g. search box"`
	Value  string `json:"value" jsonschema:"what is true of it, e.g. [data-testid=search]"`
}

// RecordSelectorInput is memory_record_selector's input.
type RecordSelectorInput struct {
	Domain   string `json:"domain" jsonschema:"the host (or URL) of the page"`
	Path     string `json:"path,omitempty" jsonschema:"scope it to this page path (or URL); empty for every page of the host"`
	Role     string `json:"role" jsonschema:"the element's ARIA role: button, link, textbox, ..."`
	Name     string `json:"name" jsonschema:"the element's accessible name"`
	Selector string `json:"selector" jsonschema:"the selector used to find it"`
	Failed   bool   `json:"failed,omitempty" jsonschema:"true when the selector did not find the element"`
}

// FindTrajectoryInput is memory_find_trajectory's input.
type FindTrajectoryInput struct {
	Goal string `json:"goal" jsonschema:"the task, e.g. add 2 padel rackets to the cart"`
	URL  string `json:"url" jsonschema:"the site (start URL or host): trajectories are matched within one site"`
	TraceInput
}

// QueryInput is memory_query's input.
type QueryInput struct {
	Kind   string `json:"kind" jsonschema:"what to list: lessons, facts, selectors, trajectories or runs"`
	Domain string `json:"domain,omitempty" jsonschema:"only what belongs to this host (and its parent domains or subdomains)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many (default 20, at most 1000)"`
}

// QueryResult is memory_query's structured answer: the list of Kind.
type QueryResult struct {
	Kind         string                  `json:"kind"`
	Lessons      []lesson.Lesson         `json:"lessons,omitempty"`
	Facts        []fact.Fact             `json:"facts,omitempty"`
	Selectors    []selector.Selector     `json:"selectors,omitempty"`
	Trajectories []trajectory.Trajectory `json:"trajectories,omitempty"`
	Runs         []run.Manifest          `json:"runs,omitempty"`
	// More says the list goes on past Limit.
	More bool `json:"more,omitempty"`
}

// queryKinds are memory_query's kinds.
var queryKinds = []any{"lessons", "facts", "selectors", "trajectories", "runs"}

// defaultQueryLimit is memory_query's limit when none is given: a list a
// model reads whole.
const defaultQueryLimit = 20

func (t *tools) add(s *sdk.Server) {
	addTool(s, &sdk.Tool{Name: "memory_tier1", Annotations: readOnly("Tier 1 lessons"),
		Description: "The lessons for every system prompt: general advice learned across all sites (tool fallbacks, best practices). Read once at the start of a task."}, nil,
		func(ctx context.Context, _ Tier1Input) (string, Lessons, error) {
			ls, err := t.c.Tier1(ctx)
			if err != nil {
				return "", Lessons{}, err
			}
			return renderLessons(lesson.Tier1Heading, ls, "Memory holds no Tier 1 lessons yet."), Lessons{Lessons: ls}, nil
		})
	addTool(s, &sdk.Tool{Name: "memory_recall_error", Annotations: readOnly("Tips for a failed command"),
		Description: "Tips from earlier runs for a command that just failed: lessons matching the command and its error (and the site's, with domain). Call it after a failure, before retrying."}, nil,
		func(ctx context.Context, in RecallErrorInput) (string, Lessons, error) {
			ls, err := t.c.RecallError(ctx, in.Command, in.Error, in.Domain)
			if err != nil {
				return "", Lessons{}, err
			}
			return renderLessons(lesson.ErrorTipsHeading, ls, "No lessons match this failure."), Lessons{Lessons: ls}, nil
		})
	addTool(s, &sdk.Tool{Name: "memory_recall_domain", Annotations: readOnly("Tips for a site"),
		Description: "Tips learned on a site (and its parent domains): call it when you enter a site."}, nil,
		func(ctx context.Context, in RecallDomainInput) (string, Lessons, error) {
			ls, err := t.c.RecallDomain(ctx, in.Host)
			if err != nil {
				return "", Lessons{}, err
			}
			return renderLessons(lesson.DomainTipsHeading, ls, "No lessons for this site."), Lessons{Lessons: ls}, nil
		})
	addTool(s, &sdk.Tool{Name: "memory_context", Annotations: readOnly("Memory for this step"),
		Description: "Everything memory holds for the page you are on and your goal, fitted into a token budget by priority: recent sessions on the site, tips for your last error, a reference trajectory of the same task, site tips, app knowledge (facts) and known selectors. Put the text in your working context at each step."}, nil,
		func(ctx context.Context, in ContextInput) (string, *memctx.Result, error) {
			r, err := t.c.Context(ctx, api.ContextRequest{Request: memctx.Request{URL: in.URL, Goal: in.Goal, Budget: in.Budget,
				LastCommand: in.LastCommand, LastError: in.LastError, Step: 1}, Weighted: in.Weighted, TraceTTLDays: in.TraceTTLDays})
			if err != nil {
				return "", nil, err
			}
			text := r.Prompt() // the memory block, then the tips for the last error
			if strings.TrimSpace(text) == "" {
				text = "Memory holds nothing for this page and goal yet."
			}
			return text, r, nil
		})
	addTool(s, &sdk.Tool{Name: "memory_record_lesson", Annotations: writes("Record a lesson"),
		Description: "Record a lesson for future runs: what to do when something fails. A lesson with the same failed command and error pattern gets one more use instead of a copy."}, nil,
		func(ctx context.Context, in RecordLessonInput) (string, *api.RecordedLesson, error) {
			cat, err := lesson.ParseCategory(in.Category)
			if err != nil {
				return "", nil, err
			}
			got, err := t.writer(ctx).RecordLesson(ctx, lesson.Lesson{Lesson: in.Lesson, Category: cat, FailedCommand: in.FailedCommand,
				ErrorPattern: in.ErrorPattern, Domain: in.Domain, Source: lesson.SourceLearned, TriggeredDomains: []string{}})
			if err != nil {
				return "", nil, err
			}
			return renderRecorded(got), got, nil
		})
	addTool(s, &sdk.Tool{Name: "memory_learn", Annotations: writes("Learn from an action log"),
		Description: "Learn lessons from a finished run's action log: every step that failed and was followed by a different command that succeeded becomes an error_recovery lesson (or one more use of the lesson that covers it)."}, nil,
		func(ctx context.Context, in LearnInput) (string, Learned, error) {
			if in.Lines == nil { // null or absent; an empty log is [] and learns nothing
				return "", Learned{}, engine.Invalid("memory_learn", "lines is required: the run's action log, an array of strings, one JSON object each")
			}
			ls, err := t.writer(ctx).Learn(ctx, in.Domain, []byte(strings.Join(in.Lines, "\n")))
			if err != nil {
				return "", Learned{}, err
			}
			return renderLearned(ls), Learned{Learned: ls}, nil
		})
	addTool(s, &sdk.Tool{Name: "memory_observe_fact", Annotations: writes("Observe a fact"),
		Description: "Record one sighting of a fact about a site (a timing, where an element is, a flow, a quirk). Seeing it again raises its confidence; a different value for the same key lowers the old one's."}, nil,
		func(ctx context.Context, in ObserveFactInput) (string, *fact.Outcome, error) {
			out, err := t.writer(ctx).ObserveFact(ctx, api.ObserveFact{Domain: in.Domain, Type: fact.Type(in.Type), Key: in.Key, Value: in.Value})
			if err != nil {
				return "", nil, err
			}
			return renderOutcome(out), out, nil
		})
	addTool(s, &sdk.Tool{Name: "memory_record_selector", Annotations: writes("Record a selector"),
		Description: "Record that a selector found an element (identified by its role and accessible name), or with failed that it did not. Selectors are ranked by successes minus twice the failures."}, nil,
		func(ctx context.Context, in RecordSelectorInput) (string, *selector.Selector, error) {
			out, err := t.writer(ctx).RecordSelector(ctx, api.SelectorObservation{Domain: in.Domain, Path: in.Path, Role: in.Role,
				Name: in.Name, Selector: in.Selector, Failed: in.Failed})
			if err != nil {
				return "", nil, err
			}
			return renderSelector(out), out, nil
		})
	addTool(s, &sdk.Tool{Name: "memory_find_trajectory", Annotations: readOnly("Find a past run of this task"),
		Description: "The recorded successful run most like your goal on this site, with its steps rewritten for your goal's values (numbers, quoted names): follow them instead of exploring. Says so when none is close enough. By default the closest goal wins; weighted also favours recent, fast, verified runs, and trace_ttl_days leaves out older ones."}, nil,
		func(ctx context.Context, in FindTrajectoryInput) (string, *api.TrajectoryMatch, error) {
			m, err := t.c.MatchTrajectory(ctx, api.MatchRequest{Domain: in.URL, Goal: in.Goal, Weighted: in.Weighted, TraceTTLDays: in.TraceTTLDays})
			if err != nil {
				return "", nil, err
			}
			return renderMatch(m), m, nil
		})
	addTool(s, &sdk.Tool{Name: "memory_query", Annotations: readOnly("List what memory holds"),
		Description: "List what memory holds, most useful first: lessons (with tier, uses, provenance), facts (with confidence), selectors (with successes/failures), trajectories (recorded successful runs) or runs (the run registry, newest first); optionally only a domain's."},
		func(in *jsonschema.Schema) { in.Properties["kind"].Enum = queryKinds },
		t.query)
}

func (t *tools) query(ctx context.Context, in QueryInput) (string, *QueryResult, error) {
	limit := in.Limit
	if limit == 0 {
		limit = defaultQueryLimit
	}
	n, err := listing.Request{Limit: limit}.Size()
	if err != nil {
		return "", nil, err
	}
	out := &QueryResult{Kind: in.Kind}
	switch in.Kind {
	case "lessons":
		p, err := t.c.Lessons(ctx, api.LessonFilter{Domain: in.Domain, Limit: n})
		if err != nil {
			return "", nil, err
		}
		out.Lessons, out.More = p.Lessons, p.Next != ""
	case "runs":
		p, err := t.c.Runs(ctx, run.Filter{Domain: in.Domain}, listing.Request{Limit: n})
		if err != nil {
			return "", nil, err
		}
		out.Runs, out.More = p.Runs, p.Next != ""
	case "facts":
		l, err := t.c.Facts(ctx, in.Domain, false)
		if err != nil {
			return "", nil, err
		}
		out.Facts, out.More = cut(l.Facts, n)
	case "selectors":
		l, err := t.c.Selectors(ctx, api.SelectorFilter{Domain: in.Domain})
		if err != nil {
			return "", nil, err
		}
		out.Selectors, out.More = cut(l.Selectors, n)
	case "trajectories":
		l, err := t.c.Trajectories(ctx, in.Domain)
		if err != nil {
			return "", nil, err
		}
		out.Trajectories, out.More = cut(l.Trajectories, n)
	default:
		// The schema's enum refuses other kinds first; kept for a host
		// that skips validation.
		return "", nil, engine.Invalidf("query", "unknown kind %q (want lessons, facts, selectors, trajectories or runs)", in.Kind)
	}
	return renderQuery(out), out, nil
}

// cut keeps the first n of s, and says whether it cut any.
func cut[T any](s []T, n int) ([]T, bool) {
	if len(s) > n {
		return s[:n], true
	}
	return s, false
}

// MaxBody is the largest request body Handler reads (the SDK's limit).
const MaxBody = sdk.DefaultMaxRequestBodyBytes

// Handler serves MCP over streamable HTTP, stateless: every POST is one
// exchange answered with JSON, and there is no session or long-lived
// event stream to hold a server's shutdown open. A caller mounts it behind
// its own authentication (engine serve: the bearer token on TCP).
func Handler(c *api.Client, opts Options) http.Handler {
	s := New(c, opts)
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}
