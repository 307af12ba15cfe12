// Package check holds the edge checks every store applies to text that
// comes from outside (imports, action logs, the CLI) before it is stored:
// valid UTF-8, no control characters where the text goes into keys or
// NUL-separated index entries, and bounded lengths. Each store wraps the
// problem it returns in its own bad-input error.
package check

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/keyspace"
)

// Field length limits, in runes (documented in docs/design/input.md, "Limits").
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

// Domain returns the host of d, a record's domain (a host or a URL, or
// the URL it may give instead of one), and "", or "" and the problem: d is
// empty (fallback names that URL: "give the domain or the <fallback>"),
// not a host, or a host of no site. Runs and sessions check their domain
// with it.
func Domain(d, fallback string) (host, problem string) {
	if d == "" {
		return "", "no domain: give the domain or the " + fallback
	}
	h, err := domain.Host(d)
	if err != nil {
		return "", fmt.Sprintf("domain: %v", err)
	}
	if domain.Site(h) == keyspace.Global {
		return "", fmt.Sprintf("domain %q is not a site", d)
	}
	return h, ""
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

// Fingerprint returns the problem with s as the value of field when it is
// not a structural fingerprint (engine/memory/fingerprint: up to 16 lower-case
// hex digits; empty for none), or "".
func Fingerprint(field, s string) string {
	ok := len(s) <= 16
	for _, r := range s {
		ok = ok && (r >= '0' && r <= '9' || r >= 'a' && r <= 'f')
	}
	if !ok {
		return fmt.Sprintf("%s %q is not a fingerprint (up to 16 hex digits)", field, s)
	}
	return ""
}

// Checked returns the problem with what a memory was checked against (its
// path, at most maxPath runes, and two fingerprints), or "".
func Checked(c engine.Checked, maxPath int) string {
	if p := Text("checked.path", c.Path, maxPath, false); p != "" {
		return p
	}
	if p := Fingerprint("checked.fingerprint", c.Fingerprint); p != "" {
		return p
	}
	return Fingerprint("checked.page", c.Page)
}

// Stale returns the problem with a stale mark, or "": a run id as long as
// a provenance field, a reason that is not empty, and, for a trajectory
// (withStep), the step it stopped at (1 or more).
func Stale(s engine.Stale, withStep bool) string {
	if p := Text("stale.run", s.Run, engine.MaxProvenanceField, false); p != "" {
		return p
	}
	if withStep && s.Step < 1 {
		return fmt.Sprintf("stale.step %d is not a step number (1 or more)", s.Step)
	}
	if strings.TrimSpace(s.Reason) == "" {
		return "stale.reason is empty"
	}
	return Text("stale.reason", s.Reason, MaxPattern, false)
}
