package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// WordOp is one run of words in a word diff: kept ('='), removed ('-') or
// added ('+').
type WordOp struct {
	Kind  byte
	Words []string
}

// maxCells bounds the LCS table of one word diff; two texts larger than
// that are shown as one removal and one addition.
const maxCells = 4 << 20

// Words returns the word differences that turn a into b (words split at
// white space), by the longest common subsequence of their words: runs of
// kept, removed and added words, a removal before the addition it pairs
// with.
func Words(a, b string) []WordOp {
	x, y := strings.Fields(a), strings.Fields(b)
	var out []WordOp
	add := func(k byte, w string) {
		if n := len(out); n > 0 && out[n-1].Kind == k {
			out[n-1].Words = append(out[n-1].Words, w)
			return
		}
		out = append(out, WordOp{Kind: k, Words: []string{w}})
	}
	// Common head and tail are kept without the table.
	h := 0
	for h < len(x) && h < len(y) && x[h] == y[h] {
		add('=', x[h])
		h++
	}
	t := 0
	for t < len(x)-h && t < len(y)-h && x[len(x)-1-t] == y[len(y)-1-t] {
		t++
	}
	mx, my := x[h:len(x)-t], y[h:len(y)-t]
	if len(mx)*len(my) > maxCells {
		for _, w := range mx {
			add('-', w)
		}
		for _, w := range my {
			add('+', w)
		}
	} else {
		// l[i][j] is the LCS length of mx[i:] and my[j:].
		n, m := len(mx), len(my)
		l := make([]int, (n+1)*(m+1))
		at := func(i, j int) int { return l[i*(m+1)+j] }
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if mx[i] == my[j] {
					l[i*(m+1)+j] = at(i+1, j+1) + 1
				} else {
					l[i*(m+1)+j] = max(at(i+1, j), at(i, j+1))
				}
			}
		}
		i, j := 0, 0
		var ins []string // additions held back so a removal comes first
		flush := func() {
			for _, w := range ins {
				add('+', w)
			}
			ins = ins[:0]
		}
		for i < n || j < m {
			switch {
			case i < n && j < m && mx[i] == my[j]:
				flush()
				add('=', mx[i])
				i, j = i+1, j+1
			case i < n && (j == m || at(i+1, j) >= at(i, j+1)):
				add('-', mx[i])
				i++
			default:
				ins = append(ins, my[j])
				j++
			}
		}
		flush()
	}
	for _, w := range x[len(x)-t:] {
		add('=', w)
	}
	return out
}

// FormatWords writes a word diff as text: kept words as they are, removed
// ones as [-…-], added ones as {+…+}.
func FormatWords(ops []WordOp) string {
	parts := make([]string, 0, len(ops))
	for _, o := range ops {
		s := strings.Join(o.Words, " ")
		switch o.Kind {
		case '-':
			s = "[-" + s + "-]"
		case '+':
			s = "{+" + s + "+}"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// FieldDiff is how one field of a record differs between two versions.
type FieldDiff struct {
	Field string   `json:"field"`
	Words []WordOp `json:"-"`
	Text  string   `json:"diff"` // FormatWords(Words)
}

// Diff returns the fields that differ between two versions of a record
// (each its JSON, Absent for none), in the newer record's field order and
// then the fields only the older has, each with its word differences: a
// string field's text, any other value as compact JSON.
func Diff(older, newer []byte) ([]FieldDiff, error) {
	o, ok, err := fields(older)
	if err != nil {
		return nil, fmt.Errorf("older version: %w", err)
	}
	n, nk, err := fields(newer)
	if err != nil {
		return nil, fmt.Errorf("newer version: %w", err)
	}
	seen := map[string]bool{}
	var out []FieldDiff
	for _, k := range append(nk, ok...) {
		if seen[k] {
			continue
		}
		seen[k] = true
		if a, b := o[k], n[k]; a != b {
			w := Words(a, b)
			out = append(out, FieldDiff{Field: k, Words: w, Text: FormatWords(w)})
		}
	}
	return out, nil
}

// fields reads a record's top-level fields as text, with their order.
func fields(rec []byte) (map[string]string, []string, error) {
	out := map[string]string{}
	if IsAbsent(rec) {
		return out, nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(rec))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("%w record: not a JSON object", ErrDamaged)
	}
	var keys []string
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("%w record: %w", ErrDamaged, err)
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("%w record field %s: %w", ErrDamaged, k, err)
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			var c bytes.Buffer
			if json.Compact(&c, v) == nil {
				v = c.Bytes()
			}
			s = string(v)
		}
		if _, dup := out[k]; !dup {
			keys = append(keys, k)
		}
		out[k] = s
	}
	return out, keys, nil
}
