package api_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// A fact, a selector and a trajectory retracted leave every list and the
// context, are listed as retracted with the reason, and come back, as
// they were, on revert.
func TestRetractEveryKind(t *testing.T) {
	ctx := context.Background()
	m := open(t)
	base := api.Local(api.Handler(m, api.Options{}), api.ClientOptions{})
	defer base.Close()
	c := base.WithProvenance(engine.Provenance{Source: engine.SourceManual})

	shadow := fact.Observation{Domain: "example.com", Type: fact.Quirk, Key: "shadow-dom", Value: "uses shadow DOM for modals"}
	search := selector.Observation{Domain: "example.com", Role: "button", Name: "Search", Selector: "[data-testid=search]"}
	rackets := trajectory.Trajectory{Domain: "example.com", Goal: "search padel rackets",
		Steps: []trajectory.Step{{Action: "type", Role: "textbox", Name: "Search", Selector: "#q", Value: "padel rackets"}, {Action: "click", Role: "button", Name: "Go"}}}
	writes(t, m, "run_1", []fact.Observation{shadow, shadow, shadow}, []selector.Observation{search, search}, []trajectory.Trajectory{rackets})

	ids := func() map[string]bool {
		t.Helper()
		out := map[string]bool{}
		fs, err := c.Facts(ctx, "example.com", false)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs.Facts {
			out[fact.IDOf(f)] = true
		}
		ss, err := c.Selectors(ctx, api.SelectorFilter{Domain: "example.com"})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss.Selectors {
			out[selector.IDOf(s)] = true
		}
		ts, err := c.Trajectories(ctx, "example.com")
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range ts.Trajectories {
			out[tr.ID] = true
		}
		return out
	}
	prompt := func() string {
		t.Helper()
		r, err := c.Context(ctx, api.ContextRequest{Request: memctx.Request{URL: "https://example.com/", Goal: "search padel rackets", Step: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Text
	}
	before := ids()
	if len(before) != 3 {
		t.Fatalf("listed before: %v", before)
	}
	shown := []string{"shadow DOM", "[data-testid=search]", "padel rackets"}
	text := prompt()
	for _, s := range shown {
		if !strings.Contains(text, s) {
			t.Fatalf("context before retract lacks %q:\n%s", s, text)
		}
	}

	for id := range before {
		rt, err := c.Retract(ctx, id, "wrong for this site")
		if err != nil || rt.ID != id || rt.Reason != "wrong for this site" || rt.By.Source != engine.SourceManual || len(rt.Record) == 0 {
			t.Fatalf("retract %s: %+v, %v", id, rt, err)
		}
	}
	if now := ids(); len(now) != 0 {
		t.Fatalf("listed after retract: %v", now)
	}
	text = prompt()
	for _, s := range shown {
		if strings.Contains(text, s) {
			t.Fatalf("context after retract shows %q:\n%s", s, text)
		}
	}
	rs, err := c.Retracted(ctx)
	if err != nil || len(rs.Facts) != 1 || len(rs.Selectors) != 1 || len(rs.Trajectories) != 1 || len(rs.Lessons) != 0 {
		t.Fatalf("retracted: %+v, %v", rs, err)
	}
	for id := range before {
		if _, err := c.Retract(ctx, id, "again"); !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("retract of a retracted %s: %v", id, err)
		}
		h, err := c.History(ctx, id)
		if err != nil || len(h.Versions) == 0 || h.Versions[0].Op != "retract" {
			t.Fatalf("history of retracted %s: %+v, %v", id, h, err)
		}
	}
	if _, err := c.Retract(ctx, "fact_0000000000000000", "x"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("retract of an unknown fact: %v", err)
	}
	if _, err := c.Retract(ctx, rs.Facts[0].ID, " "); !engine.IsInvalid(err) {
		t.Fatalf("retract without a reason: %v", err)
	}

	for id := range before {
		if _, err := c.Revert(ctx, id, -1); err != nil {
			t.Fatalf("revert %s: %v", id, err)
		}
	}
	if now := ids(); len(now) != 3 {
		t.Fatalf("listed after revert: %v, want %v", now, before)
	}
	if rs, err := c.Retracted(ctx); err != nil || len(rs.Facts)+len(rs.Selectors)+len(rs.Trajectories) != 0 {
		t.Fatalf("retracted after revert: %+v, %v", rs, err)
	}
	text = prompt()
	for _, s := range shown {
		if !strings.Contains(text, s) {
			t.Fatalf("context after revert lacks %q:\n%s", s, text)
		}
	}
}
