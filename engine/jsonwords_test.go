package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A decoding error is told in JSON's words: the field and the kind it
// wants, never a Go type or package.
func TestJSONError(t *testing.T) {
	type inner struct {
		When time.Time `json:"when"`
		Tags []string  `json:"tags"`
	}
	type body struct {
		Name  string  `json:"name"`
		Tier  int     `json:"tier"`
		Score float64 `json:"score"`
		OK    bool    `json:"ok"`
		In    inner   `json:"in"`
	}
	decode := func(s string) error {
		var v body
		dec := json.NewDecoder(strings.NewReader(s))
		dec.DisallowUnknownFields()
		return dec.Decode(&v)
	}
	for in, want := range map[string]string{
		`[1, 2]`:                "want an object, not an array",
		`"text"`:                "want an object, not a string",
		`{"name": 3}`:           "name: want a string, not a number",
		`{"tier": 1.5}`:         "tier: want an integer, not the number 1.5",
		`{"tier": "2"}`:         "tier: want an integer, not a string",
		`{"score": true}`:       "score: want a number, not true or false",
		`{"ok": "yes"}`:         "ok: want true or false, not a string",
		`{"in": []}`:            "in: want an object, not an array",
		`{"in": {"tags": {}}}`:  "in.tags: want an array, not an object",
		`{"in": {"tags": [1]}}`: "in.tags: want a string, not a number",
		`{"in": {"when": 5}}`:   "want an RFC 3339 time (2006-01-02T15:04:05Z), not another JSON value",
		`{"in": {"when": "x"}}`: `want an RFC 3339 time (2006-01-02T15:04:05Z), not "x"`,
		`{"nope": 1}`:           `unknown field "nope"`,
		`{"name": `:             "the JSON is cut off",
		`{x}`:                   "invalid character 'x' looking for beginning of object key string",
	} {
		got := JSONError(decode(in))
		if got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
		if strings.Contains(got, "Go ") || strings.Contains(got, "engine.") || strings.Contains(got, "json:") {
			t.Errorf("%s: %q names Go", in, got)
		}
	}
}
