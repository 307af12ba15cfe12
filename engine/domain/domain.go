// Package domain turns URLs and hosts into the names memory is keyed by,
// and decides which hosts a domain-bound memory applies to.
//
// Matching follows the public suffix list (golang.org/x/net/publicsuffix),
// never naive string suffixes: "www.amazon.com" is within "amazon.com",
// "notamazon.com" is not, and "co.uk" covers nothing but itself.
package domain

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// MaxHost is the longest host name (DNS: 253 characters in its ASCII form).
const MaxHost = 253

// profile converts internationalised names to the ASCII (punycode) form
// browsers report ("bücher.de" → "xn--bcher-kva.de"), which is the form
// memory is stored under. Like browsers it allows '_' and "--" inside a
// label (r3---sn-abc.googlevideo.com).
var profile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false),
	idna.StrictDomainName(false), idna.CheckHyphens(false))

// Host returns the host of a URL or bare host name in the form memory is
// keyed by: lower-cased, without port or trailing dot, internationalised
// names in their ASCII (punycode) form, IP addresses in their canonical
// form: "https://WWW.Amazon.com:443/x" → "www.amazon.com", "bücher.de" →
// "xn--bcher-kva.de", "http://[::1]:8080/" → "::1". Host is idempotent.
//
// A host must be made of labels of letters, digits, '_' and '-' (not at a
// label's start or end), separated by single dots: ".", "..", "-", "a..b"
// and "*.example.com" are refused, with the reason.
func Host(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("empty domain")
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%q is not valid UTF-8", s)
	}
	// A bare IPv6 address ("::1") is no URL authority; take it as it is.
	if ip, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return ip.WithZone("").String(), nil
	}
	raw := s
	if !strings.Contains(s, "://") {
		raw = "http://" + s
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%q is not a host or URL: %v", s, err)
	}
	h := u.Hostname()
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.WithZone("").String(), nil
	}
	if h == "." || h == ".." {
		return "", fmt.Errorf("%q is not a host name", s)
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" {
		return "", fmt.Errorf("%q has no host", s)
	}
	if !plainASCII(h) || strings.Contains(h, "xn--") {
		a, err := profile.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("%q is not a valid host name: %v", s, err)
		}
		h = strings.ToLower(a)
	}
	if p := hostProblem(h); p != "" {
		return "", fmt.Errorf("%q is not a valid host name: %s", s, p)
	}
	return h, nil
}

// plainASCII reports whether h holds only what an ASCII host name may.
func plainASCII(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// hostProblem checks an ASCII host name's labels and length.
func hostProblem(h string) string {
	if len(h) > MaxHost {
		return fmt.Sprintf("it is %d characters long (at most %d)", len(h), MaxHost)
	}
	for _, l := range strings.Split(h, ".") {
		switch {
		case l == "":
			return "it has an empty label (a leading dot or two dots in a row)"
		case len(l) > 63:
			return fmt.Sprintf("label %q is longer than 63 characters", l)
		case l[0] == '-' || l[len(l)-1] == '-':
			return fmt.Sprintf("label %q starts or ends with a hyphen", l)
		case !plainASCII(l):
			return fmt.Sprintf("label %q may hold only letters, digits, '-' and '_'", l)
		}
	}
	return ""
}

// Site returns the registrable domain (eTLD+1) a host belongs to:
// "www.amazon.co.uk" → "amazon.co.uk". An IP address, a single-label name
// such as localhost, or a public suffix itself is its own site.
func Site(host string) string {
	if net.ParseIP(host) != nil || !strings.Contains(host, ".") {
		return host
	}
	s, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return s
}

// Within reports whether host is d or a subdomain of d. A d that is a public
// suffix ("com", "co.uk") matches only itself, so a lesson bound to "com"
// never leaks onto every .com site.
func Within(host, d string) bool {
	if host == d {
		return true
	}
	if d == "" || !strings.HasSuffix(host, "."+d) {
		return false
	}
	if net.ParseIP(d) != nil {
		return false
	}
	if suffix, _ := publicsuffix.PublicSuffix(d); suffix == d {
		return false
	}
	return true
}
