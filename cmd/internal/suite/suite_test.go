package suite

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds --cases files to the suite reader: it refuses with an
// error naming the file (the CLI's exit 2) or returns cases that can run: a name that is a
// single directory name inside the suite's dir, a goal, a url, a rules path
// anchored at the cases file.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`[{"name":"search","goal":"search padel","url":"http://shop.test/","rules":"rules.json","max_steps":5}]`,
		`{"cases":[{"goal":"g","url":"u"},{"name":"two","goal":"g2","url":"u2","rules":"/abs/r.json"}]}`,
		`[{"name":"../../../../tmp/x","goal":"g","url":"u"}]`,
		`[{"name":"a\u0000b","goal":"g","url":"u"}]`,
		`[{"name":"..","goal":"g","url":"u"}]`,
		`[{"goal":"g","url":"u","max_steps":-1}]`,
		`[]`, `{}`, `null`, `[{"goal":" ","url":"u"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		const path = "/suite/cases.json"
		cases, err := Parse(b, path)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--cases "+path+": ") {
				t.Fatalf("refused with %v, want an error naming the file", err)
			}
			return
		}
		if len(cases) == 0 {
			t.Fatal("no cases and no error")
		}
		for i, c := range cases {
			base := "/data/isolated/suite"
			dir := filepath.Join(base, "01-"+c.Name)
			if filepath.Dir(dir) != base || NameProblem(c.Name) != "" {
				t.Fatalf("case %d name %q makes data dir %q outside %q", i+1, c.Name, dir, base)
			}
			if strings.TrimSpace(c.Goal) == "" || strings.TrimSpace(c.URL) == "" || c.MaxSteps < 0 {
				t.Fatalf("case %d accepted: %+v", i+1, c)
			}
			if c.Rules != "" && !filepath.IsAbs(c.Rules) {
				t.Fatalf("case %d rules path %q is relative", i+1, c.Rules)
			}
		}
	})
}

// A case name used to become a path under the suite's data dir as is, so
// "../../x" put a per-run case's memory outside it.
func TestParseRefusesPathNames(t *testing.T) {
	for name, want := range map[string]string{
		"../../../../tmp/x":      "holds a path separator",
		"..":                     "is not a name",
		"a\u0000b":               "holds a control character",
		`a\b`:                    "holds a path separator",
		strings.Repeat("n", 101): "is longer than 100 characters",
	} {
		q, _ := json.Marshal(name)
		_, err := Parse([]byte(`[{"name":`+string(q)+`,"goal":"g","url":"u"}]`), "c.json")
		if err == nil || !strings.Contains(err.Error(), "--cases c.json: case 1: name") || !strings.Contains(err.Error(), want) {
			t.Errorf("name %q: err = %v, want a usage error: %s", name, err, want)
		}
	}
	if _, err := Parse([]byte(`[{"goal":"g","url":"u","max_steps":-3}]`), "c.json"); err == nil || !strings.Contains(err.Error(), "max_steps -3 is negative") {
		t.Errorf("negative max_steps: %v", err)
	}
}

// A misspelt field is refused, not dropped (the case would run without
// it), and so is data after the cases; both forms of the file are strict.
func TestParseRefusesUnknownFieldsAndTrailingData(t *testing.T) {
	const path = "/suite/cases.json"
	for in, want := range map[string]string{
		`[{"goal":"g","url":"u","max_step":3}]`:                `--cases /suite/cases.json: unknown field "max_step" (a case has name, goal, url, changed_url, rules and max_steps)`,
		`{"cases":[{"goal":"g","url":"u","changed_ulr":"v"}]}`: `--cases /suite/cases.json: unknown field "changed_ulr" (a case has name, goal, url, changed_url, rules and max_steps)`,
		`[{"goal":"g","url":"u"}] [{"goal":"h","url":"u"}]`:    `--cases /suite/cases.json: data after the cases (one JSON value per file)`,
		`"cases"`: `--cases /suite/cases.json: want a JSON array of cases or {"cases": [...]}, not string`,
	} {
		if _, err := Parse([]byte(in), path); err == nil || err.Error() != want {
			t.Errorf("Parse(%s) = %v, want %s", in, err, want)
		}
	}
	cases, err := Parse([]byte(` {"cases": [{"name": "a", "goal": "g", "url": "u", "changed_url": "v", "rules": "r.json", "max_steps": 4}]} `), path)
	if err != nil || len(cases) != 1 || cases[0].ChangedURL != "v" || cases[0].MaxSteps != 4 || cases[0].Rules != "/suite/r.json" {
		t.Fatalf("every field: %+v, %v", cases, err)
	}
}
