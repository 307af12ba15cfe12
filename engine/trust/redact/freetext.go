package redact

import "strings"

// A password in plain words: "log in with password NAVgoalF66", "the
// password is 'hunter'", "Passwort ist X9-abc". After a password word
// (password, passwd, passcode, passphrase, Passwort, passord, mot de
// passe, palavra passe), optionally "is", "was", "to", "ist", "est" or
// "es" and a ':' or '=', comes a value that is removed when it is quoted
// (any quoted value on the line) or looks like a credential: a token of
// at least 6 bytes, no spaces, with a digit or one of hasSymbol's
// symbols. Ordinary phrases pass: "reset password help", "change your
// password in settings", "password field is read-only", "the password is
// required", "password e37" (a ref).

// minFreeValue is the shortest unquoted value passwordWords removes.
const minFreeValue = 6

// passwordWords are the words (lower case) after which passwordPhrases
// looks for a value; each starts with "pass", the one substring it
// searches for.
var passwordWords = map[string]bool{"password": true, "passwd": true, "passcode": true, "passphrase": true,
	"passwort": true, "passord": true, "passe": true}

// connectors may stand between a password word and its value.
var connectors = map[string]bool{"is": true, "was": true, "to": true, "ist": true, "est": true, "es": true, "=": true, ":": true}

// passwordPhrases returns s with the values of passwords in plain words
// replaced by Secret.
func passwordPhrases(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		j := indexFold(s[i:], "pass")
		if j < 0 {
			break
		}
		j += i
		i = j + 4
		if j > 0 && isWord(s[j-1]) {
			continue // compass, bypass
		}
		w := j
		for w < len(s) && isWord(s[w]) && s[w] < 0x80 {
			w++
		}
		word := strings.ToLower(s[j:w])
		if !passwordWords[word] || word == "passe" && !frenchPasse(s[:j]) {
			continue
		}
		vs, ve := freeValue(s, w)
		if vs < 0 {
			continue
		}
		if last == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:vs])
		b.WriteString(Secret)
		last, i = ve, ve
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// frenchPasse reports whether before (the text before "passe") ends with
// "mot de " or "palavra ".
func frenchPasse(before string) bool {
	t := strings.ToLower(before[max(0, len(before)-8):])
	return strings.HasSuffix(t, "mot de ") || strings.HasSuffix(t, "palavra ")
}

// freeValue returns where the value after a password word ending at w
// starts and ends (inside its quotes when quoted), or -1, -1 when what
// follows is no credential.
func freeValue(s string, w int) (int, int) {
	p := skipBlank(s, w)
	if p == w && p < len(s) && s[p] != ':' && s[p] != '=' {
		return -1, -1 // "password's", "passwords"
	}
	// One connector word, then one ':' or '=' ("is:", "=").
	if e := wordEnd(s, p); e > p && connectors[strings.ToLower(s[p:e])] && e < len(s) && (s[e] == ' ' || s[e] == ':' || s[e] == '=') {
		p = skipBlank(s, e)
	}
	if p < len(s) && (s[p] == ':' || s[p] == '=') {
		p = skipBlank(s, p+1)
	}
	if p == w || p >= len(s) {
		return -1, -1
	}
	if q := s[p]; q == '"' || q == '\'' || q == '`' {
		e := strings.IndexByte(s[p+1:], q)
		if e <= 0 {
			return -1, -1
		}
		v := s[p+1 : p+1+e]
		if strings.IndexByte(v, '\n') >= 0 || len(v) > 200 || strings.Contains(v, Secret) {
			return -1, -1
		}
		return p + 1, p + 1 + e
	}
	e := p
	for e < len(s) && s[e] != ' ' && s[e] != '\t' && s[e] != '\n' && s[e] != '\r' && s[e] != '"' && s[e] != '\'' && s[e] != '<' {
		e++
	}
	for e > p && strings.IndexByte(".,;:!?)]}", s[e-1]) >= 0 {
		e-- // the sentence's punctuation
	}
	v := s[p:e]
	if len(v) < minFreeValue || !hasDigit(v) && !hasSymbol(v) || strings.Contains(v, "[redacted") || strings.Contains(v, SecretSlot) ||
		strings.Contains(v, "://") || strings.IndexByte("([{<", v[0]) >= 0 {
		return -1, -1
	}
	return p, e
}

// skipBlank returns the index of the first byte at or after i that is no
// space or tab.
func skipBlank(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// wordEnd returns the end of the ASCII letters starting at i.
func wordEnd(s string, i int) int {
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z') {
		i++
	}
	return i
}
