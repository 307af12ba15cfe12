package history

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
)

// Words pairs each removal with the addition that replaces it and keeps
// the words both texts share, in order.
func TestWords(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"", "", ""},
		{"same text", "same text", "same text"},
		{"", "new words", "{+new words+}"},
		{"old words", "", "[-old words-]"},
		{"Dismiss the cookie banner before clicking Search",
			"Close the cookie banner (the X, top right) before clicking Search",
			"[-Dismiss-] {+Close+} the cookie banner {+(the X, top right)+} before clicking Search"},
		{"a b c d", "a c d e", "a [-b-] c d {+e+}"},
		{"click  the\tbutton\n", "click the link", "click the [-button-] {+link+}"},
		{"x y", "y x", "[-x-] y {+x+}"},
		{"a b a b", "b a b a", "[-a-] b a b {+a+}"},
	} {
		if got := FormatWords(Words(c.a, c.b)); got != c.want {
			t.Errorf("Words(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

// Whatever the texts, keeping the kept and added words gives the new text
// and keeping the kept and removed ones the old: the diff loses nothing.
func TestWordsRebuildsBothTexts(t *testing.T) {
	texts := []string{"", "a", "a b c", "c b a", "the cookie banner hides Search", "Search hides the banner", "a a a b b", "b a b a b"}
	for _, a := range texts {
		for _, b := range texts {
			var old, nw []string
			for _, o := range Words(a, b) {
				if o.Kind != '+' {
					old = append(old, o.Words...)
				}
				if o.Kind != '-' {
					nw = append(nw, o.Words...)
				}
			}
			if strings.Join(old, " ") != strings.Join(strings.Fields(a), " ") || strings.Join(nw, " ") != strings.Join(strings.Fields(b), " ") {
				t.Errorf("Words(%q, %q) rebuilds %q and %q", a, b, old, nw)
			}
		}
	}
}

// Two texts too large for the LCS table are one removal and one addition
// between their common head and tail.
func TestWordsTooLarge(t *testing.T) {
	a := "head " + strings.Repeat("x ", 3000) + "tail"
	b := "head " + strings.Repeat("y ", 3000) + "tail"
	ops := Words(a, b)
	if len(ops) != 4 || ops[0].Kind != '=' || ops[1].Kind != '-' || len(ops[1].Words) != 3000 || ops[2].Kind != '+' || ops[3].Kind != '=' {
		t.Fatalf("ops: %d runs", len(ops))
	}
}

// Diff lists only the fields that differ, in the newer record's order,
// then those only the older has; an absent side is all additions (or all
// removals).
func TestDiff(t *testing.T) {
	older := []byte(`{"lesson":"Dismiss the banner","use_count":0,"tags":["a"],"gone":"x"}`)
	newer := []byte(`{"use_count":1,"lesson":"Close the banner","tags":["a"],"new":{"k": 1}}`)
	ds, err := Diff(older, newer)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, d.Field+": "+d.Text)
	}
	want := []string{"use_count: [-0-] {+1+}", "lesson: [-Dismiss-] {+Close+} the banner", `new: {+{"k":1}+}`, "gone: [-x-]"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Diff = %q, want %q", got, want)
	}
	if ds, err := Diff(Absent, []byte(`{"a":"b c"}`)); err != nil || len(ds) != 1 || ds[0].Text != "{+b c+}" {
		t.Fatalf("Diff from absent = %+v, %v", ds, err)
	}
	if ds, err := Diff([]byte(`{"a":"b"}`), nil); err != nil || len(ds) != 1 || ds[0].Text != "[-b-]" {
		t.Fatalf("Diff to absent = %+v, %v", ds, err)
	}
	if ds, err := Diff(newer, newer); err != nil || len(ds) != 0 {
		t.Fatalf("Diff of equal records = %+v, %v", ds, err)
	}
	if _, err := Diff([]byte(`[1]`), newer); err == nil || !strings.Contains(err.Error(), "older version: damaged record: not a JSON object") {
		t.Fatalf("Diff of an array: %v", err)
	}
}

// Chain labels each version with the change the next older one records,
// the record in force with the newest change, and version 0 with its
// creation as the record says; a version whose maker fell out of the
// kept versions, and the absence before an import, have none.
func TestChain(t *testing.T) {
	t0 := time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)
	api, manual := engine.Provenance{Source: engine.SourceAPI}, engine.Provenance{Source: engine.SourceManual}
	rec := func(s string) json.RawMessage { return json.RawMessage(s) }
	v0 := Entry{Version: 0, At: t0.Add(time.Hour), By: api, Op: OpUse, Record: rec(`{"text":"a","provenance":{"source":"manual"},"created_at":"2026-03-11"}`)}
	v1 := Entry{Version: 1, At: t0.Add(2 * time.Hour), By: manual, Op: OpEdit, Record: rec(`{"text":"a","use_count":1}`)}

	cur, vs := Chain([]Entry{v1, v0}, []byte(`{"text":"b"}`))
	if string(cur.Record) != `{"text":"b"}` || *cur.Made != (Made{Op: OpEdit, At: v1.At, By: manual}) {
		t.Fatalf("current = %s %+v", cur.Record, cur.Made)
	}
	if len(vs) != 2 || vs[0].Entry.Version != 1 || *vs[0].Made != (Made{Op: OpUse, At: v0.At, By: api}) {
		t.Fatalf("version 1 = %+v", vs[0])
	}
	if *vs[1].Made != (Made{Op: OpCreate, At: time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC), By: manual}) {
		t.Fatalf("version 0 made by %+v", vs[1].Made)
	}

	// The oldest kept is version 1: what made it is gone. Removed: null.
	cur, vs = Chain([]Entry{{Version: 2, Op: OpRetract, By: manual, At: t0}, v1}, nil)
	if string(cur.Record) != "null" || cur.Made.Op != OpRetract || vs[1].Made != nil || vs[0].Made.Op != OpEdit {
		t.Fatalf("retracted: current %s %+v, versions %+v", cur.Record, cur.Made, vs)
	}
	// An import created it: the absence has no maker, the import made the next.
	cur, vs = Chain([]Entry{{Version: 0, Op: OpImport, Record: rec("null")}}, []byte(`{"first_seen":"2026-03-12T10:00:00Z"}`))
	if cur.Made.Op != OpImport || vs[0].Made != nil {
		t.Fatalf("imported: current %+v, version 0 %+v", cur.Made, vs[0].Made)
	}
	// No versions: the record in force was made by its creation.
	cur, vs = Chain(nil, []byte(`{"first_seen":"2026-03-12T10:00:00Z","provenance":{"source":"api"}}`))
	if len(vs) != 0 || *cur.Made != (Made{Op: OpCreate, At: t0, By: api}) {
		t.Fatalf("no versions: current %+v", cur.Made)
	}
	// The provenance's time is the creation's when the record has one.
	cur, _ = Chain(nil, []byte(`{"created_at":"2026-03-11","provenance":{"source":"manual","at":"2026-03-12T10:00:00Z"}}`))
	if *cur.Made != (Made{Op: OpCreate, At: t0, By: engine.Provenance{Source: engine.SourceManual, At: t0}}) {
		t.Fatalf("created with a provenance time: %+v", cur.Made)
	}
	b, err := json.Marshal(vs)
	if err != nil || string(b) != "[]" {
		t.Fatalf("no versions encode as %s, %v", b, err)
	}
}
