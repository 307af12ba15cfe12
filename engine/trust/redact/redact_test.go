package redact

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Test values: shapes as real services issue them, made up.
const (
	jwt      = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	openai   = "sk-proj-4f9Qm2LxTz8RvB7nK1wY3hJc6DgP0aSe"
	anth     = "sk-ant-api03-Xy7_k2Lm9Pq4Rs8Tu1Vw5Zb3Cd6Ef0Gh"
	pem      = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7v1x\nq2w3e4r5t6y7\n-----END RSA PRIVATE KEY-----"
	visa     = "4111 1111 1111 1111"
	visaBad  = "4111 1111 1111 1112" // Luhn fails
	password = "hunter2!"
)

func TestStringShapes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// API keys.
		{"key " + openai + " end", "key [redacted] end"},
		{"ANTHROPIC_API_KEY is " + anth, "ANTHROPIC_API_KEY is [redacted]"},
		{"stripe sk_live_51H7xQ2LkT9Zr3 and rk_live_51H7xQ2LkT9Zr3 and pk_live_51H7xQ2LkT9Zr3", "stripe [redacted] and [redacted] and [redacted]"},
		{"aws AKIAIOSFODNN7EXAMPLE.", "aws [redacted]."},
		{"id#xAKIAIOSFODNN7EXAMPLE", "id#x[redacted]"}, // glued to the text before it
		{"fooASIAIOSFODNN7EXAMPLE bar", "foo[redacted] bar"},
		{"https://x.test/login?pw=hunter2secret&x=1", "https://x.test/login?pw=[redacted]&x=1"},
		{"https://x.test/?user=bob&passcode=998877&pin=4321", "https://x.test/?user=bob&passcode=[redacted]&pin=[redacted]"},
		{"gh ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R end", "gh [redacted] end"},
		{"gh github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "gh [redacted]"},
		{"slack xoxb-123456789012-abcdefghijkl", "slack [redacted]"},
		{"google AIzaSyD4fG7hJ2kL9mN3pQ6rS8tU1vW5xY0zA2b ok", "google [redacted] ok"},
		{"gitlab glpat-a1B2c3D4e5F6g7H8i9J0", "gitlab [redacted]"},
		// Tokens.
		{"Authorization: Bearer abc123.DEF456-ghi789", "Authorization: Bearer [redacted]"},
		{"authorization: bearer " + jwt, "authorization: bearer [redacted]"},
		{"Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [redacted]"},
		{"token " + jwt + " sent", "token [redacted] sent"},
		{`{"id_token":"` + jwt + `"}`, `{"id_token":"[redacted]"}`},
		{"key:\n" + pem + "\nrest", "key:\n[redacted]\nrest"},
		{`"k":"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\n-----END PRIVATE KEY-----"`, `"k":"[redacted]"`},
		{"cut -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB", "cut [redacted]"},
		{"a " + pem + " b " + pem + " c", "a [redacted] b [redacted] c"},
		{"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
		// URLs.
		{"https://bob:s3cret@db.example.com:5432/app", "https://bob:%5Bredacted%5D@db.example.com:5432/app"},
		{"go to https://shop.example.com/reset?token=a1b2c3d4&lang=en", "go to https://shop.example.com/reset?token=[redacted]&lang=en"},
		{"https://x.example/cb?state=xyz&code=4/0AfJohX&scope=email", "https://x.example/cb?state=xyz&code=[redacted]&scope=email"},
		{"https://api.example.com/v1?api_key=ABCDEF&key=123&sig=zz9", "https://api.example.com/v1?api_key=[redacted]&key=[redacted]&sig=[redacted]"},
		{"https://app.example.com/#access_token=ya29.a0AfH6&expires_in=3599", "https://app.example.com/#access_token=[redacted]&expires_in=3599"},
		{"https://s3.example.com/f?X-Amz-Signature=deadbeef01&X-Amz-Credential=AKID%2F2024", "https://s3.example.com/f?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]"},
		{"/login?session=abc123&sid=99", "/login?session=[redacted]&sid=[redacted]"},
		// Assignments.
		{"password=hunter2", "password=[redacted]"},
		{"db_password = correct-horse", "db_password = [redacted]"},
		{"Password: hunter2", "Password: [redacted]"},
		{`{"password":"hunter2","user":"bob"}`, `{"password":"[redacted]","user":"bob"}`},
		{`{"api_key": "abc"}`, `{"api_key": "[redacted]"}`},
		{"X-Api-Key: 9f8e7d6c", "X-Api-Key: [redacted]"},
		{"API_KEY=abcdef OTHER=1", "API_KEY=[redacted] OTHER=1"},
		{"client_secret='s3cr3t'", "client_secret='[redacted]'"},
		{"pin=1234;", "pin=[redacted];"},
		{"ssn: 123-45-6789", "ssn: [redacted]"},
		{"Set-Cookie: session=abc123; Path=/", "Set-Cookie: [redacted]; Path=/"},
		{"Cookie: sid=xyz789; theme=dark", "Cookie: [redacted]; theme=dark"},
		{"user=bob&password=hunter2&x=1", "user=bob&password=[redacted]&x=1"},
		// Assignments to the names SecretField knows, in other languages too.
		{"Passwort: x1", "Passwort: [redacted]"},
		{"Kennwort=x1", "Kennwort=[redacted]"},
		{"mot de passe: x1", "mot de passe: [redacted]"},
		{"Mot de passe : s3cret", "Mot de passe : [redacted]"},
		{"contraseña: x1", "contraseña: [redacted]"},
		{"Пароль: qwerty1", "Пароль: [redacted]"},
		{"密码: abc123", "密码: [redacted]"},
		{"pass: x1", "pass: [redacted]"},
		{"pass=hunter!", "pass=[redacted]"},
		{"pwd=x1", "pwd=[redacted]"},
		{"PIN: 1234", "PIN: [redacted]"},
		{"dbPassword=abc", "dbPassword=[redacted]"},
		{"Security code: 123", "Security code: [redacted]"},
		{"user_pass = abc", "user_pass = [redacted]"},
		// Passwords in plain words.
		{"log in to example.com with password NAVgoalF66", "log in to example.com with password [redacted]"},
		{"Log in with the password NAVgoalF66.", "Log in with the password [redacted]."},
		{"the password is X9secret", "the password is [redacted]"},
		{"The password is 'hunter'", "The password is '[redacted]'"},
		{`password "correct horse"`, `password "[redacted]"`},
		{"set the password to Tr0ub4dor&3, then save", "set the password to [redacted], then save"},
		{"Passwort ist Geheim-42!", "Passwort ist [redacted]!"},
		{"use the passcode 482913 at the door", "use the passcode [redacted] at the door"},
		{"password is: hunter_two", "password is: [redacted]"},
		// Cards.
		{"card " + visa + " exp 12/27", "card [redacted] exp 12/27"},
		{"card 4111-1111-1111-1111.", "card [redacted]."},
		{"4111111111111111", "[redacted]"},
		{"mc 5555555555554444 amex 378282246310005", "mc [redacted] amex [redacted]"},
		{"mc2 2223003122003222 discover 6011111111111117", "mc2 [redacted] discover [redacted]"},
		{"jcb 3530111333300000 diners 30569309025904", "jcb [redacted] diners [redacted]"},
		{"unionpay 6200000000000005", "unionpay [redacted]"},
		{"paid 2024-01-15 4111 1111 1111 1111 ok", "paid 2024-01-15 [redacted] ok"},
		{"two 4111111111111111-5555555555554444", "two [redacted]-[redacted]"},
		// Contacts.
		{"write to bob.smith+shop@mail.example.co.uk today", "write to [email] today"},
		{"mailto:a@b.io", "mailto:[email]"},
		{"call +1 415 555 2671", "call [phone]"},
		{"call +44 (20) 7946-0958.", "call [phone]."},
		{"call +4915112345678 now", "call [phone] now"},
		{"(415) 555-2671", "[phone]"},
		{"phone: 415-555-2671, fax 415.555.2672", "phone: [phone], fax [phone]"},
		{"uk 020 7946 0958", "uk [phone]"},
		{"Call 1-800-555-0199 today", "Call [phone] today"},
		{"au 0412-345-678!", "au [phone]!"},
	} {
		if got := (*Redactor)(nil).String(c.in); got != c.want {
			t.Errorf("String(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// benign texts are left exactly as they are.
var benign = []string{
	// Lessons that talk about secrets.
	"If fill fails on the password field, click it first, then type the password.",
	"Password: enter at least 8 characters, then press Enter.",
	"The login form has a Token field; paste the token from the email the site sends.",
	"Card number fields reject spaces: type the digits only.",
	"Enter the card number, then the CVV, then click Pay.",
	"Dismiss the cookie banner before clicking Search.",
	"If click fails with \"is not a snapshot ref (refs look like e37)\", run snapshot again.",
	"After entering text in a search box, press Enter to submit. Avoid clicking submit buttons: autocomplete dropdowns often cover them.",
	"Bearer authentication is required for the API page; log in first.",
	"Basic Authentication dialogs cannot be clicked; navigate with credentials instead.",
	"Use the sk-learn docs search box for tutorials.",
	"task-list-item-checkbox-container-primary",
	"Session expired pages need a reload: navigate to the same URL again.",
	// URLs of the demo site and others, selectors, refs.
	"http://127.0.0.1:8080/search?q=blue+shoes&page=2",
	"http://localhost:41234/item.html?id=42&sort=price",
	"https://shop.example.com/checkout?step=payment&currency=EUR",
	"https://bob@example.com/path",
	`input[type="password"]`,
	`input[name=password]`,
	"#password:focus",
	"form#login > input#pin:nth-of-type(2)",
	`[data-testid="card-number-input"]`,
	"click e37 then e4, then type in e112",
	"img[src=\"/static/icon@2x.png\"]",
	// Numbers that are not phones or cards.
	"Delivered 2024-01-15 at 10:30:00, order #1234567890123.",
	"Order 4111111111111112 shipped", // Luhn fails
	"Order ORD-2024-000123 total $1,234.56 (EUR 1.234,56)",
	"Version 1.123.4567 and v2.10.3, build 20240115",
	"Server 192.168.100.200:8080, backup 10.0.0.1:443",
	"Dates 15.01.2024, 01/15/2024, 2024/01/15 and 12:45",
	"Timestamp 1700000000123 and id 9876543210",
	"Price 19.99 was 24.99; 3 + 4 = 7; +5% today",
	"ISBN 978-3-16-148410-0",
	"Phone field: type digits only, e.g. without +",
	"Call the support line listed on the Contact page.",
	"The table shows 415 555 items in 2671 stores",
	"Page 2 of 10 - 1234 results",
	"sha 4f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c",
	"uuid 550e8400-e29b-41d4-a716-446655440000",
	"the token: expires in 10 minutes; max_tokens: 1024, \"prompt_tokens\": 55",
	"Dismiss the cookie: banner first",
	"Order #123-456-7890 shipped, ref 2024-01-15T10:30:00Z",
	"https://www.google.com/maps/@52.5200066,13.404954,14z",
	// Ordinary words and names near a ':' or '=', and passwords in prose.
	"pass: the ball to the left",
	"Passport: required",
	"compass: north",
	"Exam pass=through",
	"pin: top of the list",
	"reset password help",
	"change your password in settings",
	"password field is read-only",
	"The password is required.",
	"Type the password e37 into the field",
	"The password's strength meter turns green; passwords need 8+ characters.",
	"Password (min 8 chars, 1 digit)",
	"Reset password at https://x.example/reset?id=42",
	"the password is secret",
	"step 2 pass: 3 of 5",
}

// A URL whose userinfo password is redacted is still a URL (a run's start
// URL on a site behind basic auth is stored and parsed), its password the
// marker, and redacting it again changes nothing.
func TestUserinfoStaysAURL(t *testing.T) {
	r := New(Options{})
	for _, in := range []string{"http://bob:STARTpw77@127.0.0.1:18765/", "https://bob:s3cret@db.example.com:5432/app?x=1"} {
		out := r.String(in)
		u, err := url.Parse(out)
		if err != nil {
			t.Fatalf("String(%q) = %q: %v", in, out, err)
		}
		if pw, _ := u.User.Password(); pw != Secret || u.User.Username() != "bob" {
			t.Errorf("String(%q) = %q: user %q, password %q", in, out, u.User.Username(), pw)
		}
		if again := r.String(out); again != out {
			t.Errorf("String(%q) = %q, again %q", in, out, again)
		}
	}
}

func TestStringBenign(t *testing.T) {
	if len(benign) < 25 {
		t.Fatalf("only %d benign texts", len(benign))
	}
	r := New(Options{})
	r.Add(password)
	for _, s := range benign {
		if got := r.String(s); got != s {
			t.Errorf("String(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestLuhn(t *testing.T) {
	for _, c := range []struct {
		in   string
		card bool
	}{
		{visa, true}, {visaBad, false},
		{"4012888888881881", true}, {"4012888888881882", false},
		{"4222222222222", true}, // 13-digit Visa
		{"378282246310005", true}, {"378282246310006", false},
		{"5105105105105100", true}, {"5105105105105106", false},
		{"1234567812345670", false},     // Luhn-valid, no issuer
		{"4111111111111111110", true},   // 19-digit Visa
		{"41111111111111111111", false}, // 20 digits
		{"4111  1111 1111 1111", false}, // a double space is not grouping
	} {
		got := String(c.in) != c.in
		if got != c.card {
			t.Errorf("%q: card %v, want %v", c.in, got, c.card)
		}
	}
}

// String is the nil Redactor's: shapes with default options.
func String(s string) string { return (*Redactor)(nil).String(s) }

func TestKeepContacts(t *testing.T) {
	in := "mail bob@example.com or call +1 415 555 2671, token=abc123"
	if got, want := New(Options{KeepContacts: true}).String(in), "mail bob@example.com or call +1 415 555 2671, token=[redacted]"; got != want {
		t.Errorf("KeepContacts: %q, want %q", got, want)
	}
	if got, want := New(Options{}).String(in), "mail [email] or call [phone], token=[redacted]"; got != want {
		t.Errorf("default: %q, want %q", got, want)
	}
}

func TestAdd(t *testing.T) {
	r := New(Options{KeepContacts: true})
	secret := `p<a"s\s&w`
	r.Add(secret)
	r.Add("ab")       // too short: ignored
	r.Add("dacted")   // part of a marker: ignored
	r.Add(secret)     // again: counted once
	r.Add("p<a\"s\\") // a prefix of the first: the longer goes first
	if r.Secrets() != 2 {
		t.Errorf("Secrets() = %d, want 2", r.Secrets())
	}
	j, _ := json.Marshal(map[string]string{"value": secret})
	for _, c := range []struct{ in, want string }{
		{"typed " + secret + " into #pass", "typed [redacted] into #pass"},
		{string(j), `{"value":"[redacted]"}`},
		{fmt.Sprintf("%q", secret), `"[redacted]"`},
		{"https://x.example/login?u=bob&p=p%3Ca%22s%5Cs%26w", "https://x.example/login?u=bob&p=[redacted]"},
		{"redacted ab stays", "redacted ab stays"},
		{"half p<a\"s\\ of it", "half [redacted] of it"},
	} {
		if got := r.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

type step struct {
	Action, Value string
	Tags          []string
	Meta          map[string]string
	Any           any
	Next          *step
	secret        string
}

type record struct {
	ID     string
	RunID  string
	TagIDs []string
	Text   string
	Steps  []step
	Ptr    *string
	Arr    [2]string
	ByName map[string]step
	Extra  map[string]any
	Raw    json.RawMessage
	Broken json.RawMessage
	Count  int
	hidden string
}

func TestValue(t *testing.T) {
	s := "ptr " + password
	loop := &step{Action: "a"}
	loop.Next = loop // a cycle
	rec := record{
		ID:     "415-555-2671", // a phone number's shape, kept as an id
		RunID:  password,
		TagIDs: []string{password},
		Text:   "mail bob@example.com",
		Steps: []step{
			{Action: "type", Value: password, Tags: []string{"x", password}, Meta: map[string]string{"k": "token=abc123"}, secret: password},
			{Action: "click", Any: "to " + password, Next: &step{Value: jwt}},
		},
		Ptr:    &s,
		Arr:    [2]string{password, "ok"},
		ByName: map[string]step{"login": {Value: password}},
		Extra:  map[string]any{"n": 1, "s": password, "l": []any{password}, "loop": loop},
		Raw:    json.RawMessage(`{"typed":"` + password + `","n":1}`),
		Broken: json.RawMessage(`["a` + password + `b"]`),
		hidden: password,
	}
	r := New(Options{})
	r.Add(`b"]`) // cuts through Broken's JSON
	r.Add(password)
	r.Value(&rec)
	want := record{
		ID:   "415-555-2671",
		Text: "mail [email]",
		Steps: []step{
			{Action: "type", Value: Secret, Tags: []string{"x", Secret}, Meta: map[string]string{"k": "token=[redacted]"}, secret: password},
			{Action: "click", Any: "to " + Secret, Next: &step{Value: Secret}},
		},
		Arr:    [2]string{Secret, "ok"},
		ByName: map[string]step{"login": {Value: Secret}},
		hidden: password,
	}
	got := fmt.Sprintf("%+v %+v %+v %v %v %v %v %v", rec.Steps[0], rec.Steps[1].Any, *rec.Steps[1].Next, rec.Arr, rec.ByName, rec.Extra["s"], rec.Extra["l"], rec.hidden)
	w := fmt.Sprintf("%+v %+v %+v %v %v %v %v %v", want.Steps[0], want.Steps[1].Any, *want.Steps[1].Next, want.Arr, want.ByName, Secret, []any{Secret}, password)
	if got != w {
		t.Errorf("Value:\n got %s\nwant %s", got, w)
	}
	if rec.ID != want.ID || rec.RunID != password || rec.TagIDs[0] != password || rec.Text != want.Text || *rec.Ptr != "ptr "+Secret || rec.Extra["n"] != 1 {
		t.Errorf("Value: %+v", rec)
	}
	if string(rec.Raw) != `{"typed":"[redacted]","n":1}` || !json.Valid(rec.Broken) || strings.Contains(string(rec.Broken), password) {
		t.Errorf("Value: RawMessage %s, %s", rec.Raw, rec.Broken)
	}
	var nilRec *record
	r.Value(nilRec) // no panic
	r.Value(rec)    // not a pointer: nothing to set, no panic
}

func TestConcurrent(t *testing.T) {
	r := New(Options{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 200 {
				r.Add(fmt.Sprintf("secret-%d-%d", g, i))
			}
		}()
		go func() {
			defer wg.Done()
			for i := range 200 {
				r.String(fmt.Sprintf("text secret-%d-%d and password=x%d", g, i, i))
			}
		}()
	}
	wg.Wait()
	if r.Secrets() != 800 {
		t.Fatalf("Secrets() = %d, want 800", r.Secrets())
	}
	if got := r.String("a secret-3-199 b"); got != "a [redacted] b" {
		t.Errorf("after concurrent Add: %q", got)
	}
}

func TestNoAlloc(t *testing.T) {
	r := New(Options{})
	r.Add(password)
	text := benign[0] + " " + benign[7] + " " + benign[25]
	if n := testing.AllocsPerRun(100, func() { r.String(text) }); n != 0 && !raceEnabled {
		t.Errorf("String of a benign text: %v allocations, want 0", n)
	}
	if got := r.String(text); got != text {
		t.Errorf("changed: %q", got)
	}
}

func TestSecretField(t *testing.T) {
	for _, c := range []struct {
		typ, ac, name string
		want          bool
	}{
		{"password", "", "", true},
		{" Password ", "", "q", true},
		{"text", "current-password", "", true},
		{"text", "section-pay billing cc-number", "", true},
		{"text", "cc-exp-month", "", true},
		{"text", "one-time-code", "", true},
		{"text", "", "cardNumber", true},
		{"text", "", "card_number", true},
		{"tel", "", "CVV", true},
		{"text", "", "cvc2", true},
		{"text", "", "Security code", true},
		{"text", "", "user[pass_phrase]", true},
		{"text", "", "PIN", true},
		{"text", "", "pinCode", true},
		{"text", "", "otp", true},
		{"text", "", "One-time code", true},
		{"text", "", "api_key", true},
		{"text", "", "API Key", true},
		{"text", "", "client secret", true},
		{"text", "", "SSN", true},
		{"text", "", "newPassword", true},
		{"text", "", "Passcode", true},
		{"text", "", "token", true},
		{"text", "", "pass", true},
		{"text", "", "user_pass", true},
		{"text", "", "userPass", true},
		{"text", "", "Passwort", true},
		{"text", "", "Kennwort", true},
		{"text", "", "Mot de passe", true},
		{"text", "", "mdp", true},
		{"text", "", "Contraseña", true},
		{"text", "", "contrasena", true},
		{"text", "", "Senha", true},
		{"text", "", "Wachtwoord", true},
		{"text", "", "Hasło", true},
		{"text", "", "Lösenord", true},
		{"text", "", "Adgangskode", true},
		{"text", "", "Salasana", true},
		{"text", "", "Şifre", true},
		{"text", "", "Пароль", true},
		{"text", "", "PIN-код", true},
		{"text", "", "请输入密码", true},
		{"text", "", "パスワードを入力", true},
		{"text", "", "비밀번호", true},
		{"text", "", "รหัสผ่าน", true},
		{"text", "", "Private key", true},
		{"text", "", "mot-de-passe", true},
		{"text", "", "Passenger name", false},
		{"text", "", "Passport number", false},
		{"text", "", "Compass heading", false},
		{"text", "", "Bypass reason", false},
		{"text", "", "Kennwortlänge", false},
		{"text", "", "Fecha de nacimiento", false},
		{"text", "email", "email", false},
		{"text", "", "username", false},
		{"search", "", "q", false},
		{"text", "", "Shipping address", false},
		{"text", "", "spinner", false},
		{"text", "", "Opinion", false},
		{"text", "", "Card holder name", false},
		{"text", "name", "Full name", false},
		{"", "", "", false},
	} {
		if got := SecretField(c.typ, c.ac, c.name); got != c.want {
			t.Errorf("SecretField(%q, %q, %q) = %v, want %v", c.typ, c.ac, c.name, got, c.want)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range benign {
		f.Add(s, password)
	}
	f.Add("card "+visa+" mail a@b.co +1 415 555 2671 "+jwt, "abc")
	f.Add("password=x [redacted] ted]", "ted] x")
	f.Add("d][rd][r", "d][r")
	for _, c := range plainCases {
		f.Add(c.in, "x1")
	}
	for _, s := range plainProse {
		f.Add(s, "bob")
	}
	f.Fuzz(func(t *testing.T, s, v string) {
		r := New(Options{})
		r.Add(v)
		out := r.String(s)
		if len(v) >= minValue && !marker(v) && strings.Contains(out, v) {
			t.Fatalf("String(%q) = %q still holds %q", s, out, v)
		}
		if again := r.String(out); again != out {
			t.Fatalf("not idempotent: String(%q) = %q, again %q", s, out, again)
		}
	})
}
