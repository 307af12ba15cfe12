package redact

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SecretField reports whether an input is a secret field, whose typed value
// must never be stored: by its type (password), its autocomplete tokens
// (current-password, new-password, one-time-code, cc-number, cc-csc,
// cc-exp…, any cc-…) or its name, id or label (password, pass, passcode,
// passphrase, PIN, CVV/CVC/CSC, card number, security code, OTP, one-time
// code, token, API key, secret, private key, SSN; a password in the languages of the
// web's larger login pages: Passwort, Kennwort, mot de passe, contraseña,
// senha, wachtwoord, hasło, пароль, 密码, パスワード, 비밀번호 …).
func SecretField(inputType, autocomplete, name string) bool {
	if strings.EqualFold(strings.TrimSpace(inputType), "password") {
		return true
	}
	for _, t := range strings.Fields(strings.ToLower(autocomplete)) {
		switch {
		case t == "current-password", t == "new-password", t == "one-time-code", strings.HasPrefix(t, "cc-"):
			return true
		}
	}
	if name == "" {
		return false
	}
	var buf [96]byte
	return secretName(string(appendWords(buf[:0], name)))
}

// passwordWordList are the words and phrases for a password in
// secretWordList, in the languages of the web's larger login pages: the
// passwords in plain words (passwordPhrases) are found after these, but
// for the few that are ordinary words or abbreviations too.
var passwordWordList = []string{
	"password", "passwd", "pass", "pwd", "passcode", "pass code", "passphrase", "pass phrase",
	"passwort", "kennwort", "mot de passe", "mdp", "contraseña", "contrasena", "contrasenya", "senha",
	"palavra passe", "wachtwoord", "hasło", "haslo", "heslo", "jelszó", "jelszo", "lösenord", "losenord",
	"adgangskode", "passord", "salasana", "şifre", "sifre", "parolă", "κωδικός", "пароль", "סיסמה",
	"كلمة المرور", "รหัสผ่าน", "mật khẩu", "mat khau", "kata sandi",
}

// secretWordList are the words and phrases of a secret field's name, as
// appendWords writes them. SecretField and the assignment rule (password=…,
// Kennwort: …) both read this one list.
var secretWordList = append(slices.Clip(passwordWordList),
	"pin", "pin code", "pin number", "cvv", "cvv2", "cvc", "cvc2", "csc", "cid",
	"card number", "card no", "cc number", "cc num", "ccnum", "cardnumber", "security code", "card code",
	"verification code", "otp", "totp", "2fa", "mfa code", "one time code", "one time password", "one time passcode",
	"token", "api key", "apikey", "access key", "secret", "secret key", "private key",
	"ssn", "social security", "social security number", "tax id",
)

// secretScriptWords are a password in scripts written without spaces
// between words: a label "请输入密码" holds one among other words.
var secretScriptWords = []string{"密码", "密碼", "パスワード", "暗証番号", "비밀번호", "암호"}

// secretWords is secretWordList as a set; maxSecretWords is the most words
// one of its phrases has.
var secretWords, maxSecretWords = func() (map[string]bool, int) {
	m, most := map[string]bool{}, 0
	for _, w := range secretWordList {
		m[w] = true
		most = max(most, strings.Count(w, " ")+1)
	}
	return m, most
}()

// phraseStart marks the first bytes of secretWordList's phrases: a word
// that starts with another byte starts none, and costs no lookup.
var phraseStart = func() (t [256]bool) {
	for _, w := range secretWordList {
		t[w[0]] = true
	}
	return t
}()

// phraseTail holds the last words of secretWordList's phrases of more than
// one word ("passe" of "mot de passe"): only a name that ends with one
// may be such a phrase written with spaces.
var phraseTail = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range secretWordList {
		if i := strings.LastIndexByte(w, ' '); i >= 0 {
			m[w[i+1:]] = true
		}
	}
	return m
}()

// secretName reports whether w (a name as appendWords writes it) holds a secret
// word or phrase as whole words — spaces around it, not regexp's \b,
// which knows only ASCII letters ("contraseña", "пароль") — or a
// password in a script without spaces.
func secretName(w string) bool {
	return phraseIn(w, false) || scriptWord(w)
}

// scriptWord reports whether w holds one of secretScriptWords.
func scriptWord(w string) bool {
	if !nonASCII(w) {
		return false
	}
	for _, p := range secretScriptWords {
		if strings.Contains(w, p) {
			return true
		}
	}
	return false
}

// phraseIn reports whether words w hold a phrase of secretWords, whole
// words; with atEnd, only one that ends w.
func phraseIn(w string, atEnd bool) bool {
	_, end := nextPhrase(w, 0, atEnd)
	return end >= 0
}

// nextPhrase returns where the first phrase of secretWords that words w
// hold, the longest starting at the first word at or after from where
// one does, starts and ends (with
// atEnd, one that ends w), or -1, -1. It returns indexes, not the
// phrase, so that w, often a buffer on the caller's stack, does not
// escape.
func nextPhrase(w string, from int, atEnd bool) (int, int) {
	for i := from; i < len(w); {
		// A phrase starting at i ends at one of the next spaces or at the end.
		// The longest: "pass code", not "pass".
		j, found := i, -1
		for n := range maxSecretWords {
			if n == 0 && !phraseStart[w[i]] {
				break
			}
			k := strings.IndexByte(w[j:], ' ')
			end := len(w)
			if k >= 0 {
				end = j + k
			}
			if (!atEnd || end == len(w)) && secretWords[w[i:end]] {
				found = end
			}
			if k < 0 {
				break
			}
			j = end + 1
		}
		if found >= 0 {
			return i, found
		}
		k := strings.IndexByte(w[i:], ' ')
		if k < 0 {
			break
		}
		i += k + 1
	}
	return -1, -1
}

func nonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// appendWords appends name to dst lower-cased with its words split:
// camelCase, snake_case, kebab-case and punctuation become single spaces
// ("cardNumber" → "card number", "user[pass_word]" → "user pass word").
// A caller with a buffer on its stack splits a name without allocating.
func appendWords(dst []byte, name string) []byte {
	prevLower, space := false, true
	start := len(dst)
	for i := 0; i < len(name); {
		r, size := rune(name[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(name[i:])
		}
		i += size
		switch {
		case r < utf8.RuneSelf && r >= 'A' && r <= 'Z', r >= utf8.RuneSelf && unicode.IsUpper(r):
			if prevLower && !space {
				dst = append(dst, ' ')
			}
			dst = utf8.AppendRune(dst, unicode.ToLower(r))
			prevLower, space = false, false
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9'):
			dst = append(dst, byte(r))
			prevLower, space = r >= 'a', false
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)): // a mark: Thai and Devanagari vowels
			dst = utf8.AppendRune(dst, r)
			prevLower, space = unicode.IsLower(r), false
		default:
			if !space {
				dst = append(dst, ' ')
			}
			prevLower, space = false, true
		}
	}
	if len(dst) > start && dst[len(dst)-1] == ' ' {
		dst = dst[:len(dst)-1]
	}
	return dst
}
