package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/runfiles"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/engine/trust/redact"
	"github.com/engine-dev/engine/kv/badger"
)

// vault is a page with a field the browser marks secret (its name is no
// secret word: only the state says so) and an email field.
type vault struct {
	mu   sync.Mutex
	done bool
}

func (v *vault) Navigate(context.Context, string) error { return nil }
func (v *vault) Snapshot(context.Context) (*engine.Snapshot, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.done {
		return &engine.Snapshot{URL: "http://vault.test/done", Title: "Done", Tree: "done"}, nil
	}
	return &engine.Snapshot{URL: "http://vault.test/", Title: "Verify", Tree: "verify", Elements: []engine.Element{
		{Ref: "e1", Role: "textbox", Name: "Verification", States: []string{engine.StateSecret}},
		{Ref: "e2", Role: "textbox", Name: "Email"},
		{Ref: "e3", Role: "button", Name: "Continue"},
	}}, nil
}
func (v *vault) Act(_ context.Context, a engine.Action) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if a.Kind == engine.ActClick && a.Ref == "e3" {
		v.done = true
	}
	return nil
}
func (v *vault) Screenshot(context.Context) ([]byte, error) { return nil, nil }
func (v *vault) Close() error                               { return nil }

const (
	vaultCode  = "zq-amber-falcon-quill"
	vaultEmail = "bob.vance@example.com"
)

// Everything a run writes goes through its Redactor: a value typed into
// a field the browser marks secret, and an email address, reach no
// artifact, no event, no memory record (every file of the data dir,
// badger's included) and not the result, in step and planner mode.
func TestRunWritesNoSecret(t *testing.T) {
	step := func(_, msg string) (string, map[string]any) {
		switch {
		case strings.Contains(msg, "Title: Done"):
			return "finish", map[string]any{"answer": "code " + vaultCode + " sent to " + vaultEmail, "success": true}
		case strings.Contains(msg, "Last action: (none)"):
			return "type", map[string]any{"element": "Verification", "text": vaultCode}
		case strings.Contains(msg, "Last action: type"):
			return "fill", map[string]any{"element": "Email", "text": vaultEmail}
		}
		return "click", el("Continue")
	}
	planner := func(_, msg string) (string, map[string]any) {
		if strings.Contains(msg, "No iterations yet.") {
			return "plan", map[string]any{"step_by_step_reasoning": "type " + vaultCode + " then the address " + vaultEmail,
				"proposed_actions": []string{`type "Verification" "` + vaultCode + `"`, `fill "Email" "` + vaultEmail + `"`, `click "Continue"`}}
		}
		return "plan", map[string]any{"task_complete": true, "final_answer": "verified with " + vaultCode}
	}
	for _, c := range []struct {
		mode Mode
		p    policy
	}{{StepMode, step}, {PlannerMode, planner}} {
		t.Run(string(c.mode), func(t *testing.T) {
			dir := t.TempDir()
			seen, res := runFiles(t, dir, Config{Goal: "verify the account of " + vaultEmail, StartURL: "http://vault.test/", Browser: &vault{},
				Model: &fakeModel{p: c.p}, Mode: c.mode})
			if !res.Success {
				t.Fatalf("%+v", res)
			}
			for where, s := range seen {
				for _, v := range []string{vaultCode, vaultEmail, strings.ReplaceAll(vaultEmail, "@", "%40")} {
					if strings.Contains(s, v) {
						t.Errorf("%s holds %q", where, v)
					}
				}
			}
			if a := seen[filepath.Join(res.Dir, ActionsFile)]; !strings.Contains(a, `"value":"`+Redacted+`"`) {
				t.Errorf("actions.jsonl:\n%s", a)
			}
			// The steps that held them are steps to fill in by hand.
			db, err := badger.Open(context.Background(), filepath.Join(dir, "db"), badger.Options{GCInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			tr, err := trajectory.New(db, trajectory.Options{}).List(context.Background(), "vault.test")
			if err != nil || len(tr) != 1 {
				t.Fatalf("%v %v", tr, err)
			}
			for _, st := range tr[0].Steps[:2] {
				if !st.Secret || st.Value != trajectory.SecretPlaceholder {
					t.Errorf("step %+v is not secret", st)
				}
			}
			// The flow fact written from those steps keeps the secret's
			// slot, and the screen takes the slot for the engine's word,
			// not a template: the fact is shown, not quarantined.
			if ev := seen["events"]; strings.Contains(ev, `"event":"fact_quarantined"`) ||
				!regexp.MustCompile(`"event":"fact_observed"[^\n]*"key":"flow: [^\n]*\{\{secret\}\}`).MatchString(ev) {
				t.Errorf("the flow fact is not observed with its secret slot, or is quarantined:\n%s", ev)
			}
		})
	}
}

// BenchmarkRedactWrites: what the run's Redactor costs per thing it
// writes, with three typed secrets known: an action record (Value on the
// struct), a 4 KB step message as llm.jsonl logs it, an event's fields.
func BenchmarkRedactWrites(b *testing.B) {
	red := redact.New(redact.Options{})
	for _, v := range []string{"Tr0ub4dor&3", "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0", "zq-amber-falcon-quill"} {
		red.Add(v)
	}
	r := &runner{red: red}
	rec := record{Record: runfiles.Record{Step: 3, Action: "fill", Ref: "e12", Value: "padel rackets", OK: true, URL: "http://shop.test/search?q=padel",
		Role: "searchbox", Name: "Search products", Lessons: []string{"l_1", "l_2"}}}
	msg := ("Clickable elements:\ne8: textbox - Email (value \"bob@example.com\")\n" +
		strings.Repeat("e13: button - Add 13 to cart, 360 g, ships in 2 days\n", 80))[:4000]
	fields := map[string]any{"domain": "shop.test", "key": "flow: search for {1}", "value": "fill \"padel\" into \"Search\" → click \"Search\"", "run_id": "run_1"}
	b.Run("record", func(b *testing.B) {
		for b.Loop() {
			c := rec
			r.red.Value(&c)
		}
	})
	b.Run("llm-text-4KB", func(b *testing.B) {
		for b.Loop() {
			_, _ = logText(msg, red)
		}
	})
	b.Run("event", func(b *testing.B) {
		for b.Loop() {
			_ = r.redactFields(fields)
		}
	})
}

// login is a page with a secret field the browser marks secret (its name
// holds no secret word), which a click focuses; reportFocus says whether
// the snapshot says so (not every browser does).
type login struct {
	mu          sync.Mutex
	focused     bool
	reportFocus bool
}

func (l *login) Navigate(context.Context, string) error { return nil }
func (l *login) Snapshot(context.Context) (*engine.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	states := []string{engine.StateSecret}
	if l.focused && l.reportFocus {
		states = append(states, "focused")
	}
	return &engine.Snapshot{URL: "http://login.test/", Title: "Sign in", Tree: "sign in", Elements: []engine.Element{
		{Ref: "e1", Role: "textbox", Name: "Access", States: states},
		{Ref: "e2", Role: "button", Name: "Sign in"},
	}}, nil
}
func (l *login) Act(_ context.Context, a engine.Action) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.focused = a.Kind == engine.ActClick && a.Ref == "e1"
	return nil
}
func (l *login) Screenshot(context.Context) ([]byte, error) { return nil, nil }
func (l *login) Close() error                               { return nil }

// runFiles runs cfg (its RunsDir and data dir under dir, its events
// recorded) and returns the result and the text of every file under dir
// once the data dir is closed, with the result's JSON under "result" and
// the events' under "events".
func runFiles(t *testing.T, dir string, cfg Config) (map[string]string, *Result) {
	t.Helper()
	db, err := badger.Open(context.Background(), filepath.Join(dir, "db"), badger.Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events bytes.Buffer
	cfg.Events = func(e event.Event) {
		mu.Lock()
		defer mu.Unlock()
		_ = json.NewEncoder(&events).Encode(e)
	}
	cfg.Memory, cfg.RunsDir, cfg.Approve = memOf(t, db), filepath.Join(dir, "runs"), ApproveAuto
	res := mustRun(t, cfg)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res)
	mu.Lock()
	seen := map[string]string{"result": string(raw), "events": events.String()}
	mu.Unlock()
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			seen[p] = string(b)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return seen, res
}

// A value the model types with no target, right after it clicked a secret
// field, is refused ("type needs a ref") and was typed nowhere, but the
// model's answer that holds it is in llm.jsonl: it is a secret there, and
// everywhere, whether the browser reports the focus or the run knows only
// its last click.
func TestUntargetedTypeIntoFocusedSecret(t *testing.T) {
	const pw = "FOCUSpwA1"
	for _, report := range []bool{true, false} {
		t.Run(fmt.Sprintf("focus-reported=%v", report), func(t *testing.T) {
			policy := func(_, msg string) (string, map[string]any) {
				switch {
				case strings.Contains(msg, "Last action: (none)"):
					return "click", map[string]any{"ref": "e1"}
				case strings.Contains(msg, "Last action: click"):
					return "type", map[string]any{"text": pw}
				}
				return "finish", map[string]any{"answer": "could not sign in", "success": false}
			}
			dir := t.TempDir()
			seen, res := runFiles(t, dir, Config{Goal: "sign in", StartURL: "http://login.test/", Browser: &login{reportFocus: report},
				Model: &fakeModel{p: policy}})
			if res.Errors == 0 {
				t.Fatalf("the untargeted type was not refused: %+v", res)
			}
			llm := seen[filepath.Join(res.Dir, LLMFile)]
			if !strings.Contains(llm, `\"text\":\"`+Redacted) {
				t.Errorf("llm.jsonl has no redacted text:\n%s", llm)
			}
			for where, s := range seen {
				if strings.Contains(s, pw) {
					t.Errorf("%s holds %q", where, pw)
				}
			}
		})
	}
	// In planner mode: a proposed action that names no element.
	t.Run("planner", func(t *testing.T) {
		planner := func(_, msg string) (string, map[string]any) {
			switch {
			case strings.Contains(msg, "No iterations yet."):
				return "plan", map[string]any{"step_by_step_reasoning": "focus the field", "proposed_actions": []string{`click "Access"`}}
			case strings.Contains(msg, "type "):
				return "plan", map[string]any{"task_complete": true, "final_answer": "could not sign in"}
			}
			return "plan", map[string]any{"step_by_step_reasoning": "type it", "proposed_actions": []string{`type "` + pw + `"`}}
		}
		dir := t.TempDir()
		seen, res := runFiles(t, dir, Config{Goal: "sign in", StartURL: "http://login.test/", Browser: &login{}, Model: &fakeModel{p: planner}, Mode: PlannerMode})
		if res.Steps < 1 {
			t.Fatalf("%+v", res)
		}
		for where, s := range seen {
			if strings.Contains(s, pw) {
				t.Errorf("%s holds %q", where, pw)
			}
		}
	})
}

// A password in a goal's plain words ("with password X") and in a finish
// answer ("the password is X") is stored nowhere: not in the run folder,
// the run, the session or the trajectory in the data dir, nor the result.
func TestPasswordInGoalAndAnswerIsStoredNowhere(t *testing.T) {
	const goalPW, answerPW = "NAVgoalF66", "ANSwerP77"
	policy := func(_, msg string) (string, map[string]any) {
		if strings.Contains(msg, "Last action: (none)") {
			return "click", el("Sign in")
		}
		return "finish", map[string]any{"answer": "signed in; the password is " + answerPW, "success": true}
	}
	dir := t.TempDir()
	seen, res := runFiles(t, dir, Config{Goal: "log in to login.test with password " + goalPW, StartURL: "http://login.test/",
		Browser: &login{}, Model: &fakeModel{p: policy}})
	if !res.Success {
		t.Fatalf("%+v", res)
	}
	if m := seen[filepath.Join(res.Dir, "manifest.json")]; !strings.Contains(m, "with password "+redact.Secret) {
		t.Errorf("manifest.json:\n%s", m)
	}
	for where, s := range seen {
		for _, v := range []string{goalPW, answerPW} {
			if strings.Contains(s, v) {
				t.Errorf("%s holds %q", where, v)
			}
		}
	}
}
