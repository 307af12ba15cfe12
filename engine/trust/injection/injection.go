// Package injection decides whether text that came from outside (an import, an
// action log's errors, a page, an API caller) may be shown to a model as
// browser advice. Memory is put into every prompt; a lesson that says
// "ignore all previous instructions", carries a link to another site, or
// hides characters a person cannot see would be obeyed, or followed, on
// every later run. Text that fails the screen is quarantined by the store
// that received it: kept, listed, never shown, until a person approves it.
//
// The screen is deliberately narrow: it looks for the shapes of injected
// instructions, not for bad advice. Real lessons ("Dismiss the cookie
// banner before clicking Search", "If fill fails with \"element is not an
// input\", try click instead") pass; the table in injection_test.go measures
// both kinds of error.
package injection

import (
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/engine-dev/engine/engine/trust/redact"

	"github.com/engine-dev/engine/engine/domain"
)

// MaxAdvice is the longest text that passes as advice, in characters. Real
// lessons are a sentence or two (the seeds are 60–170 characters); a page
// of text is not advice.
const MaxAdvice = 600

// Options say what the text is about.
type Options struct {
	// Domain is the host the text is bound to ("" for none): links and
	// addresses within its site are that site's own and pass.
	Domain string
}

// Text returns why text must not be shown to a model, or "" when it may.
func Text(text string, o Options) string {
	if n := utf8.RuneCountInString(text); n > MaxAdvice {
		return fmt.Sprintf("over-long: %d characters (advice is at most %d)", n, MaxAdvice)
	}
	for _, r := range text {
		if invisible(r) {
			return fmt.Sprintf("an invisible or control character (%U)", r)
		}
	}
	lower := strings.ToLower(text)
	if strings.Contains(lower, "[") {
		// What redaction left (engine/trust/redact's markers) is the engine's
		// own word, not the text's: "Type [email] then the password" is
		// no request to email a password.
		lower = markers.Replace(lower)
	}
	for _, p := range patterns() {
		if !p.mayMatch(lower) {
			continue
		}
		if m := p.re.FindString(lower); m != "" {
			return fmt.Sprintf("%s (%q)", p.what, strings.TrimSpace(m))
		}
	}
	if host := foreignLink(text, lower, o.Domain); host != "" {
		return fmt.Sprintf("a link or address of another site (%s)", host)
	}
	return ""
}

// markers neutralises the redaction markers before matching.
var markers = strings.NewReplacer(redact.Email, "[x]", redact.Phone, "[x]", redact.Secret, "[x]")

// invisible reports characters a person reading the text cannot see but a
// model reads: controls (newline and tab aside), zero-width and
// bidirectional formatting characters, Unicode tags.
func invisible(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case unicode.IsControl(r):
		return true
	case unicode.Is(unicode.Cf, r): // zero-width, bidi controls, tags, BOM
		return true
	case r >= 0xE0000 && r <= 0xE007F:
		return true
	}
	return false
}

type pattern struct {
	what string
	// any lists words one of which every match holds: the regular
	// expression runs only on text that has one (a plain substring search
	// is ~100× cheaper than the expressions' bounded repetitions).
	any []string
	re  *regexp.Regexp
}

func (p pattern) mayMatch(lower string) bool {
	for _, w := range p.any {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// patterns are matched against the lower-cased text. Each names a shape
// of text aimed at the model rather than at the page.
var patterns = sync.OnceValue(func() []pattern {
	return []pattern{
		{"instructions aimed at the model", []string{"ignore", "disregard", "forget", "override", "bypass"}, regexp.MustCompile(
			`\b(ignore|disregard|forget|override|bypass)\b[^.]{0,40}\b(previous|prior|above|earlier|all|your|system|safety|the)\b[^.]{0,30}\b(instructions?|prompts?|rules|guidelines|directions|context)\b`)},
		{"instructions aimed at the model", []string{"you ", "act as", "pretend", "instruction", "developer mode", "jailbreak"}, regexp.MustCompile(
			`\b(you are now|you must now|from now on,? you|act as (an?|the) |pretend (to be|you are)|new instructions?:|developer mode|jailbreak)`)},
		{"a role or system marker", []string{":", "<|", "[inst", "[/inst", "<<", "###", "system prompt"}, regexp.MustCompile(
			`(^|\n|\s)(system|assistant|user|developer)\s*:|<\|im_(start|end)\|>|\[/?inst\]|<</?sys>>|<\|(system|assistant|user|endoftext)\|>|###\s*(system|instruction)|\bsystem prompt\b`)},
		{"a request to reveal or send data", []string{"password", "credential", "api", "token", "secret", "cookie", "session", "system prompt", "instructions", "card"}, regexp.MustCompile(
			`\b(reveal|print|show|repeat|output|leak|send|post|upload|exfiltrate|forward|email|transmit)\b[^.]{0,40}\b(password|passwords|credentials?|api[ _-]?keys?|tokens?|secrets?|cookies?|session|system prompt|instructions|credit card|card numbers?)\b`)},
		{"a request to reveal or send data", []string{"exfiltrat"}, regexp.MustCompile(`\bexfiltrat`)},
		{"code or markup", []string{"<", "javascript:", "data:", "onerror", "onload", "onclick", "```", "${", "{{", "eval", "fetch", "document.", "window.", "require", "import", "curl", "wget", "rm ", "drop"}, regexp.MustCompile(
			"<\\s*/?\\s*(script|iframe|img|svg|object|embed|style|a|div|form|input|meta|link)\\b|javascript:|data:text/html|\\bon(error|load|click)\\s*=|```|\\$\\{|\\{\\{|\\beval\\s*\\(|\\bfetch\\s*\\(|\\bdocument\\.(cookie|location)|\\bwindow\\.location|\\brequire\\s*\\(|\\bimport\\s*\\(|\\bcurl\\s+-|\\bwget\\s+http|\\brm\\s+-rf\\b|;\\s*drop\\s+table")},
	}
})

// linkRE finds URLs and bare host names with a path or scheme, and email
// addresses, in text.
var linkRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^\s"'<>)]+|www\.[^\s"'<>)]+|[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,})`)
})

// foreignLink returns the host of the first URL or email address in text
// (lower is text lower-cased) that is not within own's site, or "".
func foreignLink(text, lower, own string) string {
	ownSite := ""
	if own != "" {
		if h, err := domain.Host(own); err == nil {
			ownSite = domain.Site(h)
		}
	}
	if !strings.Contains(text, "://") && !strings.Contains(text, "@") && !strings.Contains(lower, "www.") {
		return ""
	}
	for _, m := range linkRE().FindAllString(text, -1) {
		host := ""
		switch {
		case strings.Contains(m, "@") && !strings.Contains(m, "://"):
			if a, err := mail.ParseAddress(m); err == nil {
				host = a.Address[strings.LastIndexByte(a.Address, '@')+1:]
			} else {
				host = m[strings.LastIndexByte(m, '@')+1:]
			}
		default:
			u := m
			if !strings.Contains(u, "://") {
				u = "http://" + u
			}
			p, err := url.Parse(u)
			if err != nil || p.Hostname() == "" {
				return m
			}
			host = p.Hostname()
		}
		h, err := domain.Host(host)
		if err != nil {
			return host
		}
		if ownSite == "" || domain.Site(h) != ownSite {
			return h
		}
	}
	return ""
}
