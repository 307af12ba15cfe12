package redact

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// SecretField reports whether an input is a secret field, whose typed value
// must never be stored: by its type (password), its autocomplete tokens
// (current-password, new-password, one-time-code, cc-number, cc-csc,
// cc-exp…, any cc-…) or its name, id or label (password, passcode,
// passphrase, PIN, CVV/CVC/CSC, card number, security code, OTP, one-time
// code, token, API key, secret, SSN).
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
	return name != "" && secretName().MatchString(words(name))
}

// secretName matches the words of a secret field's name.
var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(password|passwd|passwort|pwd|passcode|pass code|passphrase|pass phrase|pin|pin code|pin number|cvv2?|cvc2?|csc|cid|card number|card no|cc number|cc num|ccnum|cardnumber|security code|card code|verification code|otp|totp|2fa|mfa code|one time code|one time password|one time passcode|token|api key|apikey|access key|secret|secret key|ssn|social security( number)?|tax id)\b`)
})

// words returns name lower-cased with its words split: camelCase, snake_case,
// kebab-case and punctuation become single spaces ("cardNumber" → "card
// number", "user[pass_word]" → "user pass word").
func words(name string) string {
	var b strings.Builder
	b.Grow(len(name) + 8)
	prevLower, space := false, true
	for _, r := range name {
		switch {
		case unicode.IsUpper(r):
			if prevLower && !space {
				b.WriteByte(' ')
			}
			b.WriteRune(unicode.ToLower(r))
			prevLower, space = false, false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
			prevLower, space = unicode.IsLower(r), false
		default:
			if !space {
				b.WriteByte(' ')
			}
			prevLower, space = false, true
		}
	}
	return b.String()
}
