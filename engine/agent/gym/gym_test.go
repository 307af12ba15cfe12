package gym

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRegistry checks what every site and task must have: a handler for
// both variants, tasks with a goal and traps, and rules that are a JSON
// object with rules.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Sites() {
		if s.About == "" || s.Handler == nil || len(s.Tasks) == 0 {
			t.Errorf("site %s: needs About, Handler and tasks", s.Name)
		}
		for _, task := range s.Tasks {
			if seen[task.Name] {
				t.Errorf("task %s twice", task.Name)
			}
			seen[task.Name] = true
			if task.Goal == "" || len(task.Traps) == 0 || task.Path == "" || task.Path[0] != '/' {
				t.Errorf("task %s: needs a goal, traps and a path from /", task.Name)
			}
			var r struct {
				Rules []json.RawMessage `json:"rules"`
			}
			if err := json.Unmarshal(task.Rules, &r); err != nil || len(r.Rules) == 0 {
				t.Errorf("task %s: rules: %v (%d rules)", task.Name, err, len(r.Rules))
			}
		}
	}
}

// TestServerServesEveryStart checks that every task's start answers 200 on
// both variants.
func TestServerServesEveryStart(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, task := range Tasks() {
		for _, changed := range []bool{false, true} {
			resp, err := http.Get(s.URL(task, changed))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("%s (changed %v): %s", task.Name, changed, resp.Status)
			}
		}
	}
}

// TestServe is a tool for writing sites, not a check: with GYM_SERVE=DIR
// it serves the gym, writes DIR/cases.json and DIR/cases-changed.json (the
// changed variants as the url) for engine eval --cases, and serves until
// DIR/stop exists.
func TestServe(t *testing.T) {
	dir := os.Getenv("GYM_SERVE")
	if dir == "" {
		t.Skip("GYM_SERVE=DIR serves the gym for engine eval --cases DIR/cases.json")
	}
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cases, err := WriteCases(dir, s, Tasks())
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, cs []Case) {
		b, _ := json.MarshalIndent(cs, "", " ")
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cases.json", cases)
	changed := append([]Case(nil), cases...)
	for i := range changed {
		changed[i].URL = changed[i].ChangedURL
	}
	write("cases-changed.json", changed)
	t.Logf("serving: %s/cases.json; touch %s/stop to stop", dir, dir)
	for {
		if _, err := os.Stat(filepath.Join(dir, "stop")); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
