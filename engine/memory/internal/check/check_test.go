package check

import (
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

// The page checks every store shares: fingerprints, what a memory was
// checked against, and stale marks.
func TestPageChecks(t *testing.T) {
	for _, c := range []struct {
		name, got, want string
	}{
		{"empty fingerprint", Fingerprint("page", ""), ""},
		{"fingerprint", Fingerprint("page", "0123456789abcdef"), ""},
		{"too long", Fingerprint("page", "0123456789abcdef0"), "not a fingerprint"},
		{"upper case", Fingerprint("page", "ABCD"), "not a fingerprint"},
		{"checked", Checked(engine.Checked{Path: "/search", Fingerprint: "a1", Page: "b2"}, 100), ""},
		{"checked path", Checked(engine.Checked{Path: "/\x00"}, 100), "checked.path"},
		{"checked page", Checked(engine.Checked{Page: "zz"}, 100), "checked.page"},
		{"stale", Stale(engine.Stale{Run: "r1", Reason: "gone"}, false), ""},
		{"stale no reason", Stale(engine.Stale{Run: "r1", Reason: " "}, false), "stale.reason is empty"},
		{"stale step", Stale(engine.Stale{Reason: "gone"}, true), "stale.step 0"},
		{"stale step given", Stale(engine.Stale{Step: 2, Reason: "gone"}, true), ""},
	} {
		if c.want == "" && c.got != "" || c.want != "" && !strings.Contains(c.got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}

// A run's or session's domain is a host of a site, or the URL given
// instead of it; each problem is named. (No host is of the global site's
// name, so its check is a guard, never met here.)
func TestDomain(t *testing.T) {
	for _, c := range []struct{ d, host, problem string }{
		{"Shop.Example", "shop.example", ""},
		{"https://www.shop.example/cart?x=1", "www.shop.example", ""},
		{"", "", "no domain: give the domain or the start URL"},
		{"exa mple", "", "domain: "},
		{"-", "", `domain: "-" is not a valid host name`},
	} {
		h, p := Domain(c.d, "start URL")
		if h != c.host || !strings.HasPrefix(p, c.problem) || (c.problem == "") != (p == "") {
			t.Errorf("Domain(%q) = %q, %q; want %q, %q", c.d, h, p, c.host, c.problem)
		}
	}
}
