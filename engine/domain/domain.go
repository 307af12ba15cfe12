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
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Host returns the lower-cased host of a URL or bare host name, without port
// or trailing dot: "https://WWW.Amazon.com:443/x" → "www.amazon.com".
func Host(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("empty domain")
	}
	raw := s
	if !strings.Contains(s, "://") {
		raw = "http://" + s
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%q is not a host or URL: %v", s, err)
	}
	h := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if h == "" {
		return "", fmt.Errorf("%q has no host", s)
	}
	if strings.ContainsAny(h, " /\\*") {
		return "", fmt.Errorf("%q is not a valid host", s)
	}
	return h, nil
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
