package main

import (
	"encoding/json"
	"net/http"

	"github.com/engine-dev/engine/engine/agent/gym"
)

// The scripts' gym site: a search form whose button is "Search", renamed
// "Find" on the changed variant. It registers in the test binary only (the
// engine the scripts run), so engine eval --suite gym has tasks to run in
// the scripts whatever sites the gym ships.
func init() {
	page := map[bool]map[string]string{}
	for _, changed := range []bool{false, true} {
		button := "Search"
		if changed {
			button = "Find"
		}
		page[changed] = map[string]string{
			"/": `<!doctype html><html><head><title>Test Shop</title></head><body>
<form action="/results" method="get"><input name="q" aria-label="Query"><button type="submit">` + button + `</button></form>
</body></html>`,
			"/results": `<!doctype html><html><head><title>Results</title></head><body><a href="/item">Padel Racket</a></body></html>`,
			"/item":    `<!doctype html><html><head><title>Padel Racket</title></head><body><p>A racket.</p></body></html>`,
		}
	}
	rules, _ := json.Marshal(map[string]any{"rules": []map[string]any{
		{"last_contains": "Title: Padel Racket", "tool_calls": []any{call("finish", "answer", "opened Padel Racket", "success", true)}},
		{"last_contains": "Title: Results", "tool_calls": []any{call("click", "element", "Padel Racket")}},
		{"last_contains": "Last action: fill", "prompt_contains": "Find", "tool_calls": []any{call("click", "element", "Find")}},
		{"last_contains": "Last action: fill", "tool_calls": []any{call("click", "element", "Search")}},
		{"last_contains": "Last action failed", "tool_calls": []any{call("fill", "element", "Query", "text", "padel")}},
		{"last_contains": "Last action: (none)", "prompt_contains": "REFERENCE TRAJECTORY", "tool_calls": []any{call("fill", "element", "Query", "text", "padel")}},
		{"last_contains": "Last action: (none)", "tool_calls": []any{call("click", "element", "Go")}},
	}})
	task := func(name, goal string) gym.Task {
		return gym.Task{Name: "zz-test." + name, Goal: goal, Traps: []string{gym.TrapMultiStep}, MaxSteps: 10, Rules: rules}
	}
	gym.Register(gym.Site{
		Name:  "zz-test",
		About: "the scripts' site: a search whose button the changed variant renames",
		Handler: func(changed bool) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, ok := page[changed][r.URL.Path]
				if !ok {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				_, _ = w.Write([]byte(body))
			})
		},
		Tasks: []gym.Task{
			task("padel", "search for padel and open the first result <b>"),
			task("racket", "find the padel racket"),
		},
	})
}

// call is a scripted tool call with arguments given as key, value pairs.
func call(name string, kv ...any) map[string]any {
	args := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		args[kv[i].(string)] = kv[i+1]
	}
	return map[string]any{"name": name, "arguments": args}
}
