package redact

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A password in plain words: "log in with password NAVgoalF66", "the
// password is 'hunter'", "the password for bob is x1", "das Kennwort ist
// geheim123", "le mot de passe est soleil". After a password word
// (passwordWordList's, in any of its languages, but pass, pwd and mdp)
// come, in this order:
//
//   - a connector, or none: a copula (is, was, has been, ist, lautet, es,
//     est, é, è, är, er, je, jest …, optionally "now"; Finnish "on", an
//     English word too, only before a value with a digit or a symbol),
//     "changed to", "set to", a ':' or '='; or a bare "to" ("set the
//     password to X");
//   - or, when no value follows at once, a qualifier and then a copula: for,
//     of, to, on, at, für, von, de, para, pour, voor, van … and one to three
//     words ("the password for bob is x1", "password of the admin account is
//     Secr3t", "le mot de passe de bob est soleil"); a qualifier without a
//     copula is no statement ("enter the password for bob", "reset password
//     for bob");
//   - the value, removed when it is quoted (any quoted value on the line), or
//     looks like a credential: 6 bytes or more with a digit or one of
//     hasSymbol's symbols; after a connector also a short one with letters
//     and digits ("x1") or 4 digits or more; or a word of letters only
//     (4–64 bytes) that ends its clause (the text, a line or a quote ends or
//     punctuation follows, never another word) and is no ordinary word
//     (ordinaryWords: states, qualities, participles, verbs, nouns of forms,
//     function words; or an English -ed, -ing, -ly, -ble, -ive, -tion,
//     -ment word), after a copula, after "to" when set, change, reset or
//     update comes before the password word, or at once after "with, using,
//     use, via, con, avec, com password" (not German's or Dutch's "mit/met
//     Passwort anmelden": a verb ends those sentences).
//
// So "the password is hunter", "login with password sunshine" and "bob's
// password is x1" lose the value, while "the password is incorrect",
// "password is required", "the password is too short", "password must
// contain a digit", "password field is empty", "Password is
// case-sensitive", "your password has expired", "enter your password to
// continue", "reset password for bob" and "password e37" (a ref) stay.

// maxFreeValue is the longest value passwordPhrases removes: a longer one
// is no password, and each is looked for no further, so time stays linear
// ("password:password:…").
const maxFreeValue = 200

// minFreeValue is the shortest unquoted value with a digit or a symbol
// passwordPhrases removes without a connector before it.
const minFreeValue = 6

// plainExcluded are password words passwordPhrases does not look for:
// ordinary words or abbreviations too ("pass the ball", pwd the command).
var plainExcluded = map[string]bool{"pass": true, "pwd": true, "mdp": true, "pass code": true, "pass phrase": true}

// plainWords holds the password words passwordPhrases looks for (lower
// case), longest first, under each byte they may start with in a text
// (lower, upper or title case); plainStart marks those bytes.
var plainWords, plainStart = func() (t [256][]string, start [256]bool) {
	for _, w := range passwordWordList {
		if plainExcluded[w] {
			continue
		}
		r, n := utf8.DecodeRuneInString(w)
		for _, f := range []rune{r, unicode.ToUpper(r), unicode.ToTitle(r)} {
			if utf8.RuneLen(f) != n {
				continue // EqualFold on a slice of w's length could not match it
			}
			c := string(f)[0]
			if !slices.Contains(t[c], w) {
				t[c] = append(t[c], w)
			}
			start[c] = true
		}
	}
	for c := range t {
		slices.SortStableFunc(t[c], func(a, b string) int { return len(b) - len(a) })
	}
	return t, start
}()

// plainKeys holds, by plainKey, the first five bytes of plainWords in
// the cases they are found in: a word whose first five bytes are not in
// it is no password word, and costs no comparison.
var plainKeys = func() (t [64]uint64) {
	for _, w := range passwordWordList {
		if plainExcluded[w] {
			continue
		}
		r, n := utf8.DecodeRuneInString(w)
		for _, v := range []string{w, string(unicode.ToTitle(r)) + w[n:], strings.ToUpper(w)} {
			if len(v) < 5 {
				panic("redact: password word shorter than 5 bytes: " + v)
			}
			h := plainKey(v, 0)
			t[h>>6] |= 1 << (h & 63)
		}
	}
	return t
}()

// plainKey hashes the five bytes of s at i, ASCII letters folded to lower
// case (other bytes change too, alike in text and word), to 12 bits.
func plainKey(s string, i int) uint64 {
	x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 | uint64(s[i+4])<<32
	return (x | 0x2020202020) * 0x9E3779B97F4A7C15 >> 52
}

// plainWordAt returns the end of the password word of plainWords that
// starts at i (whatever is before it), or -1.
func plainWordAt(s string, i int) int {
	if i+5 > len(s) {
		return -1
	}
	if h := plainKey(s, i); plainKeys[h>>6]&(1<<(h&63)) == 0 {
		return -1
	}
	for _, w := range plainWords[s[i]] {
		if e := i + len(w); e <= len(s) && strings.EqualFold(s[i:e], w) && (e == len(s) || !isWord(s[e])) {
			return e
		}
	}
	return -1
}

// passwordPhrases returns s with the values of passwords in plain words
// replaced by Secret.
func passwordPhrases(s string) string {
	var b strings.Builder
	last, replaced := 0, false
	prev := uint32(0) // surveyTab of s[i-1]
	for i := 0; i < len(s); i++ {
		x := surveyTab[s[i]]
		start := x&^(prev<<1)&bitWordStart != 0 // as in survey
		prev = x
		if !start || i > 0 && strings.IndexByte("#.-/@$[", s[i-1]) >= 0 {
			continue // compass, bypass; a selector, path or name (#password:focus, new-password)
		}
		end := plainWordAt(s, i)
		if end < 0 {
			continue
		}
		vs, ve := freeValue(s, i, end)
		if vs < 0 {
			i, prev = end-1, surveyTab[s[end-1]]
			continue
		}
		if !replaced {
			b.Grow(len(s))
			replaced = true
		}
		b.WriteString(s[last:vs])
		b.WriteString(Secret)
		last, i, prev = ve, ve-1, surveyTab[s[ve-1]]
	}
	if !replaced {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// What stands between a password word and its value.
const (
	connNone   = iota
	connTo     // a bare "to"
	connWeak   // a copula that is an English word too: Finnish "on" ("password on file")
	connCopula // is, was, ist, ':', '=', "changed to" …
)

// copulas state what a password is; weakCopulas too, but they are English
// words as well, so only a value with a digit or a symbol follows them;
// afterCopula may follow a copula ("is now"); changeVerbs followed by "to"
// are a copula too ("changed to").
var (
	copulas     = wordSet("is was ist war lautet es era est était etait é è és är var er je jest")
	weakCopulas = wordSet("on oli")
	afterCopula = wordSet("now still jetzt nun ahora maintenant désormais nu agora ora teraz")
	changeVerbs = wordSet("changed set reset updated")
	// qualifiers name whose password it is: "for bob", "of the admin account".
	qualifiers = wordSet("for of to on at für von zu de del para pour du voor van op do da dla per")
	// withWords before a password word, an article between, make the word
	// after it a value: "with password sunshine".
	// German, Dutch and the Nordic languages put a verb after it ("mit
	// Passwort anmelden"), so their "with" is not among them.
	withWords = wordSet("with using use via con avec com")
	// setWords before a password word make a bare "to" a copula: "set the
	// password to hunter".
	setWords = wordSet("set change reset update")
	// determiners may stand between withWords or setWords and the password word.
	determiners = wordSet("the a an my your his her their our its this that new same der die das dem den dein ihr ihrem el la tu su le ton votre son het de je uw o a sua seu")
)

// ordinaryWords are words of letters only that are no password: states
// and qualities ("the password is incorrect"), participles ("has been
// sent"), verbs ("Password: enter 8 characters"), the nouns of forms
// ("with password manager") and function words, in the languages of
// passwordWordList's larger ones.
var ordinaryWords = wordSet(`
	incorrect correct wrong right invalid valid required optional mandatory needed necessary empty blank missing
	expired expiring short long weak strong secure insecure secret hidden masked visible invisible shown
	sensitive insensitive same different identical new old current temporary default unknown known unset
	saved stored changed reset locked disabled enabled filled accepted rejected wrong fine good bad okay
	there here below above displayed generated random simple complex easy hard obvious common unique
	compromised leaked breached none null nil undefined unavailable available fake real personal private
	confidential important lowercase uppercase numeric alphanumeric hashed encrypted plain plaintext cleartext
	sent set found made given taken shown known seen written chosen forgotten stolen broken done gone kept
	lost told held put read cut spent won due ready true false yes incomplete complete too very also only
	just not never always still now then than that this these those what which who whom how why when where
	it its one all any none some each every both either neither more less much many case being been be
	for of in on at by from into onto as and or but if so yet because since until unless with without
	the an my your his her their our
	enter type use click press must should can could will would need needs contain contains include includes
	match matches expire expires change show hide forgot forget save submit confirm repeat retype login
	logon sign signin try check do does did is was are were has have had get got keep let make see copy
	paste fill clear continue proceed access open unlock verify authenticate register remember
	field fields box input manager prompt policy rules rule requirements strength hint page form dialog
	screen link button recovery protection authentication length characters chars letters digits symbols
	numbers entry text value placeholder label attempt attempts error message mismatch user username
	account email nothing something anything everything unchanged please again instead first last next
	falsch richtig korrekt ungültig gültig erforderlich notwendig leer abgelaufen geändert gesperrt zu
	nicht kurz lang geheim sicher unsicher schwach stark neu alt identisch pflicht vergessen gespeichert
	incorrecta incorrecto correcta correcto inválida invalida inválido invalido válida valida válido valido
	obligatoria obligatorio requerida requerido necesaria necesario vacía vacia vacío vacio caducada
	expirada secreta secreto débil debil fuerte nueva nuevo demasiado muy corta corto larga largo segura
	seguro distinta distinto diferente igual
	incorrecte correcte invalide valide requis requise obligatoire vide expiré expirée trop court courte
	secrète faible fort forte nouveau nouvelle oublié oubliée différent identique pas
	onjuist juist fout ongeldig geldig verplicht vereist leeg verlopen te kort zwak sterk nieuw niet
	gewijzigd opgeslagen veilig onveilig inloggen aanmelden bevestigen invoeren wijzigen opslaan beveiligd doorgaan
	anmelden einloggen bestätigen eingeben ändern speichern zurücksetzen schützen geschützt verschlüsselt weiter
	fortfahren sichern öffnen entsperren veraltet pflichtfeld
	errónea erronea temporal maestra maestro necesaria necesario
	erroné erronée sécurisé sécurisée masqué masquée temporaire provisoire enregistré enregistrée actuel actuelle
	necessária necessaria temporária temporaria
	troppo debole nuova richiesta temporanea non
	medium fair excellent great poor low high moderate average present absent active inactive master
	autofill autocomplete popup toggle eye icon dots bullets asterisks meter checker generator vault keychain sync
	boxes inputs option options setting settings update expiry complexity history security safety visibility
	reveal mask masks hash salt twice once
	incorreta correta obrigatória obrigatoria vazia vazio fraca forte nova novo muito curta curto
	não nao errada errado
	sbagliata errata corretta obbligatoria vuota scaduta
	nieprawidłowe prawidłowe wymagane puste
	fel felaktigt rätt obligatoriskt tomt
	forkert feil påkrævet påkrevd tom
	väärin virheellinen pakollinen tyhjä
	`)

// ordinarySuffixes end English participles, adverbs and the nouns and
// adjectives of prose ("required", "missing", "usually", "visible",
// "sensitive", "protection", "requirement").
var ordinarySuffixes = []string{"ed", "ing", "ly", "ble", "ive", "tion", "ment"}

// wordSet returns the words of list (separated by spaces or newlines) as a
// set.
func wordSet(list string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(list) {
		m[w] = true
	}
	return m
}

// inSet reports whether w, lower-cased (ASCII letters), is in m. It does
// not allocate.
func inSet(m map[string]bool, w string) bool {
	if w == "" || len(w) > 64 {
		return false
	}
	var buf [64]byte
	return m[string(lowerASCII(&buf, w))]
}

// lowerASCII is w (at most 64 bytes) with its ASCII letters lower-cased,
// in buf.
func lowerASCII(buf *[64]byte, w string) []byte {
	b := buf[:len(w)]
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return b
}

// freeValue returns where the value after the password word s[ws:w]
// starts and ends (inside its quotes when quoted), or -1, -1 when what
// follows is no credential.
func freeValue(s string, ws, w int) (int, int) {
	if w < len(s) && s[w] != ' ' && s[w] != '\t' && s[w] != ':' && s[w] != '=' {
		return -1, -1 // "password's", "passwords", "password,"
	}
	p, kind := connector(s, w)
	if vs, ve := value(s, ws, p, kind); vs >= 0 {
		return vs, ve
	}
	if kind == connCopula {
		return -1, -1
	}
	// "for bob is x1": the qualifier starts where a bare "to", "on" or the
	// value would have.
	if q := qualified(s, skipBlank(s, w)); q >= 0 {
		return value(s, ws, q, connCopula)
	}
	return -1, -1
}

// connector returns where what follows the connector after a password
// word ending at w starts, and the connector's kind.
func connector(s string, w int) (int, int) {
	p := skipBlank(s, w)
	kind := connNone
	if e := letterEnd(s, p); e > p && sepAt(s, e) {
		switch word := s[p:e]; {
		case inSet(copulas, word):
			kind, p = connCopula, skipBlank(s, e)
			if e := letterEnd(s, p); e > p && sepAt(s, e) && inSet(afterCopula, s[p:e]) {
				p = skipBlank(s, e)
			}
			if q := changedTo(s, p); q >= 0 {
				p = q
			}
		case inSet(weakCopulas, word):
			kind, p = connWeak, skipBlank(s, e)
		case inSet(hasHad, word):
			q := skipBlank(s, e)
			if e := letterEnd(s, q); e > q && sepAt(s, e) && strings.EqualFold(s[q:e], "been") {
				kind, p = connCopula, skipBlank(s, e)
				if q := changedTo(s, p); q >= 0 {
					p = q
				}
			}
		case changedTo(s, p) >= 0:
			kind, p = connCopula, changedTo(s, p)
		case strings.EqualFold(word, "to"):
			kind, p = connTo, skipBlank(s, e)
		}
	}
	if p < len(s) && (s[p] == ':' || s[p] == '=') {
		kind, p = connCopula, skipBlank(s, p+1)
	}
	return p, kind
}

// hasHad are the auxiliaries of "has been".
var hasHad = wordSet("has had")

// changedTo returns where what follows "changed to", "set to", "reset to"
// or "updated to" at p starts, or -1.
func changedTo(s string, p int) int {
	e := letterEnd(s, p)
	if e == p || e >= len(s) || s[e] != ' ' || !inSet(changeVerbs, s[p:e]) {
		return -1
	}
	q := skipBlank(s, e)
	if f := letterEnd(s, q); f > q && sepAt(s, f) && strings.EqualFold(s[q:f], "to") {
		return skipBlank(s, f)
	}
	return -1
}

// sepAt reports whether the word before e ends there: a blank, ':' or
// '=' follows.
func sepAt(s string, e int) bool {
	return e < len(s) && (s[e] == ' ' || s[e] == '\t' || s[e] == ':' || s[e] == '=')
}

// qualified returns where the value after a qualifier at p and its copula
// starts ("for bob is x1" → "x1"), or -1: a qualifier, one to three words
// on the same line that end no clause, then a copula, ':' or '='.
func qualified(s string, p int) int {
	e := letterEnd(s, p)
	if e == p || e >= len(s) || s[e] != ' ' || !inSet(qualifiers, s[p:e]) {
		return -1
	}
	p = skipBlank(s, e)
	for range 3 {
		t := p
		for t < len(s) && t-p <= maxFreeValue && s[t] != ' ' && s[t] != '\t' && s[t] != '\n' && s[t] != '\r' && !(s[t] == ':' && (t+1 == len(s) || s[t+1] == ' ')) {
			t++ // "bob:" ends at its colon, "https://x.example" does not
		}
		if t == p || t-p > maxFreeValue || strings.IndexByte(".,;!?", s[t-1]) >= 0 {
			return -1
		}
		if q, kind := connector(s, t); kind == connCopula {
			return q
		}
		p = skipBlank(s, t)
	}
	return -1
}

// value returns where the value at p starts and ends (inside its quotes
// when quoted), or -1, -1; ws is where the password word starts and kind
// the connector before p.
func value(s string, ws, p, kind int) (int, int) {
	if p >= len(s) {
		return -1, -1
	}
	if q := s[p]; q == '"' || q == '\'' || q == '`' {
		e := strings.IndexByte(s[p+1:min(len(s), p+2+maxFreeValue)], q)
		if e <= 0 {
			return -1, -1
		}
		v := s[p+1 : p+1+e]
		if strings.IndexByte(v, '\n') >= 0 || strings.Contains(v, Secret) {
			return -1, -1
		}
		return p + 1, p + 1 + e
	}
	e := p
	for e < len(s) && e-p <= maxFreeValue && s[e] != ' ' && s[e] != '\t' && s[e] != '\n' && s[e] != '\r' && s[e] != '"' && s[e] != '\'' && s[e] != '<' {
		if s[e] == '\\' && (e+1 == len(s) || strings.IndexByte(`nrt"\`, s[e+1]) >= 0) {
			break // an escape of the JSON or Go string the text is in
		}
		e++
	}
	for e > p && strings.IndexByte(".,;:!?)]}", s[e-1]) >= 0 {
		e-- // the sentence's punctuation
	}
	v := s[p:e]
	if v == "" || len(v) > maxFreeValue || strings.Contains(v, "[redacted") || strings.Contains(v, SecretSlot) ||
		strings.Contains(v, "://") || strings.IndexByte("([{<", v[0]) >= 0 {
		return -1, -1
	}
	switch {
	case len(v) >= minFreeValue && (hasDigit(v) || hasSymbol(v)):
	case kind != connNone && shortCredential(v):
	case lettersOnly(v) && len(v) >= 4 && len(v) <= 64 && clauseEnds(s, e) && !ordinary(v) &&
		(kind == connCopula || kind == connTo && before(s, ws, setWords) || kind == connNone && before(s, ws, withWords)):
	default:
		return -1, -1
	}
	return p, e
}

// shortCredential reports whether v, after a connector, is a credential
// though short: letters and digits ("x1"), or 4 digits or more (a PIN).
func shortCredential(v string) bool {
	digits, letters := 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isDigit(c):
			digits++
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letters = true
		default:
			return false
		}
	}
	return digits > 0 && letters && len(v) >= 2 || !letters && digits >= 4
}

// lettersOnly reports whether v is one word of letters.
func lettersOnly(v string) bool {
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(v[i:])
		if !unicode.IsLetter(r) && !unicode.IsMark(r) {
			return false
		}
		i += n
	}
	return v != ""
}

// clauseEnds reports whether nothing but the end of the text, of a line
// or of a quote, or punctuation, follows the value ending at e.
func clauseEnds(s string, e int) bool {
	if e == len(s) || strings.IndexByte(".,;!?)]}\"`<\\\n\r", s[e]) >= 0 {
		return true
	}
	if s[e] == '\'' { // a closing quote, not an apostrophe ("Chrome's")
		return e+1 == len(s) || !letterByte(s[e+1])
	}
	q := skipBlank(s, e)
	return q == len(s) || s[q] == '\n' || s[q] == '\r'
}

// ordinary reports whether the word v is one of ordinaryWords or ends
// like an English participle, adverb or noun of prose.
func ordinary(v string) bool {
	if len(v) > 64 {
		return true
	}
	var buf [64]byte
	b := lowerASCII(&buf, v)
	if v != "" && ordinaryWords[string(b)] {
		return true
	}
	for _, x := range ordinarySuffixes {
		if len(b) > len(x)+2 && string(b[len(b)-len(x):]) == x {
			return true
		}
	}
	return false
}

// before reports whether the word before the password word starting at
// ws, or before a determiner there, is in m.
func before(s string, ws int, m map[string]bool) bool {
	st, w := prevWord(s, ws)
	if inSet(determiners, w) {
		_, w = prevWord(s, st)
	}
	return inSet(m, w)
}

// prevWord returns the word of letters before i (blanks between) and
// where it starts.
func prevWord(s string, i int) (int, string) {
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	e := i
	for i > 0 && letterByte(s[i-1]) {
		i--
	}
	return i, s[i:e]
}

// letterEnd returns the end of the letters (ASCII, or any non-ASCII byte)
// starting at i.
func letterEnd(s string, i int) int {
	for i < len(s) && letterByte(s[i]) {
		i++
	}
	return i
}

func letterByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf
}

// skipBlank returns the index of the first byte at or after i that is no
// space or tab.
func skipBlank(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}
