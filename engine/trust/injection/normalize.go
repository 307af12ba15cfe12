package injection

import (
	"encoding/base64"
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normal is the text the patterns read: Unicode NFKC (fullwidth and
// compatibility forms become plain letters), invisible characters
// stripped, lower-cased, runs of spaces collapsed.
func normal(text string) string {
	t := norm.NFKC.String(text)
	t = strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, t)
	return strings.ToLower(t)
}

// confusables folds the Cyrillic and Greek letters that look like Latin
// ones (the common homoglyphs of an "Іgnore all previous instructions")
// and the digits and signs of leetspeak to the Latin letter they imitate.
var confusables = strings.NewReplacer(
	// Cyrillic
	"а", "a", "в", "b", "е", "e", "ё", "e", "к", "k", "м", "m", "н", "h", "о", "o", "р", "p", "с", "c", "т", "t",
	"у", "y", "х", "x", "і", "i", "ї", "i", "ј", "j", "ѕ", "s", "ԁ", "d", "һ", "h", "ӏ", "l", "ԛ", "q", "ԝ", "w",
	"ɡ", "g", "ո", "n", "ս", "u", "г", "r", "п", "n", "и", "u", "ь", "b", "л", "n",
	// Greek
	"α", "a", "β", "b", "ε", "e", "η", "n", "ι", "i", "κ", "k", "ν", "v", "ο", "o", "ρ", "p", "τ", "t", "υ", "u",
	"χ", "x", "γ", "y", "ω", "w", "μ", "u", "ϲ", "c", "ϳ", "j",
	// small capitals
	"ɪ", "i", "ɢ", "g", "ɴ", "n", "ᴏ", "o", "ʀ", "r", "ᴇ", "e", "ᴀ", "a", "ʟ", "l", "ᴘ", "p", "ᴠ", "v", "ᴜ", "u",
	"ꜱ", "s", "ᴛ", "t", "ᴄ", "c", "ᴅ", "d", "ʜ", "h", "ᴋ", "k", "ᴍ", "m", "ᴡ", "w", "ʏ", "y", "ᴢ", "z", "ғ", "f",
	"ʙ", "b", "ᴊ", "j",
	// leetspeak
	"0", "o", "1", "i", "3", "e", "4", "a", "5", "s", "7", "t", "@", "a", "$", "s", "|", "l",
)

// skeleton is lower (already normal) with homoglyphs folded to Latin.
func skeleton(lower string) string { return confusables.Replace(lower) }

// mixedScript returns the first word that mixes Latin letters with
// Cyrillic or Greek ones, or "": a word a person reads as English but
// a filter does not (real Russian or Greek words are written in one
// script).
func mixedScript(text string) string {
	if ascii(text) {
		return ""
	}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
		var latin, other bool
		for _, r := range w {
			switch {
			case r < utf8.RuneSelf:
				latin = true
			case unicode.Is(unicode.Cyrillic, r), unicode.Is(unicode.Greek, r):
				other = true
			case unicode.Is(unicode.Latin, r):
				latin = true
			}
		}
		if latin && other {
			return w
		}
	}
	return ""
}

// reading is one way of reading the text: how it was decoded, and the
// result (normalised); view says how its strings are found (asIs: by a
// scan of the reading), and a reading of another view may leave text
// empty until it is needed (see spelled).
type reading struct {
	how, text string
	view      int
}

var (
	spacedRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:\b\pL[ ._\-*]){3,}\pL\b`)
	})
	base64RE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}={0,2}`)
	})
	escapeRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\u\{[0-9a-fA-F]{1,6}\}`)
	})
	hexRunRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(?:[0-9a-f]{2}[ :]?){12,}\b`)
	})
)

// readings are the text's other readings: homoglyphs folded, and every
// encoding an injection hides in decoded. Only the instruction patterns
// are looked for in them (a decoded hash is no link or markup).
func readings(text, lower string) []reading {
	var out []reading
	add := func(how, t string) {
		t = normal(t)
		if t != "" && t != lower {
			out = append(out, reading{how, t, asIs})
			if !foldable(t) {
				return
			}
			if sk := skeleton(t); sk != t {
				out = append(out, reading{how + " with homoglyphs folded", sk, asIs})
			}
		}
	}
	if foldable(lower) {
		if sk := skeleton(lower); sk != lower {
			out = append(out, reading{"with homoglyphs folded", sk, asIs})
		}
	}
	if strings.Contains(lower, "&") {
		add("HTML entities decoded", html.UnescapeString(lower))
	}
	if strings.Contains(lower, "%") {
		if u, err := url.PathUnescape(strings.ReplaceAll(lower, "+", " ")); err == nil {
			add("percent-decoded", u)
		}
	}
	if strings.Contains(lower, `\`) {
		add("escapes decoded", escapeRE().ReplaceAllStringFunc(lower, func(m string) string {
			h := strings.Trim(m[2:], "{}")
			n, err := strconv.ParseUint(h, 16, 32)
			if err != nil {
				return m
			}
			return string(rune(n))
		}))
	}
	if m := hexRuns(lower); len(m) > 0 {
		var b strings.Builder
		for _, run := range m {
			h := strings.NewReplacer(" ", "", ":", "").Replace(run)
			for i := 0; i+1 < len(h); i += 2 {
				n, _ := strconv.ParseUint(h[i:i+2], 16, 8)
				b.WriteByte(byte(n))
			}
			b.WriteByte(' ')
		}
		if printable(b.String()) {
			add("hex decoded", b.String())
		}
	}
	if spaced(lower) {
		add("letter spacing removed", spacedRE().ReplaceAllStringFunc(lower, func(m string) string {
			return strings.Map(func(r rune) rune {
				if r == ' ' || r == '.' || r == '_' || r == '-' || r == '*' {
					return -1
				}
				return r
			}, m)
		}))
	}
	if !ascii(lower) {
		add("ROT13 decoded", rot13(lower))
		add("reversed", reverse(lower))
		return append(out, base64Readings(text)...)
	}
	// ROT13 and reversal keep an ASCII text normal (lower-case, NFKC,
	// nothing invisible), and their strings are found by the scan of the
	// text itself (asROT13, asReversed): the reading is spelled out only
	// for an expression to run on, or to be folded (ROT13 and reversal
	// keep letters and digits next to each other as they were).
	fold := foldable(lower)
	for _, r := range []reading{{how: "ROT13 decoded", view: asROT13}, {how: "reversed", view: asReversed}} {
		if !fold {
			out = append(out, r)
			continue
		}
		r.text = view(r.view)(lower)
		out = append(out, r)
		if sk := skeleton(r.text); sk != r.text {
			out = append(out, reading{r.how + " with homoglyphs folded", sk, asIs})
		}
	}
	return append(out, base64Readings(text)...)
}

// base64Readings decodes the base64 runs of the original text (case
// matters) that decode to readable words.
func base64Readings(text string) []reading {
	var out []reading
	if !run(text, 16, base64Byte) {
		return nil
	}
	for _, m := range base64RE().FindAllString(text, -1) {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			b, err := enc.DecodeString(m)
			if err != nil || len(b) < 8 || !printable(string(b)) {
				continue
			}
			t := normal(string(b))
			out = append(out, reading{"base64 decoded", t, asIs})
			if sk := skeleton(t); sk != t {
				out = append(out, reading{"base64 decoded with homoglyphs folded", sk, asIs})
			}
			break
		}
	}
	return out
}

// The expressions that find encoded runs have no literal to start from and
// are tried at every position of the text: the byte loops below turn away,
// at a fraction of the cost, the texts they cannot match.

// foldable reports whether folding homoglyphs can change lower's words: it
// holds a non-ASCII character, or a digit or sign of leetspeak next to a
// letter ("1gn0re"; a "5" standing alone is a number).
func foldable(lower string) bool {
	for i := 0; i < len(lower); i++ {
		c := lower[i]
		if c >= utf8.RuneSelf {
			return true
		}
		switch c {
		case '0', '1', '3', '4', '5', '7', '@', '$', '|':
		default:
			continue
		}
		if i > 0 && asciiLetter(lower[i-1]) || i+1 < len(lower) && asciiLetter(lower[i+1]) {
			return true
		}
	}
	return false
}

func asciiLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// run reports whether s has at least n bytes in a row that in accepts.
func run(s string, n int, in func(byte) bool) bool {
	k := 0
	for i := 0; i < len(s); i++ {
		if !in(s[i]) {
			k = 0
			continue
		}
		if k++; k >= n {
			return true
		}
	}
	return false
}

func base64Byte(c byte) bool {
	return asciiLetter(c) || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-'
}

func hexOrSeparator(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == ' ' || c == ':'
}

// hexRuns returns hexRunRE's matches in lower: 12 or more hex pairs need
// 24 bytes in a row of hex digits and separators.
func hexRuns(lower string) []string {
	if !run(lower, 24, hexOrSeparator) {
		return nil
	}
	return hexRunRE().FindAllString(lower, -1)
}

// spaced reports whether lower has letter-spaced text ("i g n o r e"):
// in ASCII text, four letters each followed by a separator but the last.
func spaced(lower string) bool {
	for i := 0; i < len(lower); i++ {
		if lower[i] >= utf8.RuneSelf {
			return spacedRE().MatchString(lower)
		}
	}
	sep := func(c byte) bool { return c == ' ' || c == '.' || c == '_' || c == '-' || c == '*' }
	for i := 0; i+6 < len(lower); i++ {
		if asciiLetter(lower[i]) && sep(lower[i+1]) && asciiLetter(lower[i+2]) && sep(lower[i+3]) &&
			asciiLetter(lower[i+4]) && sep(lower[i+5]) && asciiLetter(lower[i+6]) {
			return spacedRE().MatchString(lower)
		}
	}
	return false
}

// printable reports whether s is text a person could read: valid UTF-8,
// letters and spaces mostly.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	letters, spaces, other := 0, 0, 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters++
		case r == ' ':
			spaces++
		case unicode.IsPrint(r):
		default:
			other++
		}
	}
	return other == 0 && spaces > 0 && letters*10 >= utf8.RuneCountInString(s)*6
}

// spelled returns the reading's text, spelling a ROT13 or reversed
// reading of lower out if it was not.
func (r *reading) spelled(lower string) string {
	if r.text == "" && r.view != asIs {
		r.text = view(r.view)(lower)
	}
	return r.text
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func rot13(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+13)%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+13)%26
		}
		return r
	}, s)
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}
