package injection

import (
	"fmt"
	"regexp/syntax"
	"testing"
)

func TestNeed(t *testing.T) {
	for _, c := range []struct{ re, want string }{
		{`ignore|ignoring|ignored`, `[[[ignore ignoring]]]`},
		{`\b(ignore|forget)\b[^.]{0,40}\b(all|any)\b`, `[[[ignore forget] [all any]]]`},
		{`(^|\s)(system|user)\s*:`, `[[[system user] [:]]]`},
		{`\.(exe|sh)\b`, `[[[.exe .sh]]]`},
		{`instructions?:`, `[[[instructions: instruction:]]]`},
		{`a+b`, `[[[a] [b]]]`},
		{`x|y[^.]*z`, `[[[x]] [[y] [z]]]`},
		{`[^.]{0,9}`, `[]`},
		{`x|[^.]*`, `[]`},
	} {
		re, err := syntax.Parse(c.re, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(need(re)); got != c.want {
			t.Errorf("need(%s) = %s, want %s", c.re, got, c.want)
		}
	}
}

// TestFiltersNeverTurnAwayAMatch: over every text of the corpora and each
// of its readings, a pattern whose expression matches is let by its filter.
func TestFiltersNeverTurnAwayAMatch(t *testing.T) {
	lx := screen().lexicon
	n := 0
	for _, file := range append(corpusFiles, "testdata/heldout.jsonl") {
		for _, e := range readCorpus(t, file) {
			lower := normal(e.Text)
			texts := []string{lower, markers.Replace(lower)}
			for _, r := range readings(e.Text, lower) {
				texts = append(texts, r.text)
			}
			for _, s := range texts {
				in := lx.scan(s)
				for _, p := range patterns() {
					if p.re.MatchString(s) {
						n++
						if !p.filter.mayMatch(in) {
							t.Errorf("%s matches %q but its filter turns it away", p.re, s)
						}
					}
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d matches checked", n)
	}
}
