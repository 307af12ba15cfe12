package gym

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
)

// aSite serves the named site (or its changed variant) for a test.
func aSite(t *testing.T, name string, changed bool) *httptest.Server {
	t.Helper()
	for _, s := range Sites() {
		if s.Name == name {
			srv := httptest.NewServer(s.Handler(changed))
			t.Cleanup(srv.Close)
			return srv
		}
	}
	t.Fatalf("no site %s", name)
	return nil
}

// aGet fetches u without following redirects (c may carry cookies).
func aGet(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	if c == nil {
		c = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// aRule is the element the named rule of a task acts on.
func aRule(t *testing.T, task Task, name string) string {
	t.Helper()
	var rb rulebook
	if err := json.Unmarshal(task.Rules, &rb); err != nil {
		t.Fatal(err)
	}
	for _, r := range rb.Rules {
		if r.Name == name {
			el, _ := r.ToolCalls[0].Arguments["element"].(string)
			return el
		}
	}
	t.Fatalf("task %s has no rule %s", task.Name, name)
	return ""
}

// aTasks are the tasks of the named site.
func aTasks(site string) []Task {
	var out []Task
	for _, t := range Tasks() {
		if t.Site == site {
			out = append(out, t)
		}
	}
	return out
}

var aIDRE = regexp.MustCompile(`id="([^"]+)"`)

// TestRulebookRules checks the rules of the shop's, news', bank's and
// travel's tasks: five tasks a site, every rule named, with a condition and
// one tool call, and a bound on the steps.
func TestRulebookRules(t *testing.T) {
	for _, site := range []string{"shop", "news", "bank", "travel"} {
		tasks := aTasks(site)
		if len(tasks) != 5 {
			t.Errorf("site %s: %d tasks, want 5", site, len(tasks))
		}
		for _, task := range tasks {
			var rb rulebook
			if err := json.Unmarshal(task.Rules, &rb); err != nil {
				t.Fatal(err)
			}
			for _, r := range rb.Rules {
				if r.Name == "" || (r.Last == "" && r.Prompt == "" && r.System == "") || len(r.ToolCalls) != 1 {
					t.Errorf("%s: rule %+v: needs a name, a condition and one tool call", task.Name, r)
				}
			}
			if task.MaxSteps < 1 || task.MaxSteps > 14 {
				t.Errorf("%s: max_steps %d", task.Name, task.MaxSteps)
			}
		}
	}
}
