package gym

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestRegistry checks what every site and task must have: a handler for
// both variants, tasks with a goal and traps, and rules that are a JSON
// object with rules; and that the gym is the size it promises (8 sites,
// 40 tasks).
func TestRegistry(t *testing.T) {
	if s, n := len(Sites()), len(Tasks()); s < 8 || n < 40 {
		t.Errorf("the gym has %d sites and %d tasks, want at least 8 and 40", s, n)
	}
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
			if w := strings.Fields(strings.ToLower(task.Goal)); len(w) > 1 {
				for i := 1; i < len(w); i++ {
					if w[i] == w[i-1] {
						t.Errorf("task %s: the goal says %q twice: %s", task.Name, w[i], task.Goal)
					}
				}
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
