package redact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Passwords in plain words lose their value: letters-only values that end
// their clause, words between the password word and a copula, and the
// password words of other languages.
func TestPasswordPhrases(t *testing.T) {
	for _, c := range plainCases {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// plainCases are passwords in plain words and what String makes of them
// (FuzzString starts from them too).
var plainCases = []struct{ in, want string }{
	// Letters only, ending the clause.
	{"the password is hunter", "the password is [redacted]"},
	{"The password is hunter.", "The password is [redacted]."},
	{"Password: hunter", "Password: [redacted]"},
	{"login with password sunshine", "login with password [redacted]"},
	{"Log in with the password sunshine, then open Orders.", "Log in with the password [redacted], then open Orders."},
	{"log in as bob; the password is sunshine\nthen open Orders", "log in as bob; the password is [redacted]\nthen open Orders"},
	{`{"answer":"signed in; the password is hunter"}`, `{"answer":"signed in; the password is [redacted]"}`},
	{"set the password to hunter", "set the password to [redacted]"},
	{"the password was changed to sunshine!", "the password was changed to [redacted]!"},
	{"the password has been reset to Winter2024", "the password has been reset to [redacted]"},
	{"the password is now hunter", "the password is now [redacted]"},
	{"Passwort lautet Geheimnis", "Passwort lautet [redacted]"},
	// Words between: whose password it is.
	{"the password for bob is x1", "the password for bob is [redacted]"},
	{"password of the admin account is Secr3t", "password of the admin account is [redacted]"},
	{"bob's password is x1", "bob's password is [redacted]"},
	{"the admin password is 4821", "the admin password is [redacted]"},
	{"the password to the admin panel is x1", "the password to the admin panel is [redacted]"},
	{"the password for bob: hunter", "the password for bob: [redacted]"},
	{"The password for bob@example.com is hunter", "The password for [email] is [redacted]"},
	{"Das Passwort für bob ist x1", "Das Passwort für bob ist [redacted]"},
	// Other languages.
	{"das Kennwort ist geheim123", "das Kennwort ist [redacted]"},
	{"Kennwort ist sonnenblume", "Kennwort ist [redacted]"},
	{"la contraseña es hunter2", "la contraseña es [redacted]"},
	{"La contraseña de bob es girasol", "La contraseña de bob es [redacted]"},
	{"le mot de passe est soleil", "le mot de passe est [redacted]"},
	{"Le mot de passe de l'admin est soleil.", "Le mot de passe de l'admin est [redacted]."},
	{"het wachtwoord is zonnebloem", "het wachtwoord is [redacted]"},
	{"a senha é girassol", "a senha é [redacted]"},
	{"la password è girasole", "la password è [redacted]"},
	{"пароль: солнце", "пароль: [redacted]"},
	{"Lösenord är solros", "Lösenord är [redacted]"},
	{"met wachtwoord zonnebloem inloggen", "met wachtwoord zonnebloem inloggen"}, // more prose follows
	{"iniciar sesión con contraseña girasol", "iniciar sesión con contraseña [redacted]"},
	{"the password on example.com is hunter", "the password on example.com is [redacted]"},
	{"salasana on kissa123", "salasana on [redacted]"},
}

// Texts about passwords that hold none stay exactly as they are: they are
// the failure→recovery lessons and page errors memory keeps.
func TestPasswordPhrasesProse(t *testing.T) {
	for _, s := range plainProse {
		if got := String(s); got != s {
			t.Errorf("String(%q) = %q, want it unchanged", s, got)
		}
	}
}

// plainProse are texts about passwords that hold none (FuzzString starts
// from them too).
var plainProse = []string{
	"the password is incorrect",
	"The password is incorrect. Try again.",
	"password is required",
	"the password is too short",
	"password must contain a digit",
	"password field is empty",
	"Password is case-sensitive",
	"your password has expired",
	"enter the password for bob",
	"reset password for bob",
	"If the login page reloads without an error, the password is wrong; ask the user instead of retrying.",
	`[DOM] Password field is not contained in a form: <input type="password" id="pw">`,
	"Enter your password to continue.",
	"Sign in with password manager",
	"login with password only",
	"Use a password manager.",
	"the password for bob is incorrect",
	"the password for this account is managed by IT",
	"the password for the account is stored in the vault.",
	"the password has been sent to your email",
	"password has been changed",
	"Password changed successfully",
	"Password: Show",
	"Password: required",
	"Password: at least 8 characters",
	"Password strength: weak",
	"the password is the same as the username",
	"the password is hunter and bob is the user", // a word after it: prose
	"change your password to something stronger",
	"reset the password to default",
	"password reset email",
	"Forgot password? Reset it here",
	"password expires in 30 days",
	"password is 8 characters long",
	"password is 8-64 characters",
	"Your password is too weak",
	"password is hidden by default",
	"enter password for bob: ",
	`the password is incorrect\nTry again`,
	"input#password:focus-visible",
	"autocomplete=new-password",
	"das Kennwort ist falsch",
	"Das Passwort ist zu kurz",
	"Kennwortlänge: 8",
	"la contraseña es incorrecta",
	"la contraseña no es válida",
	"le mot de passe est incorrect",
	"le mot de passe est trop court",
	"het wachtwoord is onjuist",
	"a senha é inválida",
	"Il mot de passe est requis.",
	"The password is Chrome's saved one",
	"Password: Medium",
	"log in with password autofill",
	"mit Passwort anmelden",
	"met wachtwoord inloggen",
	"Das Passwort ist verschlüsselt.",
	"la password è troppo corta",
	"a senha é necessária",
	"le mot de passe est erroné",
	"con contraseña temporal",
	"The password for bob is in the email.",
	"The password for the demo account is shown on the login page.",
	"Password: •••••••",
	"We keep your password on file.",
	"salasana on vaihdettava", // Finnish "on" is English too: letters only after it stay
}

// The real texts of the injection screen's corpora (lessons, page and
// browser errors, and the errors, lessons, facts and selectors captured
// from gym runs) hold no password in plain words: the rule changes none.
func TestPasswordPhrasesRealTexts(t *testing.T) {
	files, err := filepath.Glob("../injection/testdata/*.jsonl")
	if err != nil || len(files) < 3 {
		t.Fatalf("corpora: %v %v", files, err)
	}
	real := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var r struct{ Label, Text string }
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if r.Label != "real" {
				continue
			}
			real++
			if got := passwordPhrases(r.Text); got != r.Text {
				t.Errorf("%s: %q became %q", filepath.Base(f), r.Text, got)
			}
		}
	}
	if real < 400 {
		t.Errorf("only %d real texts read", real)
	}
}
