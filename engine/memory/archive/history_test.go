package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// records is an export without its history: what memory holds now.
func records(t *testing.T, m *Archive) []byte {
	t.Helper()
	d, err := m.Export(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d.History = nil
	b, _ := json.MarshalIndent(d, "", "  ")
	return b
}

func TestExportCarriesHistory(t *testing.T) {
	ctx := context.Background()
	a := newEnv(t)
	a.populate(t)
	d, err := a.mem.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range d.History {
		kinds[e.Kind]++
	}
	if kinds["fact"] == 0 || kinds["selector"] == 0 {
		t.Fatalf("history by kind = %v: the confirmed fact and the reused selector kept no versions", kinds)
	}
	// An older file, without the section, still imports.
	out := exportJSON(t, a.mem)
	var m map[string]json.RawMessage
	json.Unmarshal(out, &m)
	delete(m, "history")
	old, _ := json.Marshal(m)
	od, err := ParseFile(old, "old.json")
	if err != nil {
		t.Fatal(err)
	}
	b := newEnv(t)
	b.now = a.now
	if _, err := b.mem.Import(ctx, od, "old.json"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(records(t, a.mem), records(t, b.mem)) {
		t.Fatal("a file without history imported other records")
	}
	// Streamed, the section is kept as well.
	c := newEnv(t)
	c.now = a.now
	if _, err := c.mem.ImportStream(ctx, bytes.NewReader(out), "export.json"); err != nil {
		t.Fatal(err)
	}
	if back := exportJSON(t, c.mem); !bytes.Equal(out, back) {
		t.Fatalf("export → streamed import → export differs:\n%s", back)
	}
}

func TestRevertImport(t *testing.T) {
	ctx := context.Background()
	a := newEnv(t)
	a.populate(t)
	before := records(t, a.mem)
	d, err := a.mem.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The file replaces one record of each kind and adds one of each.
	d.History = nil
	for i := range d.Facts {
		if d.Facts[i].Quarantine == "" {
			d.Facts[i].Confidence = 0.99
			break
		}
	}
	d.Facts = append(d.Facts, fact.Fact{Domain: "example.com", Type: fact.Timing, Key: "checkout", Value: "3s", Confidence: 0.8})
	d.Selectors[0].Successes += 5
	d.Selectors = append(d.Selectors, selector.Selector{Domain: "example.com", Role: "link", Name: "Help", Selector: "a.help", Successes: 1})
	d.Trajectories[0].DurationMs = 4242
	d.Trajectories = append(d.Trajectories, trajectory.Trajectory{Domain: "example.com", Goal: "open the help page", Steps: []trajectory.Step{{Action: "click", Role: "link", Name: "Help"}}})
	for i := range d.Lessons {
		if d.Lessons[i].Category == lesson.SiteSpecific {
			d.Lessons[i].UseCount += 3
		}
	}
	d.Lessons = append(d.Lessons, lesson.Lesson{Lesson: "Wait for the results list before clicking", Category: lesson.BestPractice})
	sha := strings.Repeat("ab", 32)
	if _, err := New(a.mem.Memory, Options{Trust: true, File: "changes.json", SHA256: sha}).Import(ctx, d, "changes.json"); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(records(t, a.mem), before) {
		t.Fatal("the import changed nothing")
	}
	r, err := RevertImport(ctx, a.mem.Memory, sha)
	if err != nil {
		t.Fatal(err)
	}
	restored, removed := r.Total()
	if restored != 4 || removed != 4 {
		t.Fatalf("restored %d, removed %d, want 4 and 4: %+v %+v %+v %+v", restored, removed, r.Lessons, r.Facts, r.Selectors, r.Trajectories)
	}
	if after := records(t, a.mem); !bytes.Equal(after, before) {
		t.Fatalf("after revert --import:\n%s\nwant\n%s", after, before)
	}
}
