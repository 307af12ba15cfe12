package redact

import (
	"regexp"
	"strings"
	"sync"
)

// A rule is one secret shape: re runs only when gate, a few substring
// searches, says the text may hold it (a substring search is far cheaper
// than an expression); repl returns what replaces a match (m holds its
// submatch indexes in s), which may be the match itself to keep it.
type rule struct {
	gate func(s string) bool
	re   *regexp.Regexp
	repl func(s string, m []int) string
}

// rules are the secret shapes, in the order they run: whole tokens before
// the assignments and URLs that may hold them. Compiled on first use.
var rules = sync.OnceValue(func() []rule {
	whole := func(string, []int) string { return Secret }
	return []rule{
		// PEM private key blocks, also when cut short or JSON-escaped.
		{
			gate: func(s string) bool { return strings.Contains(s, "-----BEGIN") },
			re:   regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:(?s:.*?)-----END [A-Z0-9 ]*PRIVATE KEY-----|[A-Za-z0-9+/=\s\\]*)`),
			repl: whole,
		},
		// JSON web tokens: header.payload.signature, both JSON objects.
		{
			gate: func(s string) bool { return strings.Contains(s, "eyJ") },
			re:   regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`),
			repl: whole,
		},
		// Well-known API keys by their prefixes.
		{
			gate: keyGate,
			re:   regexp.MustCompile(`\b(?:sk-[A-Za-z0-9_-]{20,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}\b|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|glpat-[0-9A-Za-z_-]{20,})`),
			repl: func(s string, m []int) string {
				if !hasDigit(s[m[0]:m[1]]) { // sk-learn-for-beginners-tutorial is a slug
					return s[m[0]:m[1]]
				}
				return Secret
			},
		},
		// Bearer tokens: the scheme is kept, the token goes.
		{
			gate: func(s string) bool { return strings.Contains(s, "earer") || strings.Contains(s, "EARER") },
			re:   regexp.MustCompile(`(?i)\b(bearer\s+)([A-Za-z0-9._~+/=-]{8,})`),
			repl: func(s string, m []int) string {
				tok := s[m[4]:m[5]]
				if !hasDigit(tok) && len(tok) < 32 { // "Bearer authentication"
					return s[m[0]:m[1]]
				}
				return s[m[2]:m[3]] + Secret
			},
		},
		// HTTP basic credentials.
		{
			gate: func(s string) bool { return strings.Contains(s, "asic") || strings.Contains(s, "ASIC") },
			re:   regexp.MustCompile(`(?i)(authorization\s*:\s*basic\s+)([A-Za-z0-9+/]{4,}=*)`),
			repl: keep1,
		},
		// A password in a URL's userinfo: the user is kept.
		{
			gate: func(s string) bool { return strings.Contains(s, "://") && strings.Contains(s, "@") },
			re:   regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@?#"'<>]+:)([^/\s@?#"'<>]+)@`),
			repl: func(s string, m []int) string { return s[m[2]:m[3]] + Secret + "@" },
		},
		// Secret values in URL queries and fragments: the name is kept.
		{
			gate: func(s string) bool { return strings.Contains(s, "=") && strings.ContainsAny(s, "?&#;") },
			re:   regexp.MustCompile(`(?i)([?&#;](?:access_token|refresh_token|id_token|auth_token|token|api_key|apikey|api-key|key|password|passwd|pwd|pass|secret|client_secret|sig|signature|auth|session|sessionid|session_id|sid|code|otp|jwt|x-amz-signature|x-amz-credential|x-amz-security-token)=)([^&#\s"'<>\[\]\\]+)`),
			repl: keep1,
		},
		// Assignments: password=x, "api_key": "x", X-Api-Key: x. The name is
		// kept. After a colon an unquoted value must hold a digit, so prose
		// ("Password: enter at least 8 characters") and selectors
		// (#password:focus) pass.
		{
			gate: assignGate,
			re:   regexp.MustCompile(`(?i)\b((?:[a-z0-9]+[_.-])*(?:password|passwd|pwd|passcode|passphrase|secret|api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|auth[_-]?token|token|private[_-]?key|pin)(?:[_-][a-z0-9]+)*["']?\s*([:=])\s*)("(?:[^"\\]|\\.)+"|'[^']+'|[^\s"'&,;\[\]<>(){}]+)`),
			repl: func(s string, m []int) string {
				v := s[m[6]:m[7]]
				switch {
				case v[0] == '"' || v[0] == '\'':
					if v[1:len(v)-1] == Secret {
						return s[m[0]:m[1]]
					}
					return s[m[2]:m[3]] + v[:1] + Secret + v[:1]
				case s[m[4]] == ':' && !hasDigit(v):
					return s[m[0]:m[1]]
				}
				return s[m[2]:m[3]] + Secret
			},
		},
	}
})

// keep1 keeps the first group and replaces the rest of the match.
func keep1(s string, m []int) string { return s[m[2]:m[3]] + Secret }

// keyPrefixes start the API keys rules() knows.
var keyPrefixes = []string{"sk-", "sk_", "rk_", "pk_", "AKIA", "ASIA", "ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_", "xox", "AIza", "glpat-"}

func keyGate(s string) bool {
	if !strings.ContainsAny(s, "-_AI") {
		return false
	}
	for _, p := range keyPrefixes {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// assignWords are lower-case stems one of which every assignment holds.
var assignWords = []string{"pass", "pwd", "secret", "key", "token", "pin"}

func assignGate(s string) bool {
	if !strings.ContainsAny(s, ":=") {
		return false
	}
	for _, w := range assignWords {
		if containsFold(s, w) {
			return true
		}
	}
	return false
}

// containsFold reports whether s holds word (lower-case ASCII) in any case.
func containsFold(s, word string) bool {
	lo, up := word[0], word[0]-'a'+'A'
	for i := 0; i+len(word) <= len(s); i++ {
		j := strings.IndexByte(s[i:], lo)
		if k := strings.IndexByte(s[i:], up); k >= 0 && (j < 0 || k < j) {
			j = k
		}
		if j < 0 {
			return false
		}
		i += j
		if i+len(word) <= len(s) && strings.EqualFold(s[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isWord reports letters, digits and '_': a number glued to them is part of
// an identifier, not a card or a phone number.
func isWord(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

// apply replaces every match of r in s by r.repl's answer.
func (r rule) apply(s string) string {
	if !r.gate(s) {
		return s
	}
	ms := r.re.FindAllStringSubmatchIndex(s, -1)
	if ms == nil {
		return s
	}
	var b strings.Builder
	last, replaced := 0, false
	for _, m := range ms {
		rep := r.repl(s, m)
		if rep == s[m[0]:m[1]] {
			continue
		}
		if !replaced {
			b.Grow(len(s))
			replaced = true
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(rep)
		last = m[1]
	}
	if !replaced {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// shapes returns s with the secret shapes, cards and (unless
// o.KeepContacts) contacts replaced.
func shapes(s string, o Options) string {
	for _, r := range rules() {
		s = r.apply(s)
	}
	digits := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			digits++
		}
	}
	if digits >= 13 {
		s = cards(s)
	}
	if o.KeepContacts {
		return s
	}
	s = emailRule().apply(s)
	if digits >= 8 {
		s = phoneRule().apply(s)
	}
	return s
}
