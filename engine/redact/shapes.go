package redact

import (
	"regexp"
	"strings"
	"sync"
)

// A rule is one secret shape. Its expression never runs over a whole text
// that cannot hold the shape (a substring search is ~100× cheaper than an
// expression): either gate, a few substring searches, says the text may
// hold it and re runs over the text, or at finds the places a match may
// start (an '=', an '@', a digit) and re, anchored with ^, runs from each.
// repl returns what replaces a match (m holds its submatch indexes in s),
// which may be the match itself to keep it.
type rule struct {
	gate func(s string) bool
	// at returns the first place at or after i where a match may start, or
	// -1; nil: re runs over the whole text.
	at   func(s string, i int) int
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
			at:   queryAt,
			re:   regexp.MustCompile(`^(?i)([?&#;](?:access_token|refresh_token|id_token|auth_token|token|api_key|apikey|api-key|key|password|passwd|pwd|pass|secret|client_secret|sig|signature|auth|session|sessionid|session_id|sid|code|otp|jwt|x-amz-signature|x-amz-credential|x-amz-security-token)=)([^&#\s"'<>\[\]\\]+)`),
			repl: keep1,
		},
		// Assignments: password=x, "api_key": "x", X-Api-Key: x. The name is
		// kept. After a colon an unquoted value must hold a digit, so prose
		// ("Password: enter at least 8 characters") and selectors
		// (#password:focus) pass.
		{
			at: assignAt,
			re: regexp.MustCompile(`^(?i)((?:[a-z0-9]+[_.-])*(?:password|passwd|pwd|passcode|passphrase|secret|api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|auth[_-]?token|token|private[_-]?key|pin)(?:[_-][a-z0-9]+)*["']?\s*([:=])\s*)("(?:[^"\\]|\\.)+"|'[^']+'|[^\s"'&,;\[\]<>(){}]+)`),
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

// queryAt returns where a URL query or fragment parameter whose value
// may be secret starts ("?token="), at or after i, or -1.
func queryAt(s string, i int) int {
	for {
		e := strings.IndexByte(s[i:], '=')
		if e < 0 {
			return -1
		}
		e += i
		k := e
		for k > 0 && (isWord(s[k-1]) || s[k-1] == '-') {
			k--
		}
		if k > i && k < e && strings.IndexByte("?&#;", s[k-1]) >= 0 && queryNames[strings.ToLower(s[k:e])] {
			return k - 1
		}
		i = e + 1
	}
}

// queryNames are the parameters whose values queryAt's rule removes.
var queryNames = map[string]bool{}

func init() {
	for _, n := range strings.Split("access_token refresh_token id_token auth_token token api_key apikey api-key key password passwd pwd pass secret client_secret sig signature auth session sessionid session_id sid code otp jwt x-amz-signature x-amz-credential x-amz-security-token", " ") {
		queryNames[n] = true
	}
}

// assignWords are lower-case stems one of which every assignment's name
// holds.
var assignWords = []string{"pass", "pwd", "secret", "key", "token", "pin"}

// assignAt returns where a name that may be assigned a secret starts
// ("db_password =", "\"api_key\":"), at or after i, or -1.
func assignAt(s string, i int) int {
	for {
		e := strings.IndexAny(s[i:], ":=")
		if e < 0 {
			return -1
		}
		e += i
		k := e
		for k > 0 && (s[k-1] == ' ' || s[k-1] == '\t') {
			k--
		}
		if k > 0 && (s[k-1] == '"' || s[k-1] == '\'') {
			k--
		}
		end := k
		for k > 0 && (isWord(s[k-1]) || s[k-1] == '-' || s[k-1] == '.') {
			k--
		}
		if k >= i && k < end {
			for _, w := range assignWords {
				if containsFold(s[k:end], w) {
					return k
				}
			}
		}
		i = e + 1
	}
}

// containsFold reports whether s holds word (lower-case ASCII) in any case.
func containsFold(s, word string) bool {
	return indexFold(s, word) >= 0
}

// indexFold returns the index of the first word (lower-case ASCII) in s in
// any case, or -1.
func indexFold(s, word string) int {
	lo, up := word[0], word[0]-'a'+'A'
	nlo, nup := -2, -2 // next index of lo and up at or after i; -1: none
	for i := 0; i+len(word) <= len(s); {
		if nlo != -1 && nlo < i {
			if nlo = strings.IndexByte(s[i:], lo); nlo >= 0 {
				nlo += i
			}
		}
		if nup != -1 && nup < i {
			if nup = strings.IndexByte(s[i:], up); nup >= 0 {
				nup += i
			}
		}
		j := nlo
		if j < 0 || nup >= 0 && nup < j {
			j = nup
		}
		if j < 0 || j+len(word) > len(s) {
			return -1
		}
		if strings.EqualFold(s[j:j+len(word)], word) {
			return j
		}
		i = j + 1
	}
	return -1
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
	var ms [][]int
	if r.at == nil {
		if !r.gate(s) {
			return s
		}
		if ms = r.re.FindAllStringSubmatchIndex(s, -1); ms == nil {
			return s
		}
	} else {
		for i := 0; i < len(s); {
			c := r.at(s, i)
			if c < i { // none (-1); at never goes back
				break
			}
			m := r.re.FindStringSubmatchIndex(s[c:])
			if m == nil {
				i = c + 1
				continue
			}
			for k := range m {
				if m[k] >= 0 {
					m[k] += c
				}
			}
			ms = append(ms, m)
			i = max(m[1], c+1)
		}
		if ms == nil {
			return s
		}
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
