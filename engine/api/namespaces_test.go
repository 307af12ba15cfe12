package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/session"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// seen is everything a client's namespace shows of www.shop.example
// (recall tier 1, error and domain, context, each list, and the export),
// as one text to search.
func seen(t *testing.T, c *api.Client) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	add := func(what string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		j, _ := json.Marshal(v)
		fmt.Fprintf(&b, "%s: %s\n", what, j)
	}
	tier1, err := c.Tier1(ctx)
	add("tier1", tier1, err)
	rerr, err := c.RecallError(ctx, "click e3", "another element would receive the click", "www.shop.example")
	add("recall error", rerr, err)
	rdom, err := c.RecallDomain(ctx, "www.shop.example")
	add("recall domain", rdom, err)
	mc, err := c.Context(ctx, api.ContextRequest{Request: memctx.Request{URL: "https://www.shop.example/", Goal: "search padel rackets", Step: 1}})
	add("context", mc.Text, err)
	facts, err := c.Facts(ctx, "", false)
	add("facts", facts, err)
	sels, err := c.Selectors(ctx, api.SelectorFilter{})
	add("selectors", sels, err)
	trs, err := c.Trajectories(ctx, "")
	add("trajectories", trs, err)
	sess, err := c.Sessions(ctx, session.Filter{})
	add("sessions", sess, err)
	runs, err := c.Runs(ctx, run.Filter{}, listing.Request{})
	add("runs", runs, err)
	doc, err := c.Export(ctx)
	add("export", doc, err)
	return b.String()
}

// What namespace a records — a lesson, a fact, a selector, a trajectory, a
// session, a run — namespace b and the default never see (recall, context,
// lists, export); the per-site caches serve no namespace another's value;
// forget in a leaves b whole; an import into b lands in b only; a bad
// namespace is bad input.
func TestNamespacesAreIsolated(t *testing.T) {
	ctx := context.Background()
	m := open(t)
	c := api.Local(api.Handler(m, api.Options{}), api.ClientOptions{})
	defer c.Close()
	for _, ns := range []string{"a", "b"} {
		if _, err := c.CreateNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	a := c.WithNamespace("a").WithProvenance(engine.Provenance{Source: engine.SourceManual})
	b := c.WithNamespace("b")
	def := c.WithNamespace("-")

	must := func(what string, _ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	r1, err := a.RecordLesson(ctx, lesson.Lesson{Lesson: "Close the padel cookie banner first.", Category: lesson.SiteSpecific, Domain: "www.shop.example", FailedCommand: "click", ErrorPattern: "would receive the click"})
	must("lesson", r1, err)
	r2, err := a.RecordLesson(ctx, lesson.Lesson{Lesson: "Wait for the padel spinner.", Category: lesson.BestPractice})
	must("tier 1 lesson", r2, err)
	o, err := a.ObserveFact(ctx, api.ObserveFact{Domain: "www.shop.example", Type: fact.Quirk, Key: "banner", Value: "a padel banner covers Search"})
	must("fact", o, err)
	s, err := a.RecordSelector(ctx, api.SelectorObservation{Domain: "www.shop.example", Role: "searchbox", Name: "Search", Selector: "#padel-q"})
	must("selector", s, err)
	tr, err := a.RecordTrajectory(ctx, trajectory.Trajectory{Domain: "www.shop.example", Goal: "search padel rackets", Steps: searchSteps})
	must("trajectory", tr, err)
	ss, err := a.RecordSession(ctx, session.Session{Domain: "www.shop.example", Goal: "find padel", Outcome: "found the padel page", Success: true, FinalURL: "https://www.shop.example/padel"})
	must("session", ss, err)
	rn, err := a.CreateRun(ctx, api.CreateRun{RunID: "run-padel", Goal: "padel", StartURL: "https://www.shop.example/"})
	must("run", rn, err)

	inA := seen(t, a)
	for _, want := range []string{"padel cookie banner", "padel spinner", "a padel banner", "#padel-q", "search padel rackets", "found the padel page", "run-padel"} {
		if strings.Count(inA, want) < 2 { // at least a list and the export
			t.Errorf("namespace a does not show %q twice:\n%s", want, inA)
		}
	}
	for name, cl := range map[string]*api.Client{"b": b, "default": def, "no header": c.Client} {
		if got := seen(t, cl); strings.Contains(got, "padel") {
			t.Errorf("namespace %s sees a's memory:\n%s", name, got)
		}
	}

	// The fact and selector caches are per site, checked against a token
	// read in the namespace: b's own fact on the same site is never a's.
	o, err = b.ObserveFact(ctx, api.ObserveFact{Domain: "www.shop.example", Type: fact.Quirk, Key: "banner", Value: "a tennis banner"})
	must("fact in b", o, err)
	for range 2 {
		fa, err := a.Facts(ctx, "www.shop.example", false)
		must("facts in a", fa, err)
		fb, err := b.Facts(ctx, "www.shop.example", false)
		must("facts in b", fb, err)
		if len(fa.Facts) != 1 || fa.Facts[0].Value != "a padel banner covers Search" || len(fb.Facts) != 1 || fb.Facts[0].Value != "a tennis banner" {
			t.Fatalf("facts: a %+v, b %+v", fa.Facts, fb.Facts)
		}
	}

	// Export a, import into b: it lands in b, not in the default.
	doc, err := a.Export(ctx)
	must("export a", doc, err)
	body, _ := json.Marshal(doc)
	res, err := b.Import(ctx, body, "a.json", true)
	must("import into b", res, err)
	if got := seen(t, b); !strings.Contains(got, "padel cookie banner") || !strings.Contains(got, "#padel-q") {
		t.Errorf("after the import, b does not show a's memory:\n%s", got)
	}
	if got := seen(t, def); strings.Contains(got, "padel") {
		t.Errorf("the import into b reached the default:\n%s", got)
	}

	// Forget the site in a: b keeps its copy.
	sv, err := a.Forget(ctx, "www.shop.example", false)
	must("forget in a", sv, err)
	if sv.Lessons != 1 || sv.Facts != 1 {
		t.Errorf("forget in a: %+v", sv)
	}
	if got := seen(t, a); strings.Contains(got, "padel cookie banner") || strings.Contains(got, "#padel-q") {
		t.Errorf("a after forgetting the site:\n%s", got)
	}
	if got := seen(t, b); !strings.Contains(got, "padel cookie banner") || !strings.Contains(got, "#padel-q") || !strings.Contains(got, "a tennis banner") {
		t.Errorf("b after a forgot the site:\n%s", got)
	}

	// Every namespace is listed, the default first.
	ns, err := c.Namespaces(ctx)
	must("namespaces", ns, err)
	if len(ns) != 3 || ns[0].Name != "-" || ns[1].Name != "a" || ns[2].Name != "b" || ns[2].Sites != 1 || ns[1].Sites != 0 || ns[0].Sites != 0 || ns[0].Keys == 0 {
		t.Errorf("namespaces: %+v", ns)
	}

	// A name outside the rule is a 400 naming the rule.
	for _, bad := range []string{"A", "a/b", "ns", strings.Repeat("x", 64), "é"} {
		_, err := c.WithNamespace(bad).Tier1(ctx)
		if bad == "ns" {
			// A good name no one made: 404, read by the client as bad
			// input (the caller's typo), naming those that exist.
			if !engine.IsInvalid(err) || !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), `namespace "ns" does not exist (namespaces: -, a, b)`) {
				t.Errorf("namespace %q: %v", bad, err)
			}
			continue
		}
		if !engine.IsInvalid(err) || !strings.Contains(err.Error(), api.HeaderNamespace) || !strings.Contains(err.Error(), "lower-case letters") {
			t.Errorf("namespace %q: %v", bad, err)
		}
	}
	if resp := do(t, api.Handler(m, api.Options{}), http.MethodGet, "/v1/namespaces", "", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/namespaces: %d", resp.StatusCode)
	}
}
