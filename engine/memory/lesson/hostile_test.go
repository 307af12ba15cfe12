package lesson

import (
	"context"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

// Regression tests for what the fuzz targets found (see fuzz_test.go).

// A lesson whose error_pattern held a NUL byte imported fine and then broke
// every recall for its verb ("damaged index entry"). It is refused now, and
// nothing is written.
func TestImportRefusesNULInErrorPattern(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ls, err := ReadFile(strings.NewReader(`{"version":1,"lessons":[
		{"lesson":"ok","category":"error_recovery","failed_command":"click","error_pattern":"fine"},
		{"lesson":"x","category":"error_recovery","failed_command":"fill","error_pattern":"a\u0000b"}]}`), "memory.json")
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.s.Prepare(ls, ImportOptions{KeepTrust: true})
	if !engine.IsInvalid(err) || !strings.Contains(err.Error(), "lessons[1]") || !strings.Contains(err.Error(), "error_pattern holds a control character (U+0000)") {
		t.Fatalf("Prepare = %v, want lessons[1]: error_pattern holds a control character", err)
	}
	if _, _, err := e.s.Record(ctx, Lesson{Lesson: "x", Category: ErrorRecovery, FailedCommand: "fi\x00ll"}, ""); !engine.IsInvalid(err) {
		t.Fatalf("Record with a NUL in failed_command = %v, want an InvalidError", err)
	}
	got, err := e.s.RecallError(ctx, "fill", "too many arguments: x", "")
	if err != nil || len(got) != 1 || got[0].ID != "leccc8f91d5" {
		t.Fatalf("recall after the refused import = %v, %v; want the fill seed", got, err)
	}
}

// A NUL byte (or a terminal colour code) in a learned error no longer ends
// up in the pattern: learning and every later recall work.
func TestLearnCleansControlCharacters(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	actions, err := ParseActionLog(strings.NewReader(
		`{"action":"click","ok":false,"error":"\u001b[31mElement is not\u0000 visible\u001b[0m: e5"}`+"\n"+
			`{"action":"press","value":"Escape","ok":true}`+"\n"+
			`{"action":"hover","ok":false,"error":"target page a\u0000b crashed"}`+"\n"+
			`{"action":"press","value":"a\u0000","ok":true}`+"\n"), "actions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	learned, err := e.s.Learn(ctx, actions, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(learned) != 2 || learned[0].Lesson.ErrorPattern != "element is not visible" ||
		learned[1].Lesson.ErrorPattern != "target page a b crashed" || learned[1].Lesson.Lesson != `If hover fails with "target page a b crashed", try press instead.` {
		t.Fatalf("learned %+v", learned)
	}
	// The raw error (NUL and colours included) finds what was learned from it.
	got, err := e.s.RecallError(ctx, "hover e2", "target page a\x00b crashed", "")
	if err != nil || len(got) == 0 || got[0].ID != learned[1].Lesson.ID {
		t.Fatalf("recall on the raw error = %+v, %v", got, err)
	}
	for _, c := range []struct{ cmd, err string }{{"click e5", "Element is not visible: e5"}, {"fill e1 x", "too many arguments: x"}} {
		if _, err := e.s.RecallError(ctx, c.cmd, c.err, ""); err != nil {
			t.Fatalf("recall %s after learning: %v", c.cmd, err)
		}
	}
}

// A command verb with a control character is a malformed log line.
func TestParseActionLogRefusesControlInVerb(t *testing.T) {
	_, err := ParseActionLog(strings.NewReader("\n"+`{"action":"fi\u0000ll","ok":false,"error":"x y z"}`), "a.jsonl")
	if err == nil || err.Error() != `a.jsonl:2: the command's verb holds a control character (U+0000)` {
		t.Fatalf("err = %v", err)
	}
}

// A failed_command given as a whole command line was filed under it and
// never recalled (recall looks up the verb). It is stored as the verb.
func TestFailedCommandStoredAsVerb(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	l := e.record(Lesson{Lesson: "Use JS click", Category: ErrorRecovery, FailedCommand: "npx playwright-cli Click e4", ErrorPattern: "zzz"}, "")
	if l.FailedCommand != "click" {
		t.Fatalf("failed_command = %q, want click", l.FailedCommand)
	}
	got, err := e.s.RecallError(ctx, "click e9", "nope", "")
	if err != nil || len(got) == 0 || got[0].ID != l.ID {
		t.Fatalf("recall = %+v, %v", got, err)
	}
}

// Lessons bound to an IPv6 host (from a URL with a port) were stored under
// "::1", which did not parse again: every later recall on that host failed.
func TestIPv6DomainRoundTrips(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	l := e.record(Lesson{Lesson: "Wait for the dev server", Category: SiteSpecific, Domain: "http://[::1]:8080/x"}, "")
	if l.Domain != "::1" {
		t.Fatalf("domain = %q", l.Domain)
	}
	for _, h := range []string{"::1", "[::1]:8080", "http://[0:0::1]/"} {
		got, err := e.s.RecallDomain(ctx, h)
		if err != nil || len(got) != 1 || got[0].ID != l.ID {
			t.Fatalf("RecallDomain(%q) = %+v, %v", h, got, err)
		}
	}
	prepared, err := e.s.Prepare([]Lesson{*l}, ImportOptions{KeepTrust: true})
	if err != nil || prepared[0].Domain != "::1" || prepared[0].ID != l.ID {
		t.Fatalf("re-import = %+v, %v", prepared, err)
	}
}

// Over-long fields, invalid UTF-8 and bad ids are refused with the field named.
func TestImportRefusesHostileFields(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		l    Lesson
		want string
	}{
		{Lesson{Lesson: "x", Category: ErrorRecovery, ErrorPattern: strings.Repeat("a", 501)}, "error_pattern is 501 characters long (at most 500)"},
		{Lesson{Lesson: "x\xff", Category: ErrorRecovery}, "the lesson text is not valid UTF-8"},
		{Lesson{Lesson: "x", Category: ErrorRecovery, FailedCommand: "fill\nx"}, "failed_command holds a control character (U+000A)"},
		{Lesson{ID: "l/../x", Lesson: "x", Category: ErrorRecovery}, `id "l/../x" may hold only letters, digits and _ - . :`},
		{Lesson{Lesson: "x", Category: ErrorRecovery, Domain: "-"}, `domain: "-" is not a valid host name`},
		{Lesson{Lesson: "x", Category: ErrorRecovery, Counts: engine.Counts{Helped: -1}}, "helped -1 is negative"},
		{Lesson{Lesson: "x", Category: ErrorRecovery, FailedCommand: "npx"}, `failed_command "npx" runs commands; give the command that failed`},
	} {
		_, err := e.s.Prepare([]Lesson{c.l}, ImportOptions{KeepTrust: true})
		if !engine.IsInvalid(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Prepare(%+v) = %v, want %q", c.l, err, c.want)
		}
	}
}

// A lone wrapper ("npx") failing is nothing to learn from; it used to make
// Learn fail half-way (the lesson it built was refused).
func TestLearnSkipsWrapperVerb(t *testing.T) {
	e := newEnv(t)
	learned, err := e.s.Learn(context.Background(), []Action{
		{Step: 1, Command: "npx", Error: "command not found anywhere"}, {Step: 2, Command: "click e1", OK: true}}, "")
	if err != nil || len(learned) != 0 {
		t.Fatalf("Learn = %+v, %v; want nothing learned and no error", learned, err)
	}
}
