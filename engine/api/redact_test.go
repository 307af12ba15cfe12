package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/archive"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/plan"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/session"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/engine/trust/redact"
)

// The raw values the redaction tests write; none may be stored.
const (
	rawEmail    = "alice.secret@example.com" // the site's own: the screen lets it be
	rawJWT      = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	rawCard     = "4111 1111 1111 1111"
	rawPassword = "hunter2xyz"
	// rawGoalPassword is a password in a goal's plain words (goalText).
	rawGoalPassword = "NAVgoalF66"
	// canary is stored as it is: finding it in the data dir's files shows
	// the byte search sees what the stores write.
	canary = "canary-zebra-7q"
)

var rawValues = []string{rawEmail, rawJWT, rawCard, "4111111111111111", rawPassword, rawGoalPassword}

// goalText is the goal of the trajectory, session, run and plan written:
// an email and a password in plain words.
const goalText = "log in as " + rawEmail + " with password " + rawGoalPassword

// secretText holds every raw value; redactedText is what is stored.
var (
	secretText   = canary + ": token " + rawJWT + ", card " + rawCard + ", password=" + rawPassword + ", write to " + rawEmail
	redactedText = canary + ": token [redacted], card [redacted], password=[redacted], write to [email]"
)

const redactHost = "shop.example.com"

// writeSecrets writes a record of every kind through c, each with
// secretText in its text fields.
func writeSecrets(t *testing.T, c *api.Client) {
	t.Helper()
	ctx := context.Background()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err := c.RecordLesson(ctx, lesson.Lesson{Lesson: secretText, Category: lesson.SiteSpecific, Domain: redactHost})
	must("lesson", err)
	_, err = c.SetFact(ctx, fact.Fact{Domain: redactHost, Type: fact.Quirk, Key: "login " + rawEmail, Value: secretText, Confidence: 0.9})
	must("fact", err)
	_, err = c.RecordSelector(ctx, api.SelectorObservation{Domain: redactHost, Role: "textbox", Name: "Notes " + rawEmail, Selector: "#notes"})
	must("selector", err)
	_, err = c.RecordTrajectory(ctx, trajectory.Trajectory{Domain: redactHost, Goal: goalText, Steps: []trajectory.Step{
		{Action: "type", Role: "textbox", Name: "Notes", Selector: "#notes", Value: secretText, URL: "https://" + redactHost + "/login?token=" + rawJWT},
		{Action: "click", Role: "button", Name: "Log in", Selector: "#login"},
	}})
	must("trajectory", err)
	_, err = c.RecordSession(ctx, session.Session{Domain: redactHost, Goal: goalText, Outcome: secretText, Success: true,
		FinalURL: "https://" + redactHost + "/account?session=" + rawPassword})
	must("session", err)
	_, err = c.CreateRun(ctx, api.CreateRun{RunID: "run-redact-1", Goal: goalText, StartURL: "https://" + redactHost + "/"})
	must("run", err)
	out, _ := json.Marshal(map[string]string{"typed": secretText})
	_, err = c.AddIteration(ctx, "run-redact-1", plan.Iteration{N: 1, Planner: plan.Output{UserTask: goalText,
		CurrentState: secretText, ProposedActions: []string{"type " + rawCard}},
		Tools: []plan.ToolExecution{{Tool: "type", OK: true, Output: out}, {Tool: "click", Error: "no element " + rawEmail}}})
	must("plan", err)
}

// readAll reads back every record writeSecrets wrote, as JSON.
func readAll(t *testing.T, c *api.Client) string {
	t.Helper()
	ctx := context.Background()
	var all []any
	add := func(v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, v)
	}
	add(c.RecallDomain(ctx, redactHost))
	add(c.Facts(ctx, redactHost, false))
	add(c.Selectors(ctx, api.SelectorFilter{Domain: redactHost}))
	add(c.Trajectories(ctx, redactHost))
	add(c.Sessions(ctx, session.Filter{}))
	add(c.Run(ctx, "run-redact-1"))
	add(c.Plan(ctx, "run-redact-1", 0))
	b, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// filesHold returns which of values the files under dir hold.
func filesHold(t *testing.T, dir string, values ...string) []string {
	t.Helper()
	found := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, v := range values {
			if bytes.Contains(b, []byte(v)) {
				found[v] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range values {
		if found[v] {
			out = append(out, v)
		}
	}
	return out
}

// TestWritesAreRedacted writes a lesson, fact, selector, trajectory,
// session, run and plan holding an email, a JWT, a card number and a
// password over the API: they come back redacted, and after Close no file
// of the data dir holds a raw value.
func TestWritesAreRedacted(t *testing.T) {
	dir := t.TempDir()
	m, err := memory.Open(context.Background(), dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := api.Local(api.Handler(m, api.Options{}), api.ClientOptions{})
	writeSecrets(t, c.Client)
	got := readAll(t, c.Client)
	for _, v := range rawValues {
		if strings.Contains(got, v) {
			t.Errorf("read back %q", v)
		}
	}
	for _, want := range []string{redactedText, "login [email]", "Notes [email]", "token=[redacted]", "session=[redacted]", `"type [redacted]"`,
		`{\"typed\":\"` + redactedText + `\"}`, "no element [email]", "#notes", redactHost} {
		if !strings.Contains(got, want) {
			t.Errorf("read back no %q in %s", want, got)
		}
	}
	c.Close()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if found := filesHold(t, dir, canary); len(found) == 0 {
		t.Fatal("the data dir's files do not hold the canary: the byte search sees nothing")
	}
	if found := filesHold(t, dir, rawValues...); len(found) > 0 {
		t.Errorf("the data dir's files hold %q", found)
	}
}

func TestKeepContacts(t *testing.T) {
	c := api.Local(api.Handler(open(t), api.Options{Redact: redact.Options{KeepContacts: true}}), api.ClientOptions{})
	t.Cleanup(func() { c.Close() })
	r, err := c.RecordLesson(context.Background(), lesson.Lesson{Lesson: secretText, Category: lesson.SiteSpecific, Domain: redactHost})
	if err != nil {
		t.Fatal(err)
	}
	want := canary + ": token [redacted], card [redacted], password=[redacted], write to " + rawEmail
	if r.Lesson.Lesson != want {
		t.Errorf("KeepContacts: %q, want %q", r.Lesson.Lesson, want)
	}
}

// TestLearnRedacts: lessons learned from an action log quote its commands
// and errors; the log's secrets are gone before learning.
func TestLearnRedacts(t *testing.T) {
	c := api.Local(api.Handler(open(t), api.Options{}), api.ClientOptions{})
	t.Cleanup(func() { c.Close() })
	log := `{"step":1,"action":"fill","ref":"e3","value":"x","ok":false,"error":"element is not an input (password=` + rawPassword + ` for ` + rawEmail + `)","url":"https://` + redactHost + `/login?token=abc123","origin":"browser"}
{"step":2,"action":"back","ok":true,"url":"https://` + redactHost + `/login?token=abc123"}
`
	learned, err := c.Learn(context.Background(), redactHost, []byte(log))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := c.RecallDomain(context.Background(), redactHost)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal([]any{learned, ls})
	for _, v := range []string{rawEmail, rawPassword, "abc123"} {
		if strings.Contains(string(b), v) {
			t.Errorf("learned %q: %s", v, b)
		}
	}
	if len(ls) == 0 {
		t.Errorf("nothing learned from the log (redaction must not stop learning): %s", b)
	}
}

// TestImportRedacts: an import file's secrets are stored redacted, in the
// data dir's files too.
func TestImportRedacts(t *testing.T) {
	dir := t.TempDir()
	m, err := memory.Open(context.Background(), dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	doc := archive.Document{Format: archive.Format, Version: archive.Version, ExportedAt: now,
		Lessons:  []lesson.Lesson{{ID: "l1", Lesson: secretText, Category: lesson.SiteSpecific, Domain: redactHost, CreatedAt: now.Format(time.DateOnly), LastUsed: now.Format(time.DateOnly), Source: lesson.Source("learned"), TriggeredDomains: []string{}}},
		Facts:    []fact.Fact{{Domain: redactHost, Type: fact.Quirk, Key: "k", Value: secretText, Confidence: 1, Sources: 1, FirstSeen: now, LastSeen: now}},
		Sessions: []session.Session{{ID: "s1", Domain: redactHost, Goal: "g", Outcome: secretText, Success: true, Timestamp: now}},
	}
	body, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	c := api.Local(api.Handler(m, api.Options{}), api.ClientOptions{})
	if _, err := c.Import(context.Background(), body, "secrets.json", false); err != nil {
		t.Fatal(err)
	}
	// Read back through the stores' routes, not an export (which redacts
	// on its own).
	ls, err := c.RecallDomain(context.Background(), redactHost)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := c.Facts(context.Background(), redactHost, false)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := c.Sessions(context.Background(), session.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || ls[0].Lesson != redactedText || len(fs.Facts) != 1 || fs.Facts[0].Value != redactedText ||
		len(ss) != 1 || ss[0].Outcome != redactedText {
		t.Errorf("imported: %+v %+v %+v", ls, fs.Facts, ss)
	}
	c.Close()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if found := filesHold(t, dir, canary); len(found) == 0 {
		t.Fatal("the data dir's files do not hold the canary")
	}
	if found := filesHold(t, dir, rawValues...); len(found) > 0 {
		t.Errorf("the data dir's files hold %q", found)
	}
}

// TestExportRedactsOldRecords: records stored straight through the stores
// (as versions before redaction did) come out of an export redacted.
func TestExportRedactsOldRecords(t *testing.T) {
	m := open(t)
	ctx := context.Background()
	if _, _, err := m.Lessons.Record(ctx, lesson.Lesson{Lesson: secretText, Category: lesson.SiteSpecific, Domain: redactHost}, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Facts.Put(ctx, fact.Fact{Domain: redactHost, Type: fact.Quirk, Key: "k", Value: secretText}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Selectors.Record(ctx, selector.Observation{Domain: redactHost, Role: "textbox", Name: "Notes " + rawEmail, Selector: "#notes"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Sessions.Record(ctx, session.Session{Domain: redactHost, Goal: goalText, Outcome: secretText, Success: true}); err != nil {
		t.Fatal(err)
	}
	c := api.Local(api.Handler(m, api.Options{}), api.ClientOptions{})
	t.Cleanup(func() { c.Close() })
	d, err := c.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d)
	for _, v := range rawValues {
		if strings.Contains(string(b), v) {
			t.Errorf("export holds %q", v)
		}
	}
	if !strings.Contains(string(b), redactedText) || !strings.Contains(string(b), "Notes [email]") {
		t.Errorf("export: %s", b)
	}
	// The stores still hold what they were given; only what leaves is
	// redacted.
	if ls, _ := m.Lessons.RecallDomain(ctx, redactHost); len(ls) != 1 || ls[0].Lesson != secretText {
		t.Errorf("store: %+v", ls)
	}
}
