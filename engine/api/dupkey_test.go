package api

import "testing"

func TestDuplicateKey(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": 1, "b": 2}`:                           "",
		`{"a": 1, "a": 2}`:                           "a",
		`{"steps": [{"x": 1}, {"x": 1, "x": 2}]}`:    "steps[1].x",
		`{"a": {"b": {"c": 1, "c": 1}}}`:             "a.b.c",
		`[{"a": 1}, {"a": 1}]`:                       "",
		`{"a": "{\"a\": 1, \"a\": 2}", "b": [1, 2]}`: "",
	} {
		if got := duplicateKey([]byte(in)); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}
