package agentcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The secrets the scenario types: a password (with characters JSON and
// URLs escape), an email address and an API key.
const (
	scenarioPassword = `Tr0ub4dor&3"horse<battery>`
	scenarioEmail    = "alice.liddell@example.org"
	scenarioAPIKey   = "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
)

const consoleLogin = `<!doctype html><title>Console sign in</title><h1>Sign in</h1>
<form method="post" action="/login">
<label for="email">Email</label><input id="email" name="email" type="email">
<label for="pw">Password</label><input id="pw" name="password" type="password">
<label for="key">API key</label><input id="key" name="api_key">
<button type="submit">Sign in</button>
</form>`

func consoleSite(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, consoleLogin) })
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if r.PostFormValue("password") != scenarioPassword || r.PostFormValue("api_key") != scenarioAPIKey || r.PostFormValue("email") != scenarioEmail {
			http.Error(w, "wrong credentials", http.StatusForbidden)
			return
		}
		// The page shows the address back, as real ones do.
		fmt.Fprintf(w, `<!doctype html><title>Welcome</title><p>Signed in as %s.</p><a href="/">Sign out</a>`, scenarioEmail)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// consoleRules signs in: email, password, API key, the button, finish.
func consoleRules(t *testing.T) string {
	type call struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	type rule struct {
		Step      int    `json:"step"`
		ToolCalls []call `json:"tool_calls"`
	}
	rules := []rule{
		{1, []call{{"fill", map[string]any{"element": "Email", "text": scenarioEmail}}}},
		{2, []call{{"fill", map[string]any{"element": "Password", "text": scenarioPassword}}}},
		{3, []call{{"fill", map[string]any{"element": "API key", "text": scenarioAPIKey}}}},
		{4, []call{{"click", map[string]any{"element": "Sign in"}}}},
		{5, []call{{"finish", map[string]any{"answer": "signed in as " + scenarioEmail + " with key " + scenarioAPIKey, "success": true}}}},
	}
	b, err := json.Marshal(map[string]any{"rules": rules})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "rules.json") // outside the data dir
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// forms lists the ways a value can be written: as typed, JSON-escaped
// (with and without HTML escaping) once and twice (tool arguments are
// JSON inside JSON), URL-escaped.
func forms(v string) []string {
	seen := map[string]bool{v: true}
	out := []string{v}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	esc := func(s string, html bool) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(s)
		q := strings.TrimSuffix(b.String(), "\n")
		return q[1 : len(q)-1]
	}
	for _, html := range []bool{true, false} {
		once := esc(v, html)
		add(once)
		add(esc(once, html))
	}
	add(url.QueryEscape(v))
	add(url.PathEscape(v))
	return out
}

// grepDir returns the files under dir holding any of the values.
func grepDir(t *testing.T, dir string, values ...string) (hits []string, files int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		for _, v := range values {
			for _, f := range forms(v) {
				if bytes.Contains(b, []byte(f)) {
					hits = append(hits, fmt.Sprintf("%s holds %q", p, f))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hits, files
}

// The scenario: a run (static browser, scripted LLM; chromium too
// when there is one) signs in on a local page typing a password, an email address and an API key, twice
// (the second run sees what the first taught). Afterwards no file of the
// data dir — badger's .vlog, .sst and .mem files, every version of every
// record, the run folders — holds any of the three, in any escaping.
func TestRunStoresNoSecrets(t *testing.T) {
	for _, browser := range []string{"static", "chromedp"} {
		t.Run(browser, func(t *testing.T) {
			if browser == "chromedp" && !haveChromium() {
				t.Skip("no chromium")
			}
			runStoresNoSecrets(t, browser)
		})
	}
}

func runStoresNoSecrets(t *testing.T, browser string) {
	site := consoleSite(t)
	rules := consoleRules(t)
	data := filepath.Join(t.TempDir(), "data")
	for _, id := range []string{"login-1", "login-2"} {
		var out, errb strings.Builder
		code := agentMain([]string{"run", "--browser", browser, "--rules", rules, "--approve", "auto", "--run-id", id,
			"--goal", "sign in to the console as " + scenarioEmail, "--url", site.URL + "/", "--data-dir", data}, strings.NewReader(""), &out, &errb)
		if code != 0 || !strings.Contains(out.String(), "run "+id+" completed: finished") {
			t.Fatalf("run %s: exit %d\n%s\n%s", id, code, out.String(), errb.String())
		}
		for _, v := range []string{scenarioPassword, scenarioEmail, scenarioAPIKey} {
			if strings.Contains(out.String()+errb.String(), v) {
				t.Errorf("run %s printed %q:\n%s\n%s", id, v, out.String(), errb.String())
			}
		}
	}
	hits, files := grepDir(t, data, scenarioPassword, scenarioEmail, scenarioAPIKey)
	for _, h := range hits {
		t.Error(h)
	}
	// The search can fail: it reads badger's files (the goal is in them)
	// and the run folder says where the values were.
	if goal, _ := grepDir(t, data, "sign in to the console as"); len(goal) < 2 || !hasBadgerFile(goal) {
		t.Fatalf("the goal is not found in the badger files (%d files searched): %v", files, goal)
	}
	actions, err := os.ReadFile(filepath.Join(data, "runs", "login-1", "actions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(actions), `"value":"[redacted]"`); n != 2 || !strings.Contains(string(actions), `"value":"[email]"`) {
		t.Fatalf("actions.jsonl (%d values redacted):\n%s", n, actions)
	}
}

func hasBadgerFile(hits []string) bool {
	for _, h := range hits {
		for _, ext := range []string{".vlog ", ".sst ", ".mem "} {
			if strings.Contains(h, ext) {
				return true
			}
		}
	}
	return false
}

// --keep-contacts keeps the email address in what the run stores, memory
// included; the password and the API key are redacted all the same.
func TestRunKeepContacts(t *testing.T) {
	site := consoleSite(t)
	data := filepath.Join(t.TempDir(), "data")
	var out, errb strings.Builder
	code := agentMain([]string{"run", "--quiet", "--browser", "static", "--rules", consoleRules(t), "--approve", "auto", "--run-id", "kept",
		"--keep-contacts", "--goal", "sign in to the console", "--url", site.URL + "/", "--data-dir", data}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if hits, _ := grepDir(t, data, scenarioPassword, scenarioAPIKey); len(hits) > 0 {
		t.Fatalf("secrets stored: %v", hits)
	}
	actions, err := os.ReadFile(filepath.Join(data, "runs", "kept", "actions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(actions), scenarioEmail) {
		t.Fatalf("the email address was not kept:\n%s", actions)
	}
	if hits, _ := grepDir(t, filepath.Join(data, "db"), scenarioEmail); !hasBadgerFile(hits) {
		t.Fatalf("memory did not keep the email address: %v", hits)
	}
}
