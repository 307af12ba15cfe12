package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

func TestContextRoute(t *testing.T) {
	ctx := context.Background()
	c, events := local(t, march12)
	req := func(budget int) api.ContextRequest {
		return api.ContextRequest{Request: memctx.Request{URL: "https://www.shop.example/", Goal: "search tennis balls", Step: 3, Budget: budget}}
	}

	empty, err := c.Context(ctx, req(0))
	if err != nil || empty.Domain != "www.shop.example" || empty.Budget != memctx.DefaultBudget || empty.Text != "" || empty.Sections == nil || empty.Dropped == nil {
		t.Fatalf("nothing remembered: %+v, %v", empty, err)
	}

	if _, err := c.RecordTrajectory(ctx, trajectory.Trajectory{Domain: "www.shop.example", Goal: "search padel rackets", Steps: searchSteps}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RecordSelector(ctx, api.SelectorObservation{Domain: "www.shop.example", Role: "searchbox", Name: "Search", Selector: "#q"}); err != nil {
		t.Fatal(err)
	}
	*events = nil
	r, err := c.Context(ctx, req(0))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, s := range r.Sections {
		kept = append(kept, s.Name)
	}
	if !slices.Equal(kept, []string{memctx.Trajectory, memctx.Selectors}) || !strings.Contains(r.Text, memctx.TrajectoryHeading) || r.Tokens != memctx.Tokens(r.Text) {
		t.Fatalf("context: sections %v, text %q", kept, r.Text)
	}
	if r.Match == nil || r.Match.Steps[0].Value != "tennis balls" {
		t.Fatalf("context: the reference trajectory is not bound for the goal: %+v", r.Match)
	}
	n := names(*events)
	if !slices.Contains(n, trajectory.EventMatched) || !slices.Contains(n, selector.EventRecall) || n[len(n)-1] != memctx.EventBuilt {
		t.Fatalf("events: %v", n)
	}
	if step := (*events)[len(n)-1].Fields["step"]; step != json.Number("3") {
		t.Fatalf("context_built step = %v (%T), want 3", step, step)
	}

	tight, err := c.Context(ctx, req(20))
	if err != nil || len(tight.Dropped) == 0 || tight.Tokens > 20 || tight.Match != nil && !slices.ContainsFunc(tight.Sections, func(s memctx.Section) bool { return s.Name == memctx.Trajectory }) {
		t.Fatalf("a tight budget: %+v, %v", tight, err)
	}

	w := req(0)
	w.Weighted = true
	if wr, err := c.Context(ctx, w); err != nil || wr.Match == nil || wr.Match.Score == wr.Match.Similarity {
		t.Fatalf("weighted: %+v, %v; want the blended score", wr, err)
	}

	bad := req(0)
	bad.LastCommand = "click #a"
	if _, err := c.Context(ctx, bad); !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "last_command needs last_error") {
		t.Fatalf("last_command alone: %v; want bad input", err)
	}
	bad = req(0)
	bad.URL = "http://"
	if _, err := c.Context(ctx, bad); !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "has no host") {
		t.Fatalf("a url without host: %v; want bad input", err)
	}
}

func TestContextRouteOverHTTP(t *testing.T) {
	h := api.Handler(open(t), api.Options{})
	b := body(t, do(t, h, "GET", "/v1/context?url=shop.example&goal=x", "", ""))
	if !strings.Contains(b, `"sections":[]`) || !strings.Contains(b, `"dropped":[]`) || !strings.Contains(b, `"budget":2000`) {
		t.Fatalf("nothing remembered: %s", b)
	}
	wantProblem(t, do(t, h, "GET", "/v1/context?goal=x", "", ""), 400, "url")
	wantProblem(t, do(t, h, "GET", "/v1/context?url=shop.example&goal=x&budget=-5", "", ""), 400, "budget")
	wantProblem(t, do(t, h, "GET", "/v1/context?url=shop.example&goal=x&step=two", "", ""), 400, "step")
	wantProblem(t, do(t, h, "GET", "/v1/context?url=shop.example&goal=x&weighted=maybe", "", ""), 400, "weighted")
	wantProblem(t, do(t, h, "GET", "/v1/context?url=shop.example&goal=x&last_command=click", "", ""), 400, "last_command needs last_error")
}
