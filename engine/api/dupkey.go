package api

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// duplicateKey returns the path ("steps[1].name") of the first key an
// object of the JSON text b gives twice, or "". Go's decoder keeps the
// last of two, so a body could show one value to whatever reads it first
// and store another: a body that gives a field twice is refused instead.
// b has already been decoded, so it is one well-formed value whose
// nesting the decoder bounded.
func duplicateKey(b []byte) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var walk func(path string) string
	walk = func(path string) string {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		switch t {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return ""
				}
				k, _ := kt.(string)
				p := k
				if path != "" {
					p = path + "." + k
				}
				if seen[k] {
					return p
				}
				seen[k] = true
				if dup := walk(p); dup != "" {
					return dup
				}
			}
			_, _ = dec.Token() // }
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if dup := walk(fmt.Sprintf("%s[%d]", path, i)); dup != "" {
					return dup
				}
			}
			_, _ = dec.Token() // ]
		}
		return ""
	}
	return walk("")
}
