package agent

import (
	"bytes"
	"context"
	"encoding/json"
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
			db, err := badger.Open(context.Background(), filepath.Join(dir, "db"), badger.Options{GCInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var mu sync.Mutex
			var events bytes.Buffer
			cfg := Config{Goal: "verify the account of " + vaultEmail, StartURL: "http://vault.test/", Browser: &vault{}, Model: &fakeModel{p: c.p},
				Memory: memOf(t, db), Approve: ApproveAuto, RunsDir: filepath.Join(dir, "runs"), Mode: c.mode,
				Events: func(e event.Event) {
					mu.Lock()
					defer mu.Unlock()
					_ = json.NewEncoder(&events).Encode(e)
				}}
			res := mustRun(t, cfg)
			if !res.Success {
				t.Fatalf("%+v", res)
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
