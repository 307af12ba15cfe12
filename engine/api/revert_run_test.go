package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// records is memory's export without its history (and without the facts
// drop names): what memory holds now.
func records(t *testing.T, c *api.Client, drop string) []byte {
	t.Helper()
	d, err := c.Export(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d.History, d.ExportedAt = nil, time.Time{}
	d.Facts = slices.DeleteFunc(d.Facts, func(f fact.Fact) bool { return f.Key == drop })
	b, _ := json.MarshalIndent(d, "", "  ")
	return b
}

// writes makes one run's changes through the stores' own write paths.
func writes(t *testing.T, m *memory.Memory, run string, facts []fact.Observation, sels []selector.Observation, trajs []trajectory.Trajectory) {
	t.Helper()
	ctx := context.Background()
	r := m.WithProvenance(engine.Provenance{Source: engine.SourceLearned, Run: run})
	for _, o := range facts {
		if _, err := r.Facts.Observe(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range sels {
		if _, err := r.Selectors.Record(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, tr := range trajs {
		if _, err := r.Trajectories.Record(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
}

// revert --run undoes what one run did to facts, selectors and
// trajectories: what it changed goes back to before its first change,
// what it created is removed; a later run's changes on top of the run's
// go with them, the later run's own records stay.
func TestRevertRunEveryKind(t *testing.T) {
	ctx := context.Background()
	m := open(t)
	c := api.Local(api.Handler(m, api.Options{}), api.ClientOptions{})
	defer c.Close()

	shadow := fact.Observation{Domain: "example.com", Type: fact.Quirk, Key: "shadow-dom", Value: "uses shadow DOM for modals"}
	search := selector.Observation{Domain: "example.com", Role: "button", Name: "Search", Selector: "[data-testid=search]"}
	rackets := trajectory.Trajectory{Domain: "example.com", Goal: "search padel rackets",
		Steps: []trajectory.Step{{Action: "type", Role: "textbox", Name: "Search", Selector: "#q", Value: "padel rackets"}, {Action: "click", Role: "button", Name: "Go"}}}
	writes(t, m, "run_base", []fact.Observation{shadow}, []selector.Observation{search}, []trajectory.Trajectory{rackets})
	before := records(t, c.Client, "")

	checkout := fact.Observation{Domain: "example.com", Type: fact.Timing, Key: "checkout", Value: "3s"}
	help := selector.Observation{Domain: "example.com", Role: "link", Name: "Help", Selector: "a.help"}
	helpPage := trajectory.Trajectory{Domain: "example.com", Goal: "open the help page", Steps: []trajectory.Step{{Action: "click", Role: "link", Name: "Help"}}}
	again := rackets
	again.DurationMs = 4242
	writes(t, m, "run_bad", []fact.Observation{shadow, checkout}, []selector.Observation{search, help}, []trajectory.Trajectory{again, helpPage})
	// A later run changes the bad run's records and makes one of its own.
	later := fact.Observation{Domain: "example.com", Type: fact.Timing, Key: "search", Value: "1s"}
	writes(t, m, "run_later", []fact.Observation{shadow, checkout, later}, []selector.Observation{help}, nil)
	if bytes.Equal(records(t, c.Client, "search"), before) {
		t.Fatal("the runs changed nothing")
	}

	out, err := c.WithProvenance(engine.Provenance{Source: engine.SourceManual}).RevertRun(ctx, "run_bad")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		name string
		r    *api.Reverted
	}{{"facts", out.Facts}, {"selectors", out.Selectors}, {"trajectories", out.Trajectories}} {
		if k.r == nil || len(k.r.Restored) != 1 || len(k.r.Removed) != 1 {
			t.Fatalf("%s: %+v, want one restored and one removed", k.name, k.r)
		}
	}
	if restored, removed := out.Total(); restored != 3 || removed != 3 {
		t.Fatalf("total %d restored, %d removed", restored, removed)
	}
	if after := records(t, c.Client, "search"); !bytes.Equal(after, before) {
		t.Fatalf("after revert --run:\n%s\nwant\n%s", after, before)
	}
	fs, err := c.Facts(ctx, "example.com", false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(fs.Facts, func(f fact.Fact) bool { return f.Key == "search" }) {
		t.Fatalf("the later run's own fact went too: %+v", fs.Facts)
	}
	// The revert is kept as versions: the record it replaced is one.
	h, err := c.History(ctx, out.Facts.Restored[0])
	if err != nil || len(h.Versions) == 0 || h.Versions[0].Op != "revert" {
		t.Fatalf("history of the restored fact: %+v, %v", h, err)
	}
	// Reverting again changes nothing more: it names the same records (the
	// history still holds the run's versions) and restores the same states.
	if _, err := c.RevertRun(ctx, "run_bad"); err != nil {
		t.Fatal(err)
	}
	if after := records(t, c.Client, "search"); !bytes.Equal(after, before) {
		t.Fatalf("after a second revert --run:\n%s\nwant\n%s", after, before)
	}
}
