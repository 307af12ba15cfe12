// Package check holds the edge checks every store applies to text that
// comes from outside (imports, action logs, the CLI) before it is stored:
// valid UTF-8, no control characters where the text goes into keys or
// NUL-separated index entries, and bounded lengths. Each store wraps the
// problem it returns in its own bad-input error.
package check

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Field length limits, in runes (documented in ARCHITECTURE.md, "Limits").
const (
	MaxText    = 4000 // prose: a lesson's text, a goal, a fact's value, a selector
	MaxPattern = 500  // a lesson's error_pattern
	MaxWord    = 100  // a command verb, a role, a type, an id
	MaxLine    = 1000 // one-line fields that go into keys: a fact's key, an accessible name
)

// Text returns the problem with s as the value of field, or "" when there is
// none: s must be valid UTF-8, at most max runes long, and hold no control
// character (newlines and tabs are allowed when multiline is set).
func Text(field, s string, max int, multiline bool) string {
	if !utf8.ValidString(s) {
		return fmt.Sprintf("%s is not valid UTF-8", field)
	}
	n := 0
	for _, r := range s {
		n++
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\t' || r == '\r')) {
			return fmt.Sprintf("%s holds a control character (%U)", field, r)
		}
	}
	if n > max {
		return fmt.Sprintf("%s is %d characters long (at most %d)", field, n, max)
	}
	return ""
}

// ID returns the problem with s as an id given from outside, or "": 1 to
// MaxWord characters of ASCII letters, digits, '_', '-', '.' and ':'.
func ID(field, s string) string {
	if s == "" {
		return field + " is empty"
	}
	if len(s) > MaxWord {
		return fmt.Sprintf("%s is %d characters long (at most %d)", field, len(s), MaxWord)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':') {
			return fmt.Sprintf("%s %q may hold only letters, digits and _ - . :", field, s)
		}
	}
	return ""
}
