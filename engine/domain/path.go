package domain

import (
	"net/url"
	"strings"
)

// PathScope returns the path scope of a page path or URL, the part of a
// page's address a site's memory (selectors, facts, lesson checks) is
// scoped by: no query or fragment, no trailing slash, and each segment that
// is an identifier rather than a name (digits, long hex) as "*"; "" for none.
func PathScope(p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	if strings.Contains(p, "://") {
		if u, err := url.Parse(p); err == nil {
			p = u.EscapedPath()
		}
	}
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if idLike(s) {
			segs[i] = "*"
		}
	}
	p = strings.Join(segs, "/")
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
	}
	return p
}

// idLike reports whether a path segment is an identifier rather than a name.
func idLike(s string) bool {
	if s == "" {
		return false
	}
	digits, hex, other := 0, 0, 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F'):
			hex++
		case r == '-':
		default:
			other++
		}
	}
	if other > 0 {
		return false
	}
	return hex == 0 && digits > 0 || digits > 0 && digits+hex >= 8
}
