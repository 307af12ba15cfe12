// Package suite reads the case files of `engine run --cases`.
package suite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/agent/eval"
)

// Case is one case of a --cases file: the task engine eval runs too.
type Case = eval.Case

// MaxName bounds a case's name, which names its data dir under
// --memory-isolation per-run.
const MaxName = 100

// Parse parses and checks a --cases file's content; path names it in
// errors and anchors relative rules paths.
func Parse(b []byte, path string) ([]Case, error) {
	var wrapped struct {
		Cases []Case `json:"cases"`
	}
	var cases []Case
	// Strict: a misspelt field (max_step, changed_ulr) would otherwise be
	// dropped and the case run without it.
	var into any = &cases
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		into = &wrapped
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(into)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("data after the cases (one JSON value per file)")
		}
	}
	if err != nil {
		var te *json.UnmarshalTypeError
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return nil, fmt.Errorf("--cases %s: unknown field %s (a case has name, goal, url, changed_url, rules and max_steps)", path, f)
		}
		if errors.As(err, &te) && te.Field == "" {
			return nil, fmt.Errorf("--cases %s: want a JSON array of cases or {\"cases\": [...]}, not %s", path, te.Value)
		}
		return nil, fmt.Errorf("--cases %s: %v", path, engine.JSONProblem(b, err))
	}
	if into == &wrapped {
		cases = wrapped.Cases
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("--cases %s: no cases", path)
	}
	for i := range cases {
		c := &cases[i]
		if c.Name == "" {
			c.Name = fmt.Sprintf("case-%d", i+1)
		}
		// The name becomes a directory name (per-run isolation): no path
		// separators, no "..", nothing a terminal or file system chokes on.
		if p := NameProblem(c.Name); p != "" {
			return nil, fmt.Errorf("--cases %s: case %d: name %q %s", path, i+1, c.Name, p)
		}
		if strings.TrimSpace(c.Goal) == "" || strings.TrimSpace(c.URL) == "" {
			return nil, fmt.Errorf("--cases %s: case %d (%s) needs a goal and a url", path, i+1, c.Name)
		}
		if c.MaxSteps < 0 {
			return nil, fmt.Errorf("--cases %s: case %d (%s): max_steps %d is negative", path, i+1, c.Name, c.MaxSteps)
		}
		if strings.ContainsRune(c.Rules, 0) {
			return nil, fmt.Errorf("--cases %s: case %d (%s): the rules path holds a NUL byte", path, i+1, c.Name)
		}
		if c.Rules != "" && !filepath.IsAbs(c.Rules) {
			c.Rules = filepath.Join(filepath.Dir(path), c.Rules)
		}
	}
	return cases, nil
}

// NameProblem says what makes name unfit to name a directory, or "".
func NameProblem(name string) string {
	switch {
	case utf8.RuneCountInString(name) > MaxName:
		return fmt.Sprintf("is longer than %d characters", MaxName)
	case name == "." || name == "..":
		return "is not a name"
	case strings.ContainsAny(name, `/\`):
		return "holds a path separator"
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "holds a control character"
	}
	return ""
}
