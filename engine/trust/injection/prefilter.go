package injection

import (
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
)

// A filter says cheaply whether a text may hold a match of a regular
// expression: it may when, for one of its clauses, the text holds a string
// of each of the clause's sets. It is derived from the expression (see
// need), so a text it turns away cannot match: one pass over the text
// finds every string of every filter (see lexicon), far cheaper than the
// expressions' bounded repetitions.
type filter [][][]string

// A lexicon is the strings of every pattern's filter, numbered, with the
// filters as sets of numbers: scan finds which strings a text holds in one
// pass, and a compiled filter then asks only whether numbers were found.
type lexicon struct {
	words []string
	ids   map[string]int
	// single lists the one-byte strings by their byte; pairs the longer
	// ones by their first two bytes (an index into buckets, plus one),
	// each bucket with what follows the two bytes.
	single  [256][]int
	pairs   [1 << 16]uint16
	buckets [][]suffix
}

// suffix is a string of the lexicon past its first two bytes.
type suffix struct {
	id   int
	rest string
}

// found is the set of a lexicon's strings a text holds.
type found []uint64

func (f found) has(id int) bool { return f[id>>6]&(1<<(id&63)) != 0 }

// compiled is a filter over a lexicon's numbers.
type compiled [][][]int

func (c compiled) mayMatch(f found) bool {
clauses:
	for _, clause := range c {
		for _, set := range clause {
			hit := false
			for _, id := range set {
				if f.has(id) {
					hit = true
					break
				}
			}
			if !hit {
				continue clauses
			}
		}
		return true
	}
	return false
}

// The views a filter is compiled for: a reading as is, and the ROT13 and
// reversed readings of an ASCII text, whose strings are looked for in the
// text ROT13-encoded and reversed.
const (
	asIs = iota
	asROT13
	asReversed
	views
)

// view is how a filter's strings are written for view v.
func view(v int) func(string) string {
	switch v {
	case asROT13:
		return rot13
	case asReversed:
		return reverse
	}
	return func(s string) string { return s }
}

// compile numbers the strings of f, written as spell writes them, in lx.
func (lx *lexicon) compile(f filter, spell func(string) string) compiled {
	if lx.ids == nil {
		lx.ids = map[string]int{}
	}
	out := make(compiled, len(f))
	for i, clause := range f {
		out[i] = make([][]int, len(clause))
		for j, set := range clause {
			for _, w := range set {
				w = spell(w)
				id, ok := lx.ids[w]
				if !ok {
					id = len(lx.words)
					lx.ids[w] = id
					lx.words = append(lx.words, w)
					if len(w) == 1 {
						lx.single[w[0]] = append(lx.single[w[0]], id)
					} else {
						k := uint16(w[0])<<8 | uint16(w[1])
						if lx.pairs[k] == 0 {
							lx.buckets = append(lx.buckets, nil)
							lx.pairs[k] = uint16(len(lx.buckets))
						}
						lx.buckets[lx.pairs[k]-1] = append(lx.buckets[lx.pairs[k]-1], suffix{id, w[2:]})
					}
				}
				out[i][j] = append(out[i][j], id)
			}
		}
	}
	return out
}

// scan returns the lexicon's strings that text holds.
func (lx *lexicon) scan(text string) found {
	f := make(found, (len(lx.words)+63)/64)
	for i := 0; i < len(text); i++ {
		c := text[i]
		for _, id := range lx.single[c] {
			f[id>>6] |= 1 << (id & 63)
		}
		if i+1 == len(text) {
			break
		}
		b := lx.pairs[uint16(c)<<8|uint16(text[i+1])]
		if b == 0 {
			continue
		}
		after := text[i+2:]
		for _, w := range lx.buckets[b-1] {
			// The third byte first: most candidates differ there.
			if w.rest == "" || len(after) >= len(w.rest) && after[0] == w.rest[0] && after[:len(w.rest)] == w.rest {
				f[w.id>>6] |= 1 << (w.id & 63)
			}
		}
	}
	return f
}

// newPattern compiles re and derives its filter.
func newPattern(what string, instruction bool, re string) pattern {
	p := pattern{what: what, instruction: instruction, re: regexp.MustCompile(re)}
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		panic(err) // MustCompile accepted it
	}
	p.need = need(parsed)
	if p.need == nil {
		panic("injection: pattern " + re + " needs no word: it would run on every text")
	}
	return p
}

// maxExact bounds the strings a part of an expression is spelled out into.
const maxExact = 256

// exact returns every string re matches, when they are few (at most
// maxExact), or ok false. Zero-width assertions match "".
func exact(re *syntax.Regexp) (set []string, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		return []string{string(re.Rune)}, true
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary,
		syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText:
		return []string{""}, true
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(set) == 8 {
					return nil, false
				}
				set = append(set, string(r))
			}
		}
		return set, true
	case syntax.OpCapture:
		return exact(re.Sub[0])
	case syntax.OpQuest:
		s, ok := exact(re.Sub[0])
		return append(s, ""), ok && len(s) < maxExact
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			s, ok := exact(sub)
			if !ok || len(set)+len(s) > maxExact {
				return nil, false
			}
			set = append(set, s...)
		}
		return set, true
	case syntax.OpConcat:
		set = []string{""}
		for _, sub := range re.Sub {
			s, ok := exact(sub)
			if !ok || len(set)*len(s) > maxExact {
				return nil, false
			}
			set = product(set, s)
		}
		return set, true
	}
	return nil, false
}

func product(a, b []string) []string {
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return out
}

// need returns the filter of re: nil when re needs no string at all.
func need(re *syntax.Regexp) filter {
	if s, ok := exact(re); ok && (len(s) <= maxSet || re.Op != syntax.OpConcat && re.Op != syntax.OpAlternate && re.Op != syntax.OpCapture) {
		return clauseOf(s)
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return need(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return need(re.Sub[0])
		}
	case syntax.OpAlternate:
		// One clause for each branch; branches that each need one set
		// make one set.
		var out filter
		var union []string
		for _, sub := range re.Sub {
			f := need(sub)
			if f == nil {
				return nil
			}
			if len(f) == 1 && len(f[0]) == 1 {
				union = append(union, f[0][0]...)
			} else {
				out = append(out, f...)
			}
		}
		if union != nil {
			out = append(out, []([]string){minimal(union)})
		}
		return out
	case syntax.OpConcat:
		return needAll(re.Sub)
	}
	return nil
}

// needAll is the filter of a sequence: every part is in a match, so each
// part's need holds. Runs of exactly spelled parts are spelled out together
// ("ignor" then "e|ing") when that gives few strings, else each part is a
// set of its own; of the parts needing one of several clauses, the one
// with the fewest is kept when no part needs a single one.
func needAll(parts []*syntax.Regexp) filter {
	var sets [][]string
	var alt filter
	var run []string      // the run spelled out
	var pieces [][]string // the run's parts, each spelled out
	flush := func() {
		if c := clauseOf(run); c != nil && len(c[0][0]) <= maxSet {
			sets = append(sets, c[0][0])
		} else {
			for _, p := range pieces {
				if c := clauseOf(p); c != nil {
					sets = append(sets, c[0][0])
				}
			}
		}
		run, pieces = []string{""}, nil
	}
	run = []string{""}
	for _, p := range parts {
		s, ok := exact(p)
		if ok && len(run)*len(s) <= maxExact {
			run = product(run, s)
			pieces = append(pieces, s)
			continue
		}
		flush()
		if ok {
			run, pieces = s, [][]string{s}
			continue
		}
		switch f := need(p); {
		case len(f) == 1:
			sets = append(sets, f[0]...)
		case f != nil && (alt == nil || len(f) < len(alt)):
			alt = f
		}
	}
	flush()
	if len(sets) == 0 {
		return alt
	}
	// The rarest set first: a text that fails it is turned away at once.
	sort.SliceStable(sets, func(i, j int) bool { return rarer(sets[i], sets[j]) })
	return filter{sets}
}

// maxSet is the most strings a run spelled out may give; a longer run's
// parts are sets of their own.
const maxSet = 16

// rarer reports whether set a is likely in fewer texts than b: its
// shortest string is longer, or as long and it has fewer strings.
func rarer(a, b []string) bool {
	if la, lb := shortest(a), shortest(b); la != lb {
		return la > lb
	}
	return len(a) < len(b)
}

// clauseOf is the filter "one of set": nil when set holds "" (no need).
func clauseOf(set []string) filter {
	set = minimal(set)
	for _, s := range set {
		if s == "" {
			return nil
		}
	}
	return filter{{set}}
}

func shortest(set []string) int {
	n := -1
	for _, s := range set {
		if n < 0 || len(s) < n {
			n = len(s)
		}
	}
	return n
}

// minimal drops the strings of set that hold another of its strings (a
// text holding "ignoring" holds "ignor"), and the duplicates.
func minimal(set []string) []string {
	var out []string
	for i, s := range set {
		redundant := false
		for j, t := range set {
			if i != j && strings.Contains(s, t) && (len(t) < len(s) || j < i) {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, s)
		}
	}
	return out
}
