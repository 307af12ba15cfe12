package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/runfiles"
)

// The resource URIs.
const (
	lessonsPrefix = "engine://lessons/" // engine://lessons/{domain}
	runsPrefix    = "engine://runs/"    // engine://runs/{run_id} and engine://runs/{run_id}/plan
	planSuffix    = "/plan"
)

// maxResourceLessons bounds a domain's lessons resource.
const maxResourceLessons = 1000

// maxTimelineSteps bounds a run's step timeline (a run's step limit is
// far below it).
const maxTimelineSteps = 5000

func (t *tools) addResources(s *sdk.Server) {
	s.AddResourceTemplate(&sdk.ResourceTemplate{Name: "domain-lessons", Title: "Lessons of a domain",
		URITemplate: lessonsPrefix + "{domain}", MIMEType: "text/markdown",
		Description: "Every lesson that applies on a domain (bound to it, a parent domain, or every site), Tier 1 first, with category, uses and provenance."},
		t.readLessons)
	s.AddResourceTemplate(&sdk.ResourceTemplate{Name: "run", Title: "A run: manifest and step timeline",
		URITemplate: runsPrefix + "{run_id}", MIMEType: "text/markdown",
		Description: "A run's manifest (goal, status, URLs, turns, outcome, lineage) and its step timeline: each action, its outcome, the lessons shown and the screenshot taken."},
		t.readRun)
	s.AddResourceTemplate(&sdk.ResourceTemplate{Name: "run-plan", Title: "A run's planner history",
		URITemplate: runsPrefix + "{run_id}" + planSuffix, MIMEType: "text/markdown",
		Description: "A planner run's iteration history as the planner sees it: the task, execution metrics and each iteration's plan and tool results."},
		t.readPlan)
}

// resourceErr maps an API error to the JSON-RPC error of a resource read,
// keeping the CLI's one-line message: an unknown id or a malformed URI is
// invalid params, the code MCP gives a resource that is not found.
func resourceErr(err error) error {
	if errors.Is(err, engine.ErrNotFound) || errors.Is(err, engine.ErrInvalid) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return err
}

func markdown(uri, text string) *sdk.ReadResourceResult {
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text}}}
}

func (t *tools) readLessons(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	host, _ := strings.CutPrefix(uri, lessonsPrefix)
	if host == "" || strings.Contains(host, "/") {
		return nil, resourceErr(engine.Invalid("resource", "want "+lessonsPrefix+"DOMAIN"))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Lessons on %s\n", host)
	n := 0
	more, err := t.c.EachLesson(ctx, api.LessonFilter{Domain: host}, maxResourceLessons, func(l lesson.Lesson) error {
		n++
		fmt.Fprintf(&b, "\n- **%s** (tier %d, %s%s; %d uses, %d helped; %s, created %s, last used %s): %s",
			l.ID, l.Tier(), l.Category, onDomain(l.Domain), l.UseCount, l.Helped, l.Source, l.CreatedAt, l.LastUsed, l.Lesson)
		return nil
	})
	if err != nil {
		return nil, resourceErr(err)
	}
	if n == 0 {
		b.WriteString("\nNo lessons apply on this domain.")
	}
	if more != "" {
		fmt.Fprintf(&b, "\n\n(only the first %d shown)", maxResourceLessons)
	}
	return markdown(uri, b.String()), nil
}

// runIDOf returns the run id of a run resource's URI (with suffix cut).
func runIDOf(uri, suffix string) (string, error) {
	id, _ := strings.CutPrefix(uri, runsPrefix)
	id, _ = strings.CutSuffix(id, suffix)
	return id, run.CheckID(id)
}

func (t *tools) readRun(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	if strings.HasSuffix(uri, planSuffix) {
		return t.readPlan(ctx, req)
	}
	id, err := runIDOf(uri, "")
	if err != nil {
		return nil, resourceErr(err)
	}
	m, err := t.c.Run(ctx, id)
	if err != nil {
		return nil, resourceErr(err)
	}
	var b strings.Builder
	renderManifest(&b, m)
	b.WriteString("\n## Steps\n")
	t.renderTimeline(ctx, &b, id)
	return markdown(uri, b.String()), nil
}

func renderManifest(b *strings.Builder, m *run.Manifest) {
	fmt.Fprintf(b, "# Run %s\n\n", m.RunID)
	field := func(name, v string) {
		if v != "" {
			fmt.Fprintf(b, "- %s: %s\n", name, v)
		}
	}
	field("goal", m.Goal)
	field("status", string(m.Status))
	field("domain", m.Domain)
	field("start URL", m.StartURL)
	field("current URL", m.CurrentURL)
	field("final URL", m.FinalURL)
	field("turns", fmt.Sprint(m.TurnCount))
	field("started", m.StartedAt.Format(time.RFC3339))
	if !m.CompletedAt.IsZero() {
		field("completed", m.CompletedAt.Format(time.RFC3339))
		field("duration", m.CompletedAt.Sub(m.StartedAt).Round(time.Millisecond).String())
	}
	field("summary", m.Summary)
	field("result", m.Result)
	field("reason", m.Reason)
	field("session", m.SessionID)
	field("parent run", m.ParentRunID)
	field("artifacts", strings.Join(m.ArtifactPaths, ", "))
}

// renderTimeline writes run id's steps from its actions.jsonl in the
// data dir's run folder (runfiles: found from the run id, never from the
// manifest's artifact paths, which any API caller may set).
func (t *tools) renderTimeline(ctx context.Context, b *strings.Builder, id string) {
	runsDir := t.runsDir
	if t.runsDirOf != nil {
		runsDir = t.runsDirOf(ctx)
	}
	if runsDir == "" {
		b.WriteString("\nThe step timeline is in the run's folder on the memory server's machine (this server reaches memory remotely).\n")
		return
	}
	dir, err := runfiles.Dir(runsDir, id)
	if err != nil {
		fmt.Fprintf(b, "\nNo step timeline: %v\n", err)
		return
	}
	steps, more, err := runfiles.Records(dir, maxTimelineSteps)
	if errors.Is(err, os.ErrNotExist) {
		b.WriteString("\nNo step timeline: the run left no action log (it was registered, not run by engine run).\n")
		return
	}
	for _, s := range steps {
		b.WriteString("\n")
		b.WriteString(renderTimelineStep(s))
	}
	switch {
	case err != nil:
		fmt.Fprintf(b, "\n(the action log could not be read past here: %v)\n", err)
	case more:
		fmt.Fprintf(b, "\n(only the first %d steps shown)\n", maxTimelineSteps)
	case len(steps) == 0:
		b.WriteString("\nNo steps yet.\n")
	}
}

func renderTimelineStep(s runfiles.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d. %s", s.Step, s.Action)
	if s.Role != "" || s.Name != "" {
		fmt.Fprintf(&b, " %s %q", s.Role, s.Name)
	} else if s.Ref != "" {
		fmt.Fprintf(&b, " %s", s.Ref)
	}
	if s.Value != "" {
		fmt.Fprintf(&b, " value %q", s.Value)
	}
	switch {
	case s.Rejected():
		b.WriteString(": rejected by the approver, not run")
	case s.OK:
		b.WriteString(": ok")
	default:
		b.WriteString(": FAILED")
		if s.Error != "" {
			fmt.Fprintf(&b, ": %s", s.Error)
		}
	}
	if s.ToolError != "" {
		fmt.Fprintf(&b, " (tool error: %s)", s.ToolError)
	}
	if s.Replayed {
		b.WriteString(" [replayed]")
	}
	if s.URL != "" {
		fmt.Fprintf(&b, "\n   on %s", s.URL)
	}
	if len(s.Lessons) > 0 {
		fmt.Fprintf(&b, "\n   lessons shown: %s", strings.Join(s.Lessons, ", "))
	}
	if s.Trajectory != "" {
		fmt.Fprintf(&b, "\n   reference trajectory: %s", s.Trajectory)
	}
	if s.Screenshot != "" {
		fmt.Fprintf(&b, "\n   screenshot: %s", s.Screenshot)
	}
	return b.String()
}

func (t *tools) readPlan(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	id, err := runIDOf(uri, planSuffix)
	if err != nil {
		return nil, resourceErr(err)
	}
	p, err := t.c.Plan(ctx, id, 0)
	if err != nil {
		return nil, resourceErr(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Planner history of run %s\n\n%s\n", p.RunID, p.Prompt)
	return markdown(uri, b.String()), nil
}
