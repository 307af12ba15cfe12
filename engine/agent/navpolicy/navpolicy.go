// Package navpolicy holds the navigation policy of an agent run: which URLs
// the agent may load, whether the model typed them (navigate) or the page
// took it there (a link, a form, a redirect).
//
// The rules, in the order they are checked:
//
//  1. Only http and https. file://, chrome://, javascript:, data:, about:
//     and every other scheme are never allowed, whatever the flags.
//  2. The host must be a valid host. Browsers read hosts that end in a
//     number as IPv4 addresses the WHATWG way ("127.1", "2130706433",
//     "0x7f.1", "0177.0.0.1" are all 127.0.0.1), and so does this package.
//  3. With an allow list (--allow-domains), the host must be one of its
//     domains or a subdomain of one, by engine/domain's public-suffix-aware
//     matching: "www.amazon.com" is within "amazon.com", "notamazon.com" is
//     not, and a listed public suffix ("co.uk") covers nothing but itself.
//  4. Private addresses are allowed only when AllowPrivate is set (the start
//     URL is one, or --allow-private): loopback, RFC 1918 / unique local,
//     link-local (169.254/16 with the cloud metadata service, fe80::/10),
//     unspecified (0.0.0.0, ::), carrier-grade NAT, multicast and the other
//     non-global ranges, IPv4-mapped IPv6 forms of those ([::ffff:127.0.0.1]),
//     and the names that only ever mean the local machine or network:
//     localhost and *.localhost, *.local (mDNS), *.internal, *.home.arpa, and
//     single-label names (resolved through local search domains).
//  5. With a Resolver, a host name is also resolved and refused when any of
//     its addresses is private. A name that does not resolve is allowed (the
//     browser cannot load it either). This is a check at the edge, not a
//     guarantee: the browser resolves the name again, and a name that
//     answers with a public address to us and a private one to the browser
//     (DNS rebinding) gets through. Only a check where the connection is made
//     (a proxy, or request interception in the browser plugin) closes that.
package navpolicy

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/idna"

	"github.com/engine-dev/engine/engine/domain"
)

// lookup maps host names to ASCII as browsers do (UTS 46, non-transitional),
// but, like browsers, allows underscores.
var lookup = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false))

// Resolver resolves a host name to its addresses.
type Resolver func(ctx context.Context, host string) ([]netip.Addr, error)

// Policy says where a run may navigate. The zero Policy allows every
// public http(s) URL.
type Policy struct {
	// Allow restricts navigation to these domains and their subdomains
	// (normalised by ParseDomains); empty allows every site.
	Allow []string
	// AllowPrivate allows private, loopback and link-local addresses.
	AllowPrivate bool
	// Resolver, when set, resolves host names to check their addresses;
	// nil checks only literal addresses and local names.
	Resolver Resolver
	// PrivateHint says how private addresses are allowed, in the reason a
	// private one is refused with; "" for engine run's way (a private
	// start URL, or --allow-private).
	PrivateHint string
}

// BlockedError is a navigation the policy refuses.
type BlockedError struct {
	URL    string
	Reason string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("navigation to %s blocked: %s", e.URL, e.Reason)
}

// ParseDomains reads a comma-separated list of domains ("a.com, b.org"), as
// hosts or URLs, into normalised ASCII host names. "*.a.com" and ".a.com"
// mean a.com (subdomains are always included).
func ParseDomains(list string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		d := strings.TrimPrefix(strings.TrimPrefix(part, "*."), ".")
		h, err := domain.Host(d)
		if err != nil {
			return nil, fmt.Errorf("allowed domain %q: %v", part, err)
		}
		h, reason := normalizeHost(h)
		if reason != "" {
			return nil, fmt.Errorf("allowed domain %q: %s", part, reason)
		}
		out = append(out, h)
	}
	if len(out) == 0 && strings.TrimSpace(list) != "" {
		return nil, fmt.Errorf("allowed domains %q: no domain given", list)
	}
	return out, nil
}

// ForStart checks a run's start URL and returns the policy the run uses:
// p (nil for the zero Policy) with private addresses allowed when the
// start URL is itself private. The error says why the start URL cannot be
// used (not http(s), not a valid host, outside the allow list).
func (p *Policy) ForStart(ctx context.Context, start string) (*Policy, error) {
	q := Policy{}
	if p != nil {
		q = *p
	}
	u, host, err := parse(start)
	if err != nil {
		return nil, fmt.Errorf("start URL %s: %s", start, err.Reason)
	}
	if !q.AllowPrivate {
		if _, private := q.privateReason(ctx, host); private {
			q.AllowPrivate = true
		}
	}
	if err := q.check(ctx, u.String(), host); err != nil {
		return nil, fmt.Errorf("start URL %s: %s", start, err.Reason)
	}
	return &q, nil
}

// Check says whether the agent may navigate to raw: nil, or a
// *BlockedError with the reason.
func (p *Policy) Check(ctx context.Context, raw string) error {
	_, host, err := parse(raw)
	if err != nil {
		return err
	}
	if err := p.check(ctx, raw, host); err != nil {
		return err
	}
	return nil
}

// CheckLanded says whether a page the browser shows (a snapshot's URL) may
// stay: Check, except that the browser's own empty and error pages
// (about:blank, chrome-error://) hold nothing from anywhere and are
// tolerated.
func (p *Policy) CheckLanded(ctx context.Context, raw string) error {
	l := strings.ToLower(strings.TrimSpace(raw))
	if l == "" || l == "about:blank" || strings.HasPrefix(l, "about:blank#") || strings.HasPrefix(l, "about:blank?") || strings.HasPrefix(l, "chrome-error://") {
		return nil
	}
	return p.Check(ctx, raw)
}

func (p *Policy) check(ctx context.Context, raw, host string) *BlockedError {
	if p == nil {
		p = &Policy{}
	}
	if len(p.Allow) > 0 {
		in := false
		for _, d := range p.Allow {
			if domain.Within(host, d) {
				in = true
				break
			}
		}
		if !in {
			return &BlockedError{URL: raw, Reason: fmt.Sprintf("%s is not within the allowed domains (%s)", host, strings.Join(p.Allow, ", "))}
		}
	}
	if !p.AllowPrivate {
		if why, private := p.privateReason(ctx, host); private {
			hint := p.PrivateHint
			if hint == "" {
				hint = "private addresses are allowed only when the run starts on one, or with --allow-private"
			}
			return &BlockedError{URL: raw, Reason: why + " (" + hint + ")"}
		}
	}
	return nil
}

// parse checks the scheme and the host of raw; host comes back normalised
// (lower case, no trailing dot, ASCII, IPv4 in dotted decimal).
func parse(raw string) (*url.URL, string, *BlockedError) {
	s := strings.TrimSpace(raw)
	bad := func(format string, a ...any) (*url.URL, string, *BlockedError) {
		return nil, "", &BlockedError{URL: s, Reason: fmt.Sprintf(format, a...)}
	}
	u, err := url.Parse(s)
	if err != nil {
		return bad("not a valid URL")
	}
	switch scheme := strings.ToLower(u.Scheme); scheme {
	case "http", "https":
	case "":
		return bad("not a full URL: give http:// or https://")
	default:
		sep := ":"
		if strings.HasPrefix(s[len(scheme)+1:], "//") {
			sep = "://"
		}
		return bad("%s%s URLs are never allowed (only http and https)", scheme, sep)
	}
	h := u.Hostname()
	if h == "" {
		return bad("the URL has no host")
	}
	host, reason := normalizeHost(h)
	if reason != "" {
		return bad("%s", reason)
	}
	return u, host, nil
}

// normalizeHost lower-cases h, drops a trailing dot, turns an IDN into its
// ASCII form and a number-ending host into its IPv4 address. reason is
// set when h is not a valid host.
func normalizeHost(h string) (string, string) {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" {
		return "", "the URL has no host"
	}
	if strings.Contains(h, ":") { // IPv6 (url.Hostname strips the brackets)
		a, err := netip.ParseAddr(h)
		if err != nil {
			return "", fmt.Sprintf("%q is not a valid IPv6 address", h)
		}
		return a.WithZone("").String(), ""
	}
	ascii, err := lookup.ToASCII(h)
	if err != nil {
		return "", fmt.Sprintf("%q is not a valid host name", h)
	}
	if a, ok, err := parseIPv4(ascii); ok {
		if err != nil {
			return "", fmt.Sprintf("%q is not a valid IPv4 address", h)
		}
		return a.String(), ""
	}
	return ascii, ""
}

// parseIPv4 reads a host the way browsers do (the WHATWG URL standard): a
// host whose last label is a number is an IPv4 address of 1 to 4 parts,
// each decimal, 0x hex or 0-led octal, the last part filling the remaining
// bytes ("127.1", "2130706433"). ok is false for a host name.
func parseIPv4(h string) (netip.Addr, bool, error) {
	parts := strings.Split(h, ".")
	if last := parts[len(parts)-1]; !isNumber(last) {
		return netip.Addr{}, false, nil
	}
	fail := fmt.Errorf("invalid IPv4 address")
	if len(parts) > 4 {
		return netip.Addr{}, true, fail
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, true, fail
		}
		n, ok := number(p)
		if !ok {
			return netip.Addr{}, true, fail
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, true, fail
		}
	}
	rest := uint(4 - len(nums) + 1) // bytes the last part fills
	if nums[len(nums)-1] >= 1<<(8*rest) {
		return netip.Addr{}, true, fail
	}
	v := nums[len(nums)-1]
	for i, n := range nums[:len(nums)-1] {
		v |= n << (8 * uint(3-i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

// isNumber is the WHATWG "ends in a number" test for one label.
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	if _, ok := number(s); ok {
		return true
	}
	// A label of digits only is a number even when too big to parse.
	return strings.Trim(s, "0123456789") == ""
}

func number(s string) (uint64, bool) {
	base, digits := 10, s
	switch {
	case strings.HasPrefix(s, "0x"):
		base, digits = 16, s[2:]
		if digits == "" {
			return 0, true
		}
	case len(s) > 1 && s[0] == '0':
		base, digits = 8, s[1:]
	}
	n, err := strconv.ParseUint(digits, base, 64)
	if err != nil || n > 0xffffffff {
		return 0, false
	}
	return n, true
}

// privateReason says why host is private ("127.0.0.1 is a loopback
// address"), resolving it when the policy has a Resolver.
func (p *Policy) privateReason(ctx context.Context, host string) (string, bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		if kind := addrKind(a); kind != "" {
			if a.Is4In6() {
				host += " (" + a.Unmap().String() + ")"
			}
			return fmt.Sprintf("%s is %s address", host, kind), true
		}
		return "", false
	}
	if kind := nameKind(host); kind != "" {
		return fmt.Sprintf("%s is %s", host, kind), true
	}
	if p.Resolver == nil {
		return "", false
	}
	addrs, err := p.Resolver(ctx, host)
	if err != nil {
		return "", false
	}
	for _, a := range addrs {
		if kind := addrKind(a); kind != "" {
			return fmt.Sprintf("%s resolves to %s, %s address", host, a.Unmap(), kind), true
		}
	}
	return "", false
}

var nonGlobal = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a \"this network\""},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT"},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local NAT64"},
}

// addrKind names the kind of a non-public address ("a loopback"), or "".
func addrKind(a netip.Addr) string {
	if a.Is4In6() {
		a = a.Unmap()
	}
	if a.Is6() && netip.MustParsePrefix("64:ff9b::/96").Contains(a) {
		// NAT64: the IPv4 address is in the last four bytes.
		b := a.As16()
		if k := addrKind(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})); k != "" {
			return k
		}
	}
	switch {
	case a.IsUnspecified():
		return "an unspecified"
	case a.IsLoopback():
		return "a loopback"
	case a.IsPrivate():
		return "a private"
	case a.IsLinkLocalUnicast():
		return "a link-local"
	case a.IsMulticast():
		return "a multicast"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "a broadcast"
	}
	for _, n := range nonGlobal {
		if n.prefix.Contains(a) {
			return n.kind
		}
	}
	return ""
}

// nameKind names a host name that can only mean the local machine or
// network, or "".
func nameKind(host string) string {
	switch {
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return "the local machine (localhost)"
	case strings.HasSuffix(host, ".local"):
		return "a local network (mDNS .local) name"
	case strings.HasSuffix(host, ".internal") || host == "home.arpa" || strings.HasSuffix(host, ".home.arpa"):
		return "a local network name"
	case !strings.Contains(host, "."):
		return "a single-label (intranet) name"
	}
	return ""
}

// NewDNSResolver returns a Resolver that asks the system resolver, each
// name at most once (a run's checks see one answer per name) and at most
// timeout per lookup.
func NewDNSResolver(timeout time.Duration) Resolver {
	var mu sync.Mutex
	cache := map[string][]netip.Addr{}
	return func(ctx context.Context, host string) ([]netip.Addr, error) {
		mu.Lock()
		addrs, ok := cache[host]
		mu.Unlock()
		if ok {
			return addrs, nil
		}
		lctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		addrs, err := net.DefaultResolver.LookupNetIP(lctx, "ip", host)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		cache[host] = addrs
		mu.Unlock()
		return addrs, nil
	}
}
