package api_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/api/problem"
)

// Bad bodies are told in the API's words (JSON kinds and field names),
// never a Go type nor a command-line flag; a required field left out is
// named.
func TestBodyErrorsInAPIWords(t *testing.T) {
	h := api.Handler(open(t), api.Options{})
	for _, c := range []struct{ method, path, body, want string }{
		{"POST", "/v1/lessons", `["wait"]`, "invalid request: body: want an object, not an array"},
		{"POST", "/v1/lessons", `"wait"`, "invalid request: body: want an object, not a string"},
		{"POST", "/v1/lessons", `{"lesson": 3, "category": "best_practice"}`, "invalid request: body: lesson: want a string, not a number"},
		{"POST", "/v1/runs/run_x/complete", `{"success": "yes"}`, "invalid request: body: success: want true or false, not a string"},
		{"POST", "/v1/trajectories", `{"domain": "shop.example", "goal": "buy", "steps": {}}`, "invalid request: body: steps: want an array, not an object"},
		{"POST", "/v1/recall/error", `{"command": "click e12"}`, `invalid request: body: the field "error" is required`},
		{"POST", "/v1/lessons", `{}`, `invalid request: body: the fields "lesson", "category" are required`},
		{"POST", "/v1/lessons", ``, "invalid request: the body is empty: send a JSON object"},
		{"POST", "/v1/retract/fact_x", `{"reason": " "}`, `invalid retract: the field "reason" is blank: say why the record is withdrawn`},
		{"POST", "/v1/lessons/les_x/retract", `{"reason": ""}`, `invalid retract: the field "reason" is blank: say why the record is withdrawn`},
		{"POST", "/v1/imports/abc/revert", `{}`, `invalid revert: the path parameter "sha256" is not a file's SHA-256 (64 lowercase hex digits, as engine import prints it)`},
	} {
		resp := do(t, h, c.method, c.path, "application/json", c.body)
		var p problem.Problem
		if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 400 || p.Detail != c.want {
			t.Errorf("%s %s %s: %d %q, want 400 %q", c.method, c.path, c.body, resp.StatusCode, p.Detail, c.want)
		}
		if strings.Contains(p.Detail, "Go ") || strings.Contains(p.Detail, "json:") {
			t.Errorf("%s %s: %q names Go", c.method, c.path, p.Detail)
		}
		if strings.Contains(p.Detail, "--") {
			t.Errorf("%s %s: %q names a command-line flag, not the request's field", c.method, c.path, p.Detail)
		}
	}
	// An empty error is an error text like any other.
	if resp := do(t, h, "POST", "/v1/recall/error", "application/json", `{"command": "click e12", "error": ""}`); resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Errorf("recall with an empty error: %d %s", resp.StatusCode, b)
	}
}

// /v1/learn answers in snake_case like every other route.
func TestLearnAnswersSnakeCase(t *testing.T) {
	h := api.Handler(open(t), api.Options{})
	log := `{"step":1,"action":"fill","ref":"e3","ok":false,"error":"element is read-only","url":"https://shop.example/login"}
{"step":2,"action":"type","ref":"e3","ok":true,"url":"https://shop.example/login"}
`
	resp := do(t, h, "POST", "/v1/learn", "application/jsonl", log)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("learn: %d %s", resp.StatusCode, b)
	}
	var got []map[string]json.RawMessage
	if err := json.Unmarshal(b, &got); err != nil || len(got) != 1 {
		t.Fatalf("learn: %s (%v)", b, err)
	}
	for _, k := range []string{"lesson", "created", "step", "recovery"} {
		if _, ok := got[0][k]; !ok {
			t.Errorf("learn's answer lacks %q: %s", k, b)
		}
	}
	if len(got[0]) != 4 {
		t.Errorf("learn's answer has other fields: %s", b)
	}
}
