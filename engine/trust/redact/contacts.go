package redact

import (
	"strings"
	"sync"
)

// emailRule replaces email addresses by Email. A user in a URL
// (https://bob@host) is not an address, nor is a redacted password before
// a URL's host (https://bob:%5Bredacted%5D@host), nor is an image's density
// suffix (icon@2x.png).
var emailRule = sync.OnceValue(func() rule {
	return rule{
		at: emailAt,
		re: lazy(`^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.([A-Za-z]{2,})\b`),
		repl: func(s string, m []int) string {
			if strings.HasSuffix(s[:m[0]], "://") || strings.HasPrefix(s[m[0]:], secretUserinfo+"@") ||
				fileExt[strings.ToLower(s[m[2]:m[3]])] {
				return s[m[0]:m[1]]
			}
			return Email
		},
	}
})

// emailAt returns where an address may start at or after i: the start of
// the run of local-part characters before an '@'; or -1.
func emailAt(s string, i int) int {
	for {
		a := strings.IndexByte(s[i:], '@')
		if a < 0 {
			return -1
		}
		a += i
		k := a
		for k > i && localChar(s[k-1]) {
			k--
		}
		if k < a {
			return k
		}
		i = a + 1
	}
}

func localChar(c byte) bool {
	return isWord(c) && c < 0x80 || strings.IndexByte(".%+-", c) >= 0
}

// fileExt are file name extensions that are not top-level domains in use.
var fileExt = map[string]bool{"png": true, "jpg": true, "jpeg": true, "gif": true, "svg": true, "webp": true,
	"avif": true, "ico": true, "js": true, "mjs": true, "css": true, "html": true, "htm": true, "json": true,
	"txt": true, "pdf": true, "jsonl": true}

// phoneRule replaces phone numbers by Phone, conservatively: a leading +
// and 8–15 digits with optional single separators, or the common national
// formats (123) 456-7890, 123-456-7890 (with or without a leading 1-),
// 123.456.7890 and 0xx xxxx xxxx. A
// number that continues a longer one (a digit, a letter, a dot or a dash
// next to it) is not a phone number: dates, times, prices, versions, IPs,
// ports and ids pass.
var phoneRule = sync.OnceValue(func() rule {
	return rule{
		at: phoneAt,
		re: lazy(`^(?:\+\d+(?:[ .-]?\(\d+\)|[ .-]?\d+)*|(?:1[-. ])?\(\d{3}\) ?\d{3}[-. ]\d{4}|(?:1-)?\d{3}-\d{3}-\d{4}|\d{3}\.\d{3}\.\d{4}|0\d{1,4}[ -]\d{3,4}[ -]\d{3,4})`),
		repl: func(s string, m []int) string {
			p := s[m[0]:m[1]]
			if !phone(p) || joined(s, m[0], m[1]) {
				return p
			}
			return Phone
		},
	}
})

// phoneAt returns where a phone number may start at or after i (a '+' or
// '(' then a digit, or a number's first digit, with at least 8 digits
// close by), or -1.
func phoneAt(s string, i int) int {
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+' || c == '(':
			if i+1 >= len(s) || !isDigit(s[i+1]) {
				continue
			}
		case isDigit(c):
			if i > 0 && isWord(s[i-1]) {
				continue
			}
		default:
			continue
		}
		// At least 8 digits among the next characters of a phone number.
		n := 0
		for j := i; j < len(s) && j < i+40; j++ {
			if d := s[j]; isDigit(d) {
				n++
			} else if strings.IndexByte(" .-()+", d) < 0 {
				break
			}
		}
		if n >= 8 {
			return i
		}
	}
	return -1
}

// phone reports whether p, a match of phoneRule's expression, has as many
// digits as its format needs.
func phone(p string) bool {
	n := 0
	for i := 0; i < len(p); i++ {
		if isDigit(p[i]) {
			n++
		}
	}
	switch p[0] {
	case '+':
		return n >= 8 && n <= 15
	case '0':
		return n >= 9 && n <= 12
	}
	return n == 10 || n == 11 && p[0] == '1' // 1-800-555-0199

}

// joined reports whether s[i:j] continues text around it: a word
// character, a bracket or a number's separator next to it, or a separator
// then a digit.
func joined(s string, i, j int) bool {
	if i > 0 {
		c := s[i-1]
		if isWord(c) || strings.IndexByte(".-/+:#[]$,", c) >= 0 {
			return true
		}
		if c == ' ' && i > 1 && isDigit(s[i-2]) {
			return true
		}
	}
	if j < len(s) {
		c := s[j]
		if isWord(c) || c == '[' || c == ']' {
			return true
		}
		if strings.IndexByte(" .-/:,", c) >= 0 && j+1 < len(s) && isDigit(s[j+1]) {
			return true
		}
	}
	return false
}
