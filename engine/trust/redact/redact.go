// Package redact removes secrets from text before it is stored: the values a
// run typed into secret fields (wherever they turn up later, as typed or
// escaped), well-known secret shapes (API keys, bearer tokens, JWTs, private
// keys, passwords in URLs and assignments, payment card numbers by Luhn), and
// by default email addresses and phone numbers. Memory goes into every later
// prompt and run folders are read by people and tools, so a secret written
// once would leak on every read.
//
// Redaction is conservative about what it touches: ids, hosts, selectors,
// dates, prices, versions and order numbers pass unchanged (the tests pin a
// table of them), and a text with nothing to redact is returned as is,
// without allocating.
package redact

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Markers put in place of what was removed.
const (
	// Secret replaces a secret value or a secret shape.
	Secret = "[redacted]"
	// Email replaces an email address (unless Options.KeepContacts).
	Email = "[email]"
	// Phone replaces a phone number (unless Options.KeepContacts).
	Phone = "[phone]"
	// SecretSlot stands for a secret value in a stored trajectory step and
	// in what is written from one (a flow fact): a replay fills it in.
	SecretSlot = "{{secret}}"
)

// secretUserinfo is Secret as a URL's userinfo password (percent-escaped:
// url.Parse reads it back as Secret).
const secretUserinfo = "%5Bredacted%5D"

// minValue is the shortest typed value removed, in bytes: shorter ones
// ("1", "ok") would blank ordinary text everywhere.
const minValue = 3

// rounds bounds the passes String makes until its output is stable (a
// replacement can form a shape with its neighbours, rarely).
const rounds = 4

// Options configure a Redactor.
type Options struct {
	// KeepContacts keeps email addresses and phone numbers
	// (ENGINE_KEEP_CONTACTS=1).
	KeepContacts bool
}

// Redactor removes secrets from text. It is safe for concurrent use; a nil
// *Redactor redacts shapes with default options.
type Redactor struct {
	opts Options
	mu   sync.Mutex // serialises Add
	// vals holds every form of every added value, longest first; replaced
	// whole on Add so String reads it without a lock.
	vals atomic.Pointer[[]string]
	n    atomic.Int64
	seen map[string]bool // added values, under mu
}

// New returns a Redactor with opts.
func New(opts Options) *Redactor {
	return &Redactor{opts: opts}
}

// Add records a value typed into a secret field: String removes it wherever
// it appears later, as typed and as escaped in JSON, Go-quoted and URL
// text. Values shorter than 3 bytes, or that are part of a marker, are
// ignored.
func (r *Redactor) Add(value string) {
	if r == nil || len(value) < minValue || marker(value) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[value] {
		return
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[value] = true
	var vals []string
	if p := r.vals.Load(); p != nil {
		vals = slices.Clone(*p)
	}
	for _, f := range forms(value) {
		if len(f) >= minValue && !marker(f) && !slices.Contains(vals, f) {
			vals = append(vals, f)
		}
	}
	// Longest first: a value that contains another is removed whole.
	slices.SortStableFunc(vals, func(a, b string) int { return len(b) - len(a) })
	r.vals.Store(&vals)
	r.n.Add(1)
}

// Secrets returns how many values were added.
func (r *Redactor) Secrets() int {
	if r == nil {
		return 0
	}
	return int(r.n.Load())
}

// String returns s with the added values, the secret shapes and (unless
// KeepContacts) contacts replaced by their markers. s itself is returned,
// without allocating, when there is nothing to replace.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	var vals []string
	var opts Options
	if r != nil {
		opts = r.opts
		if p := r.vals.Load(); p != nil {
			vals = *p
		}
	}
	for range rounds {
		t := shapes(values(s, vals), opts)
		if t == s {
			break
		}
		s = t
	}
	return s
}

// values returns s with every occurrence of vals replaced by Secret.
func values(s string, vals []string) string {
	for _, v := range vals {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Secret)
		}
	}
	return s
}

// forms returns v as typed and as it appears escaped in JSON (with and
// without HTML escaping), in a Go-quoted string and in a URL.
func forms(v string) []string {
	out := []string{v}
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if b, err := json.Marshal(v); err == nil {
		add(string(b[1 : len(b)-1]))
	}
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		j := strings.TrimSuffix(sb.String(), "\n")
		add(j[1 : len(j)-1])
	}
	q := strconv.Quote(v)
	add(q[1 : len(q)-1])
	add(url.QueryEscape(v))
	add(url.PathEscape(v))
	return out
}

// marker reports whether v is part of a marker: removing it would put it
// back in every replacement.
func marker(v string) bool {
	return strings.Contains(Secret, v) || strings.Contains(Email, v) || strings.Contains(Phone, v)
}
