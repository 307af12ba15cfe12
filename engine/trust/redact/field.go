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
// cc-exp…, any cc-…) or its name, id or label (password, pass, passcode,
// passphrase, PIN, CVV/CVC/CSC, card number, security code, OTP, one-time
// code, token, API key, secret, SSN; a password in the languages of the
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
	w := words(name)
	return secretName().MatchString(w) || secretScript().MatchString(w)
}

// secretName matches the words of a secret field's name. Its words are
// whole words of the name as words splits it (spaces around them, not
// regexp's \b, which knows only ASCII letters: "contraseña", "пароль").
var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^| )(password|passwd|pass|pwd|passcode|pass code|passphrase|pass phrase|pin|pin code|pin number|cvv2?|cvc2?|csc|cid|card number|card no|cc number|cc num|ccnum|cardnumber|security code|card code|verification code|otp|totp|2fa|mfa code|one time code|one time password|one time passcode|token|api key|apikey|access key|secret|secret key|ssn|social security( number)?|tax id|` +
		// a password in other languages
		`passwort|kennwort|mot de passe|mdp|contraseña|contrasena|contrasenya|senha|palavra passe|wachtwoord|hasło|haslo|heslo|jelszó|jelszo|lösenord|losenord|adgangskode|passord|salasana|şifre|sifre|parolă|κωδικός|пароль|סיסמה|كلمة المرور|รหัสผ่าน|mật khẩu|mat khau|kata sandi)(?: |$)`)
})

// secretScript matches a password in scripts written without spaces
// between words (a label "请输入密码" holds it among other words).
var secretScript = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`密码|密碼|パスワード|暗証番号|비밀번호|암호`)
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
