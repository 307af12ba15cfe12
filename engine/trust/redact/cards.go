package redact

import "strings"

// maxGroups bounds the digit groups of one run cards looks at; a longer run
// is looked at in pieces.
const maxGroups = 32

// cards returns s with payment card numbers replaced by Secret: 13–19
// digits, optionally grouped by single spaces or dashes, not glued to
// letters nor after a + (a phone number), with a card issuer's prefix and length and a valid Luhn
// checksum. Within a run of groups (a date then a card, say) the longest
// card starting at each group is taken.
func cards(s string) string {
	var b strings.Builder
	last, replaced := 0, false
	var gs [maxGroups][2]int // each group's start and end in s
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		if i > 0 && (isWord(s[i-1]) || s[i-1] == '+') { // inside an identifier, or a phone number: skip it
			for i < len(s) && isWord(s[i]) {
				i++
			}
			continue
		}
		// The run of groups from i.
		n := 0
		j := i
		for n < maxGroups {
			k := j
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			gs[n] = [2]int{j, k}
			n++
			if k+1 < len(s) && (s[k] == ' ' || s[k] == '-') && isDigit(s[k+1]) {
				j = k + 1
				continue
			}
			break
		}
		end := gs[n-1][1]
		if end < len(s) && isWord(s[end]) { // the last group is glued to letters
			n--
		}
		for g := 0; g < n; {
			h := longestCard(s, gs[g:n])
			if h < 0 {
				g++
				continue
			}
			if !replaced {
				b.Grow(len(s))
				replaced = true
			}
			b.WriteString(s[last:gs[g][0]])
			b.WriteString(Secret)
			last = gs[g+h][1]
			g += h + 1
		}
		i = end
		for i < len(s) && isWord(s[i]) {
			i++
		}
	}
	if !replaced {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// longestCard returns the index of the last group of the longest card
// starting at gs[0], or -1.
func longestCard(s string, gs [][2]int) int {
	digits := 0
	best := -1
	for h, g := range gs {
		digits += g[1] - g[0]
		if digits > 19 {
			break
		}
		if digits >= 13 && isCard(s, gs[:h+1], digits) {
			best = h
		}
	}
	return best
}

// isCard reports whether the digits of groups gs (n of them) have an
// issuer's prefix and length and pass the Luhn check.
func isCard(s string, gs [][2]int, n int) bool {
	prefix, got := 0, 0 // the first six digits
	sum, pos := 0, 0    // Luhn, from the rightmost digit
	for h := len(gs) - 1; h >= 0; h-- {
		for i := gs[h][1] - 1; i >= gs[h][0]; i-- {
			d := int(s[i] - '0')
			if pos%2 == 1 {
				d *= 2
				if d > 9 {
					d -= 9
				}
			}
			sum += d
			pos++
		}
	}
	if sum%10 != 0 {
		return false
	}
	for _, g := range gs {
		for i := g[0]; i < g[1] && got < 6; i++ {
			prefix = prefix*10 + int(s[i]-'0')
			got++
		}
	}
	p1, p2, p3, p4 := prefix/100000, prefix/10000, prefix/1000, prefix/100
	switch {
	case p1 == 4: // Visa
		return n == 13 || n == 16 || n == 19
	case p2 >= 51 && p2 <= 55 || p4 >= 2221 && p4 <= 2720: // Mastercard
		return n == 16
	case p2 == 34 || p2 == 37: // Amex
		return n == 15
	case p4 == 6011 || p2 == 65 || p3 >= 644 && p3 <= 649: // Discover
		return n >= 16
	case p2 == 35: // JCB
		return n >= 16
	case p2 == 62: // UnionPay
		return n >= 16
	case p2 == 36 || p2 == 38 || p3 >= 300 && p3 <= 305: // Diners Club
		return n >= 14
	}
	return false
}
