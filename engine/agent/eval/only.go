package eval

import (
	"fmt"
	"path"
	"strings"
)

// Only keeps the names that match one of the comma-separated glob
// patterns (path.Match: * ? [...]), in their order; every pattern must be
// well-formed and match at least one name, so a typo is an error, not an
// evaluation of nothing.
func Only(names []string, patterns string) ([]string, error) {
	var pats []string
	for _, p := range strings.Split(patterns, ",") {
		if p = strings.TrimSpace(p); p != "" {
			pats = append(pats, p)
		}
	}
	if len(pats) == 0 {
		return nil, fmt.Errorf("no patterns in %q", patterns)
	}
	used := make([]bool, len(pats))
	var out []string
	for _, n := range names {
		keep := false
		for i, p := range pats {
			ok, err := path.Match(p, n)
			if err != nil {
				return nil, fmt.Errorf("pattern %q: %v", p, err)
			}
			if ok {
				used[i], keep = true, true
			}
		}
		if keep {
			out = append(out, n)
		}
	}
	for i, p := range pats {
		if !used[i] {
			return nil, fmt.Errorf("pattern %q matches no case (the cases: %s)", p, sample(names))
		}
	}
	return out, nil
}

// sample lists up to 10 names.
func sample(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + fmt.Sprintf(", … (%d in all)", len(names))
	}
	return strings.Join(names, ", ")
}
