package trajectory

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv/badger/badgertest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// FuzzGoalTemplate feeds goals and typed values to the goal reader and the
// template builder: parts are in order, inside the goal and not
// overlapping; a word is the goal's text; every part is a literal token or
// in exactly one slot, slots numbered {1}, {2}, ... in order. A trajectory
// recorded with the goal is found again by the same goal, with every
// parameter bound to the value it was recorded with.
func FuzzGoalTemplate(f *testing.F) {
	for _, s := range [][2]string{
		{"search padel rackets", "padel rackets"},
		{`find "blue shoes" under 49.90 and top 5`, "blue shoes"},
		{"don't buy the iPhone 15 Pro", "iPhone 15 Pro"},
		{"«Krieg und Frieden» für 1,000 €", "Frieden"},
		{"'a' ' ‘b’ “c” „d“ `e`", "a"},
		{"\"unclosed quote", ""},
		{"t-shirt 4.5 x", "t-shirt"},
		{"", ""},
	} {
		f.Add(s[0], s[1])
	}
	db := badgertest.Open(f)
	now := time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)
	st := New(db, Options{Now: func() time.Time { return now }})
	f.Fuzz(func(t *testing.T, goal, value string) {
		if !utf8.ValidString(goal) || !utf8.ValidString(value) {
			return // JSON and the CLI hand the engine valid UTF-8 only
		}
		parts := parseGoal(goal)
		end := 0
		for i, p := range parts {
			if p.start < end || p.end <= p.start || p.end > len(goal) {
				t.Fatalf("part %d %+v out of order or outside the goal (len %d)", i, p, len(goal))
			}
			end = p.end
			if p.kind != pQuoted && p.text != goal[p.start:p.end] {
				t.Fatalf("part %d text %q is not the goal's %q", i, p.text, goal[p.start:p.end])
			}
			if p.text == "" || p.norm == "" {
				t.Fatalf("empty part %d: %+v", i, p)
			}
		}
		tokens, params := templateOf(goal, []string{value})
		slots, words := 0, 0
		for _, tok := range tokens {
			if isSlotToken(tok) {
				slots++
				if tok != slotToken(slots) {
					t.Fatalf("slot %q out of order in %q", tok, tokens)
				}
				words += params[slots-1].Words
			} else {
				words++
			}
		}
		if slots != len(params) || words != len(parts) {
			t.Fatalf("template %q / params %+v do not cover the %d parts of %q", tokens, params, len(parts), goal)
		}

		kvtest.Wipe(t, db)
		ctx := context.Background()
		rec, err := st.Record(ctx, Trajectory{Domain: "shop.example.com", Goal: goal,
			Steps: []Step{{Action: "type", Role: "textbox", Name: "Search", Value: value}, {Action: "press", Value: "Enter"}}})
		if err != nil {
			if !engine.IsInvalid(err) {
				t.Fatalf("record refused with a non-InvalidError: %v", err)
			}
			return
		}
		m, err := st.Match(ctx, "www.shop.example.com", goal)
		if err != nil {
			t.Fatalf("match: %v", err)
		}
		if len(parts) == 0 {
			return
		}
		if m == nil || m.Trajectory.ID != rec.ID {
			t.Fatalf("goal %q (template %q) does not find its own trajectory: %+v", goal, rec.Template, m)
		}
		for _, b := range m.Bindings {
			if !strings.Contains(goal, b.Value) {
				t.Fatalf("binding %+v is not in the goal %q", b, goal)
			}
		}
	})
}
