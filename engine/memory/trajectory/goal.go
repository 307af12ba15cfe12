package trajectory

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Goals are read as a sequence of parts: words, numbers and quoted values.
// A template is a goal whose parameters (numbers, quoted values, and the
// words a step typed in) are replaced by numbered slots: "search padel
// rackets" with a step that typed "padel rackets" has the template
// "search {1}".

type partKind uint8

const (
	pWord partKind = iota
	pNumber
	pQuoted
)

type part struct {
	kind       partKind
	text       string // as written (for a quoted value: without the quotes)
	norm       string // lower case, spaces collapsed
	start, end int    // byte offsets in the goal, quotes included
}

// closers maps an opening quote to its closing quote.
var closers = map[rune]rune{'"': '"', '“': '”', '«': '»', '`': '`', '\'': '\'', '‘': '’', '„': '“'}

// parseGoal splits s into parts.
func parseGoal(s string) []part {
	var parts []part
	i := 0
	prevBoundary := true
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		if cl, ok := closers[r]; ok && prevBoundary {
			if j := findClose(s, i+w, cl, r == '\'' || r == '‘'); j > 0 {
				inner := strings.TrimSpace(s[i+w : j])
				_, cw := utf8.DecodeRuneInString(s[j:])
				if inner != "" {
					parts = append(parts, part{kind: pQuoted, text: inner, norm: normText(inner), start: i, end: j + cw})
				}
				i = j + cw
				prevBoundary = true
				continue
			}
		}
		if isWordRune(r) {
			j := i + w
			for j < len(s) {
				r2, w2 := utf8.DecodeRuneInString(s[j:])
				if isWordRune(r2) {
					j += w2
					continue
				}
				// Joiners inside a token: 4.5, 1,000, t-shirt, don't.
				if strings.ContainsRune(".,-'’", r2) && j+w2 < len(s) {
					r3, _ := utf8.DecodeRuneInString(s[j+w2:])
					prev, _ := utf8.DecodeLastRuneInString(s[:j])
					if r2 == '.' || r2 == ',' {
						if unicode.IsDigit(prev) && unicode.IsDigit(r3) {
							j += w2
							continue
						}
					} else if isWordRune(r3) {
						j += w2
						continue
					}
				}
				break
			}
			tok := s[i:j]
			k := pWord
			if isNumber(tok) {
				k = pNumber
			}
			parts = append(parts, part{kind: k, text: tok, norm: strings.ToLower(tok), start: i, end: j})
			i = j
			prevBoundary = false
			continue
		}
		prevBoundary = unicode.IsSpace(r) || unicode.IsPunct(r) && !strings.ContainsRune("'’", r) || unicode.IsSymbol(r)
		i += w
	}
	return parts
}

// findClose returns the offset of the closing quote cl at or after i, or
// -1. A single quote only closes at a word boundary, so "don't" is no quote.
func findClose(s string, i int, cl rune, strict bool) int {
	for j := i; j < len(s); {
		r, w := utf8.DecodeRuneInString(s[j:])
		if r == cl {
			if !strict {
				return j
			}
			next, _ := utf8.DecodeRuneInString(s[j+w:])
			if j+w >= len(s) || !isWordRune(next) {
				return j
			}
		}
		j += w
	}
	return -1
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

func isNumber(tok string) bool {
	if tok == "" || !unicode.IsDigit(rune(tok[0])) {
		return false
	}
	for _, r := range tok {
		if !unicode.IsDigit(r) && r != '.' && r != ',' {
			return false
		}
	}
	return true
}

func normText(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// stopwords are trimmed from the edges of a parameter's words when a new
// goal is bound to a template ("search for tennis balls" binds "tennis
// balls"), and a typed value made only of them is not a parameter.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "for": true, "of": true, "to": true, "in": true,
	"on": true, "at": true, "with": true, "and": true, "or": true, "some": true, "any": true,
	"from": true, "by": true, "my": true, "me": true, "about": true, "into": true, "all": true,
}

// slotKind is what a template slot stands for.
type slotKind string

const (
	slotText   slotKind = "text"   // words the run typed in, found in the goal
	slotNumber slotKind = "number" // a number in the goal
	slotQuoted slotKind = "quoted" // a quoted value in the goal
)

// Param is one parameter of a trajectory's goal template.
type Param struct {
	Kind  string `json:"kind"`  // text, number or quoted
	Value string `json:"value"` // the value in the recorded run
	Words int    `json:"words"` // how many words it spans in the goal
}

// templateOf finds goal's parameters given the values the steps typed in
// (secrets excluded), and returns the template's tokens (literal words and
// "{n}" for slot n) and the parameters in goal order.
func templateOf(goal string, values []string) (tokens []string, params []Param) {
	parts := parseGoal(goal)
	slotOf := make([]int, len(parts)) // group id+1; 0 = none
	type group struct {
		kind  slotKind
		value string
		first int
		n     int
	}
	var groups []group
	// Text parameters: a typed value whose words appear together in the
	// goal. Longest values first, so "padel rackets" wins over "padel".
	type cand struct {
		value string
		norms []string
	}
	var cands []cand
	for _, v := range values {
		vp := parseGoal(v)
		if len(vp) == 0 {
			continue
		}
		allStop := true
		norms := make([]string, 0, len(vp))
		quoted := false
		for _, p := range vp {
			if p.kind == pQuoted {
				quoted = true
			}
			if p.kind != pWord || !stopwords[p.norm] {
				allStop = false
			}
			norms = append(norms, p.norm)
		}
		if allStop || quoted {
			continue
		}
		cands = append(cands, cand{strings.TrimSpace(v), norms})
	}
	for i := 1; i < len(cands); i++ { // stable sort by length, longest first
		for j := i; j > 0 && len(cands[j].norms) > len(cands[j-1].norms); j-- {
			cands[j], cands[j-1] = cands[j-1], cands[j]
		}
	}
	for _, c := range cands {
		n := len(c.norms)
		if n == 1 {
			// A lone number or quoted value is its own slot below.
			if at := indexRun(parts, slotOf, c.norms); at >= 0 && parts[at].kind != pWord {
				continue
			}
		}
		at := indexRun(parts, slotOf, c.norms)
		if at < 0 {
			continue
		}
		if parts[at].kind == pQuoted && n == 1 {
			continue
		}
		groups = append(groups, group{kind: slotText, value: c.value, first: at, n: n})
		for k := at; k < at+n; k++ {
			slotOf[k] = len(groups)
		}
	}
	for i, p := range parts {
		if slotOf[i] != 0 {
			continue
		}
		switch p.kind {
		case pNumber:
			groups = append(groups, group{kind: slotNumber, value: p.text, first: i, n: 1})
			slotOf[i] = len(groups)
		case pQuoted:
			groups = append(groups, group{kind: slotQuoted, value: p.text, first: i, n: 1})
			slotOf[i] = len(groups)
		}
	}
	// Number the slots in goal order.
	for i := range parts {
		g := slotOf[i]
		if g == 0 {
			tokens = append(tokens, parts[i].norm)
			continue
		}
		if groups[g-1].first != i {
			continue
		}
		params = append(params, Param{Kind: string(groups[g-1].kind), Value: groups[g-1].value, Words: groups[g-1].n})
		tokens = append(tokens, slotToken(len(params)))
	}
	return tokens, params
}

// indexRun finds norms as a run of consecutive unassigned parts, or -1.
func indexRun(parts []part, slotOf []int, norms []string) int {
outer:
	for i := 0; i+len(norms) <= len(parts); i++ {
		for k, n := range norms {
			if slotOf[i+k] != 0 || parts[i+k].norm != n {
				continue outer
			}
		}
		return i
	}
	return -1
}

func slotToken(n int) string { return "{" + itoa(n) + "}" }

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// isSlotToken reports whether a template token is a slot.
func isSlotToken(t string) bool { return strings.HasPrefix(t, "{") }

// templateString renders template tokens for people.
func templateString(tokens []string) string { return strings.Join(tokens, " ") }
