package redact

import (
	"bytes"
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
	// all and any are the bytes (bits of byteBit) the text must hold, all
	// of them and at least one of them, for the rule to look further.
	all, any uint32
	gate     func(s string) bool
	// at returns the first place at or after i where a match may start, or
	// -1; nil: re runs over the whole text.
	at func(s string, i int) int
	// re is the expression, compiled the first time a text passes the
	// rule's gates: most texts never need most rules, and compiling all of
	// them costs a short command a few per cent of its CPU.
	re   func() *regexp.Regexp
	repl func(s string, m []int) string
}

// lazy returns expr compiled on its first call.
func lazy(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// rules are the secret shapes, in the order they run: whole tokens before
// the assignments and URLs that may hold them. Each expression is compiled
// the first time a text passes its rule's gates.
var rules = sync.OnceValue(func() []rule {
	whole := func(string, []int) string { return Secret }
	return []rule{
		// JSON web tokens: header.payload.signature, both JSON objects.
		{
			all:  bitJ,
			gate: func(s string) bool { return strings.Contains(s, "eyJ") },
			re:   lazy(`\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`),
			repl: whole,
		},
		// Well-known API keys by their prefixes.
		{
			any:  bitDash | bitUnder | bitA,
			gate: keyGate,
			// An AWS key id has a fixed length and an upper-case prefix of its
			// own, so it is found glued to the text before it ("#xAKIA…");
			// the others need a word boundary before them.
			re: lazy(`\b(?:sk-[A-Za-z0-9_-]{20,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|glpat-[0-9A-Za-z_-]{20,})|(?:AKIA|ASIA)[0-9A-Z]{16}\b`),
			repl: func(s string, m []int) string {
				if !hasDigit(s[m[0]:m[1]]) { // sk-learn-for-beginners-tutorial is a slug
					return s[m[0]:m[1]]
				}
				return Secret
			},
		},
		// Bearer tokens: the scheme is kept, the token goes.
		{
			all:  bitB,
			gate: func(s string) bool { return strings.Contains(s, "earer") || strings.Contains(s, "EARER") },
			re:   lazy(`(?i)\b(bearer\s+)([A-Za-z0-9._~+/=-]{8,})`),
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
			all:  bitB | bitColon,
			gate: func(s string) bool { return strings.Contains(s, "asic") || strings.Contains(s, "ASIC") },
			re:   lazy(`(?i)(authorization\s*:\s*basic\s+)([A-Za-z0-9+/]{4,}=*)`),
			repl: keep1,
		},
		// A password in a URL's userinfo: the user is kept, and the marker
		// escaped as a URL's userinfo must be ("[" is not allowed there), so
		// the URL stays one: a run on a site behind basic auth is stored.
		{
			all:  bitAt | bitColon,
			gate: func(s string) bool { return strings.Contains(s, "://") },
			re:   lazy(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@?#"'<>]+:)([^/\s@?#"'<>]+)@`),
			repl: func(s string, m []int) string { return s[m[2]:m[3]] + secretUserinfo + "@" },
		},
		// Secret values in URL queries and fragments: the name is kept.
		{
			all:  bitEq | bitQuery,
			at:   queryAt,
			re:   lazy(`^(?i)([?&#;](?:` + strings.Join(queryNameList, "|") + `)=)([^&#\s"'<>\[\]\\]+)`),
			repl: keep1,
		},
		// Assignments: password=x, "api_key": "x", X-Api-Key: x, ssn: x,
		// Kennwort: x, mot de passe : x, Cookie: x (its first pair): a
		// name SecretField knows (assignAt finds it), then ':' or '='. The
		// name is kept. After a colon an unquoted value must hold a digit,
		// so prose ("Password: enter at least 8 characters") and selectors
		// (#password:focus) pass; after a short word that is also an
		// ordinary one (pass, pin, cid, mdp) alone, it must look like a
		// credential (credentialLike) after '=' too ("pass=through",
		// "pass: 3 of 5" pass).
		{
			at: assignAt,
			re: lazy(`^([^:=\n]*([:=])\s*)("(?:[^"\\]|\\.)+"|'[^']+'|[^\s"'&,;\[\]<>(){}]+)`),
			repl: func(s string, m []int) string {
				v := s[m[6]:m[7]]
				switch {
				case v[0] == '"' || v[0] == '\'':
					if v[1:len(v)-1] == Secret {
						return s[m[0]:m[1]]
					}
					return s[m[2]:m[3]] + v[:1] + Secret + v[:1]
				case s[m[4]] == ':' && !hasDigit(v), v == Secret:
					return s[m[0]:m[1]]
				case ambiguousName(s[m[2]:m[4]]) && !credentialLike(v):
					return s[m[0]:m[1]]
				}
				return s[m[2]:m[3]] + Secret
			},
		},
	}
})

// pemHead matches the line that starts a PEM private key block.
var pemHead = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----`)
})

// pemKeys returns s with PEM private key blocks replaced by Secret: from
// the BEGIN line to the END line, or, when the block is cut short, over
// the base64 (and escaped newlines) that follows. Each "-----END" is
// searched for once, so a text of many unterminated blocks stays linear.
func pemKeys(s string) string {
	var b strings.Builder
	last, replaced := 0, false
	nextEnd := -2 // index of the next "-----END" at or after i; -1: none
	for i := 0; ; {
		j := strings.Index(s[i:], "-----BEGIN")
		if j < 0 {
			break
		}
		j += i
		h := pemHead().FindStringIndex(s[j:])
		if h == nil {
			i = j + 1
			continue
		}
		end := j + h[1]
		if nextEnd != -1 && nextEnd < end {
			if nextEnd = strings.Index(s[end:], "-----END"); nextEnd >= 0 {
				nextEnd += end
			}
		}
		if f := -1; nextEnd >= 0 {
			if f = strings.Index(s[nextEnd:min(len(s), nextEnd+60)], "PRIVATE KEY-----"); f >= 0 {
				end = nextEnd + f + len("PRIVATE KEY-----")
			}
		}
		if end == j+h[1] { // cut short: the base64 that follows
			for end < len(s) && (isWord(s[end]) && s[end] < 0x80 || strings.IndexByte("+/= \t\r\n\\", s[end]) >= 0) {
				end++
			}
		}
		if !replaced {
			b.Grow(len(s))
			replaced = true
		}
		b.WriteString(s[last:j])
		b.WriteString(Secret)
		last, i = end, end
	}
	if !replaced {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// keep1 keeps the first group and replaces the rest of the match.
func keep1(s string, m []int) string { return s[m[2]:m[3]] + Secret }

// keyGate reports whether s may hold an API key rules() knows: it looks
// only around the dashes, underscores and capital As that every key's
// prefix holds (sk- sk_ rk_ pk_ gh?_ github_pat_ xox?- glpat- AKIA ASIA
// AIza).
func keyGate(s string) bool {
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case '-':
			if j >= 2 && s[j-2:j] == "sk" || j >= 4 && s[j-4:j-1] == "xox" || j >= 5 && s[j-5:j] == "glpat" {
				return true
			}
		case '_':
			if j >= 2 && (s[j-2:j] == "sk" || s[j-2:j] == "rk" || s[j-2:j] == "pk") ||
				j >= 3 && s[j-3:j-1] == "gh" || j >= 6 && s[j-6:j] == "github" {
				return true
			}
		case 'A':
			if t := s[j:]; strings.HasPrefix(t, "AKIA") || strings.HasPrefix(t, "ASIA") || strings.HasPrefix(t, "AIza") {
				return true
			}
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
		if k > i && k < e && strings.IndexByte("?&#;", s[k-1]) >= 0 && queryNames()[strings.ToLower(s[k:e])] {
			return k - 1
		}
		i = e + 1
	}
}

// queryNameList are the URL parameters whose values are secret, as the
// rule's expression and queryAt both read them.
var queryNameList = strings.Fields("access_token refresh_token id_token auth_token token api_key apikey api-key key password passwd pwd pw pass passcode passphrase pin secret client_secret sig signature auth session sessionid session_id sid code otp jwt x-amz-signature x-amz-credential x-amz-security-token")

// queryNames are the parameters whose values queryAt's rule removes.
var queryNames = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, n := range queryNameList {
		m[n] = true
	}
	return m
})

// assignAt returns where a name that may be assigned a secret starts
// ("db_password =", "\"api_key\":", "mot de passe :"), at or after i, or
// -1: the name before a ':' or '=' (a quote and spaces between them) whose
// words hold a word or phrase of SecretField's list, or "cookie"; a name
// of several words separated by spaces ends with one ("security code").
func assignAt(s string, i int) int {
	for {
		e := i
		for e < len(s) && s[e] != ':' && s[e] != '=' {
			e++
		}
		if e == len(s) {
			return -1
		}
		k := e
		for k > i && (s[k-1] == ' ' || s[k-1] == '\t') {
			k--
		}
		if k > i && (s[k-1] == '"' || s[k-1] == '\'') {
			k--
		}
		end := k
		for k > i && (isWord(s[k-1]) || s[k-1] == '-' || s[k-1] == '.') {
			k--
		}
		if k < end {
			if n := assignName(s, i, k, end); n >= 0 {
				return n
			}
		}
		i = e + 1
	}
}

// assignName returns where the secret name ending at end starts: s[k:end]
// (one token) when its words hold a secret word, else the start of the
// up to maxSecretWords space-separated tokens before end whose words end
// with a secret phrase, not before i; -1 when neither.
func assignName(s string, i, k, end int) int {
	var buf [128]byte
	if end-k > 64 {
		return -1 // no name: a run of base64, a long path
	}
	if !hasLetter(s[k:end]) {
		return -1 // a number, a version, an IP address
	}
	w := appendWords(buf[:0], s[k:end])
	if len(w) == 0 {
		return -1
	}
	if secretName(string(w)) || phraseWord(string(w), "cookie") {
		return k
	}
	// "mot de passe", "security code": the tokens before, one space apart,
	// when the name ends with the last word of such a phrase.
	if !phraseTail[string(w[bytes.LastIndexByte(w, ' ')+1:])] {
		return -1
	}
	start := k
	for n := 1; n < maxSecretWords && start-1 > i && s[start-1] == ' ' && isWord(s[start-2]); n++ {
		j := start - 1
		for j > i && isWord(s[j-1]) {
			j--
		}
		start = j
	}
	if start == k {
		return -1
	}
	if phraseIn(string(appendWords(buf[:0], s[start:end])), true) {
		return start
	}
	return -1
}

// phraseWord reports whether words w hold word as a whole word.
func phraseWord(w, word string) bool {
	for {
		j := strings.Index(w, word)
		if j < 0 {
			return false
		}
		if (j == 0 || w[j-1] == ' ') && (j+len(word) == len(w) || w[j+len(word)] == ' ') {
			return true
		}
		w = w[j+1:]
	}
}

// ambiguousWords are secret words that are ordinary words too ("pass the
// ball", "step 2 pass: 3 of 5", "pin: top"): assigned to one of them
// alone, a value must look like a credential (credentialLike).
var ambiguousWords = map[string]bool{"pass": true, "pin": true, "cid": true, "mdp": true}

// ambiguousName reports whether the name of an assignment (up to its
// separator, a quote and spaces) is one of ambiguousWords alone:
// "user_pass" and "pass code" are no ordinary words.
func ambiguousName(name string) bool {
	var buf [128]byte
	return ambiguousWords[string(appendWords(buf[:0], name))]
}

// credentialLike reports whether v looks like a credential: letters and
// digits, or a symbol (hasSymbol), or 4 digits or more (a PIN).
func credentialLike(v string) bool {
	digits, letters := 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isDigit(c):
			digits++
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= 0x80:
			letters = true
		}
	}
	return digits > 0 && letters || digits >= 4 || hasSymbol(v)
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return true
		}
	}
	return false
}

// hasLetter reports whether s holds an ASCII letter or a non-ASCII byte
// (a letter, most likely).
func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 {
			return true
		}
	}
	return false
}

// hasSymbol reports whether s holds an ASCII symbol a credential may
// hold (not the '-', '.' and '/' of ordinary words, dates and paths).
func hasSymbol(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte("!#$%&*+=?@^_|~\\", s[i]) >= 0 {
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

// apply replaces every match of r in s by r.repl's answer; p is what s
// holds (survey).
func (r rule) apply(s string, p present) string {
	if p.bits&r.all != r.all || r.any != 0 && p.bits&r.any == 0 {
		return s
	}
	var ms [][]int
	if r.at == nil {
		if r.gate != nil && !r.gate(s) {
			return s
		}
		if ms = r.re().FindAllStringSubmatchIndex(s, -1); ms == nil {
			return s
		}
	} else {
		for i := 0; i < len(s); {
			c := r.at(s, i)
			if c < i { // none (-1); at never goes back
				break
			}
			m := r.re().FindStringSubmatchIndex(s[c:])
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

// Bits of the bytes rules look for first (byteBit).
const (
	bitDash uint32 = 1 << iota
	bitUnder
	bitA // 'A': AKIA, ASIA, AIza
	bitJ // 'J': eyJ
	bitB // 'b' or 'B': Bearer, Basic
	bitColon
	bitEq
	bitAt
	bitQuery // '?', '&', '#' or ';' before a URL parameter
)

// byteBit maps a byte to its bit, 0 for bytes no rule looks for.
var byteBit = func() (t [256]uint32) {
	for _, e := range []struct {
		c string
		b uint32
	}{{"-", bitDash}, {"_", bitUnder}, {"A", bitA}, {"J", bitJ}, {"bB", bitB}, {":", bitColon}, {"=", bitEq}, {"@", bitAt}, {"?&#;", bitQuery}} {
		for i := range len(e.c) {
			t[e.c[i]] = e.b
		}
	}
	return t
}()

// Bits of survey's table beside the rules' bytes.
const (
	bitDigit     uint32 = 1 << 16          // an ASCII digit
	bitWordByte  uint32 = 1 << 17          // isWord
	bitWordStart uint32 = bitWordByte << 1 // may start a password word (plainStart)
)

// surveyTab is byteBit with survey's own bits.
var surveyTab = func() (t [256]uint32) {
	for c := range t {
		t[c] = byteBit[c]
		if isDigit(byte(c)) {
			t[c] |= bitDigit
		}
		if isWord(byte(c)) {
			t[c] |= bitWordByte
		}
		if plainStart[c] {
			t[c] |= bitWordStart
		}
	}
	return t
}()

// present is what a text holds, from one pass over it: which of the
// bytes rules look for, how many digits, and whether it holds a password
// word (passwordPhrases has work).
type present struct {
	bits     uint32
	digits   int
	password bool
}

func survey(s string) present {
	var p present
	prev := uint32(0)
	for i := 0; i < len(s); i++ {
		x := surveyTab[s[i]]
		p.bits |= x
		p.digits += int(x / bitDigit & 1) // no branch on a digit
		// A byte that may start a password word after one that is no word
		// byte (bitWordStart is bitWordByte<<1), in one test: a branch per
		// byte costs.
		if x&^(prev<<1)&bitWordStart != 0 && i+5 <= len(s) {
			// plainWordAt's first test, inlined: most words fail it.
			if h := plainKey(s, i); plainKeys[h>>6]&(1<<(h&63)) != 0 && !p.password {
				p.password = plainWordAt(s, i) >= 0
			}
		}
		prev = x
	}
	return p
}

// shapes returns s with the secret shapes, cards and (unless
// o.KeepContacts) contacts replaced.
func shapes(s string, o Options) string {
	p := survey(s)
	if p.bits&bitDash != 0 {
		s = pemKeys(s)
	}
	for _, r := range rules() {
		s = r.apply(s, p) // a replacement only adds a marker's letters and brackets: p still holds
	}
	if p.password {
		s = passwordPhrases(s)
	}
	if p.digits >= 13 {
		s = cards(s)
	}
	if o.KeepContacts {
		return s
	}
	s = emailRule().apply(s, p)
	if p.digits >= 8 {
		s = phoneRule().apply(s, p)
	}
	return s
}
