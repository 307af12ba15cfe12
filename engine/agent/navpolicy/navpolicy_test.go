package navpolicy

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// fakeDNS answers from a table; other names do not resolve.
func fakeDNS(table map[string]string) Resolver {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		a, ok := table[host]
		if !ok {
			return nil, errors.New("no such host")
		}
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	open := &Policy{}
	private := &Policy{AllowPrivate: true}
	amazon := &Policy{Allow: []string{"amazon.com", "b.org"}}
	amazonPrivate := &Policy{Allow: []string{"amazon.com", "127.0.0.1"}, AllowPrivate: true}
	idn := &Policy{Allow: mustDomains(t, "bücher.de")}
	dns := &Policy{Resolver: fakeDNS(map[string]string{"intranet.example.com": "10.1.2.3", "rebind.example.com": "::ffff:192.168.0.1", "www.example.com": "93.184.215.14"})}

	for _, tc := range []struct {
		p    *Policy
		url  string
		want string // "" allowed, else a substring of the reason
	}{
		// Schemes: never, whatever the policy.
		{private, "file:///etc/passwd", "file:// URLs are never allowed"},
		{private, "FILE:///etc/passwd", "file:// URLs are never allowed"},
		{private, "chrome://settings", "chrome:// URLs are never allowed"},
		{private, "javascript:alert(1)", "javascript: URLs are never allowed"},
		{private, "data:text/html,<b>x</b>", "data: URLs are never allowed"},
		{private, "about:blank", "about: URLs are never allowed"},
		{private, "ftp://example.com/x", "ftp:// URLs are never allowed"},
		{private, "view-source:https://example.com/", "view-source: URLs are never allowed"},
		{open, "example.com/path", "not a full URL"},
		{open, "http:///nohost", "no host"},
		{open, "http://%6c%6fcalhost/", "not a valid URL"},

		// Public sites: allowed without a list.
		{open, "https://example.com/", ""},
		{open, "http://EXAMPLE.com.:8080/x?y=1", ""},
		{open, "https://93.184.215.14/", ""},
		{open, "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/", ""},
		{open, "http://my_host.example.com/", ""},

		// Loopback, private, link-local: IPv4, IPv6, names, odd forms.
		{open, "http://127.0.0.1:8080/", "127.0.0.1 is a loopback address"},
		{open, "http://127.1/", "127.0.0.1 is a loopback address"},
		{open, "http://2130706433/", "127.0.0.1 is a loopback address"},
		{open, "http://0x7f000001/", "127.0.0.1 is a loopback address"},
		{open, "http://0x7f.1/", "127.0.0.1 is a loopback address"},
		{open, "http://0177.0.0.1/", "127.0.0.1 is a loopback address"},
		{open, "http://127.0.0.1./", "127.0.0.1 is a loopback address"},
		{open, "http://0.0.0.0:3000/", "0.0.0.0 is an unspecified address"},
		{open, "http://0/", "0.0.0.0 is an unspecified address"},
		{open, "http://10.0.0.1/", "a private address"},
		{open, "http://172.16.5.4/", "a private address"},
		{open, "http://192.168.1.1/admin", "a private address"},
		{open, "http://3232235777/", "192.168.1.1 is a private address"},
		{open, "http://169.254.169.254/latest/meta-data/", "a link-local address"},
		{open, "http://100.64.0.1/", "carrier-grade NAT"},
		{open, "http://224.0.0.1/", "multicast"},
		{open, "http://255.255.255.255/", "broadcast"},
		{open, "http://[::1]:8080/", "::1 is a loopback address"},
		{open, "http://[::]/", "unspecified"},
		{open, "http://[::ffff:127.0.0.1]/", "loopback"},
		{open, "http://[::ffff:7f00:1]/", "loopback"},
		{open, "http://[fe80::1%25eth0]/", "fe80::1 is a link-local address"},
		{open, "http://[fd12:3456::1]/", "a private address"},
		{open, "http://[64:ff9b::a00:1]/", "a private address"}, // NAT64 of 10.0.0.1
		{open, "http://localhost:3000/", "localhost is the local machine"},
		{open, "http://LOCALHOST./", "localhost is the local machine"},
		{open, "http://app.localhost/", "the local machine"},
		{open, "http://printer.local/", "mDNS"},
		{open, "http://metadata.google.internal/", "local network name"},
		{open, "http://router.home.arpa/", "local network name"},
		{open, "http://intranet/", "single-label"},
		{open, "http://1.2.3.4.5/", "not a valid IPv4 address"},
		{open, "http://256.1.1.1/", "not a valid IPv4 address"},
		{open, "http://4294967296/", "not a valid IPv4 address"},
		{open, "http://[::1/", "not a valid URL"},
		{private, "http://127.0.0.1:8080/", ""},
		{private, "http://[::ffff:127.0.0.1]/", ""},
		{private, "http://localhost./x", ""},
		{private, "http://2130706433/", ""},

		// The allow list: the domain and its subdomains, public-suffix aware.
		{amazon, "https://amazon.com/", ""},
		{amazon, "https://www.amazon.com/dp/1", ""},
		{amazon, "https://smile.Amazon.COM./x", ""},
		{amazon, "https://x.b.org/", ""},
		{amazon, "https://notamazon.com/", "notamazon.com is not within the allowed domains (amazon.com, b.org)"},
		{amazon, "https://amazon.com.evil.net/", "is not within the allowed domains"},
		{amazon, "https://amazon.co.uk/", "is not within the allowed domains"},
		{amazon, "https://amazon.com@evil.net/", "evil.net is not within"},
		{amazon, "https://evil.net/?u=https://amazon.com", "evil.net is not within"},
		{amazon, "http://127.0.0.1/", "127.0.0.1 is not within"},
		{amazon, "file:///etc/passwd", "file:// URLs are never allowed"},
		{amazonPrivate, "http://127.0.0.1:9000/", ""},
		{amazonPrivate, "http://2130706433/", ""},
		{amazonPrivate, "http://127.0.0.2/", "127.0.0.2 is not within"},
		{amazonPrivate, "http://localhost/", "localhost is not within"},
		{idn, "https://bücher.de/", ""},
		{idn, "https://www.xn--bcher-kva.de/", ""},
		{idn, "https://bucher.de/", "bucher.de is not within the allowed domains (xn--bcher-kva.de)"},

		// Resolution: a public name that resolves to a private address.
		{dns, "https://intranet.example.com/", "intranet.example.com resolves to 10.1.2.3, a private address"},
		{dns, "https://rebind.example.com/", "resolves to 192.168.0.1, a private address"},
		{dns, "https://www.example.com/", ""},
		{dns, "https://unresolvable.example.com/", ""},
	} {
		err := tc.p.Check(ctx, tc.url)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v Check(%q) = %v, want allowed", *tc.p, tc.url, err)
		case tc.want != "" && err == nil:
			t.Errorf("%+v Check(%q) allowed, want %q", *tc.p, tc.url, tc.want)
		case tc.want != "" && !strings.Contains(err.Error(), tc.want):
			t.Errorf("%+v Check(%q) = %v, want %q", *tc.p, tc.url, err, tc.want)
		}
		if err != nil {
			var be *BlockedError
			if !errors.As(err, &be) || !strings.HasPrefix(err.Error(), "navigation to ") {
				t.Errorf("Check(%q) = %T %v, want a *BlockedError", tc.url, err, err)
			}
		}
	}
}

func TestBlockedMessage(t *testing.T) {
	err := (&Policy{}).Check(context.Background(), "file:///etc/passwd")
	if got, want := err.Error(), "navigation to file:///etc/passwd blocked: file:// URLs are never allowed (only http and https)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var nilPolicy *Policy
	if err := nilPolicy.Check(context.Background(), "https://example.com/"); err != nil {
		t.Errorf("nil policy: %v", err)
	}
	if err := nilPolicy.Check(context.Background(), "http://localhost/"); err == nil {
		t.Error("nil policy allowed localhost")
	}
}

func TestCheckLanded(t *testing.T) {
	ctx := context.Background()
	p := &Policy{Allow: []string{"a.com"}}
	for u, ok := range map[string]bool{
		"about:blank":                   true,
		"about:blank#blocked":           true,
		"chrome-error://chromewebdata/": true,
		"https://www.a.com/":            true,
		"https://b.com/":                false,
		"file:///etc/passwd":            false,
		"data:text/html,hi":             false,
		"about:config":                  false,
	} {
		if err := p.CheckLanded(ctx, u); (err == nil) != ok {
			t.Errorf("CheckLanded(%q) = %v, want allowed=%v", u, err, ok)
		}
	}
}

func TestForStart(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		p           *Policy
		start       string
		err         string
		privateOK   bool
		thenAllowed string // a URL the returned policy must allow
		thenBlocked string // and one it must block
	}{
		{nil, "https://example.com/", "", false, "https://other.org/", "http://127.0.0.1/"},
		{nil, "http://127.0.0.1:8080/", "", true, "http://[::1]/", "file:///etc/passwd"},
		{nil, "http://localhost:3000/", "", true, "http://10.0.0.1/", "chrome://version"},
		{&Policy{Resolver: fakeDNS(map[string]string{"wiki.corp.example": "10.9.9.9"})}, "https://wiki.corp.example/", "", true, "http://192.168.0.1/", ""},
		{&Policy{Allow: []string{"a.com"}}, "https://www.a.com/", "", false, "https://a.com/x", "https://b.com/"},
		{&Policy{Allow: []string{"a.com"}}, "https://b.com/", "start URL https://b.com/: b.com is not within the allowed domains (a.com)", false, "", ""},
		{&Policy{Allow: []string{"127.0.0.1"}}, "http://127.0.0.1:1234/", "", true, "http://127.0.0.1:9/", "http://localhost/"},
		{nil, "file:///etc/passwd", "start URL file:///etc/passwd: file:// URLs are never allowed", false, "", ""},
		{nil, "javascript:alert(1)", "javascript: URLs are never allowed", false, "", ""},
		{nil, "example.com", "not a full URL", false, "", ""},
	} {
		q, err := tc.p.ForStart(ctx, tc.start)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ForStart(%q) = %v, want %q", tc.start, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ForStart(%q): %v", tc.start, err)
			continue
		}
		if q.AllowPrivate != tc.privateOK {
			t.Errorf("ForStart(%q).AllowPrivate = %v", tc.start, q.AllowPrivate)
		}
		if tc.thenAllowed != "" {
			if err := q.Check(ctx, tc.thenAllowed); err != nil {
				t.Errorf("after start %q: %v", tc.start, err)
			}
		}
		if tc.thenBlocked != "" && q.Check(ctx, tc.thenBlocked) == nil {
			t.Errorf("after start %q: %q allowed", tc.start, tc.thenBlocked)
		}
	}
	// ForStart does not change the policy it was called on.
	p := &Policy{}
	if _, err := p.ForStart(ctx, "http://127.0.0.1/"); err != nil || p.AllowPrivate {
		t.Errorf("ForStart changed its receiver: %+v, %v", p, err)
	}
}

func TestParseDomains(t *testing.T) {
	got, err := ParseDomains(" Amazon.com, *.b.org ,https://C.net/x, .d.io,bücher.de,127.0.0.1,")
	if err != nil {
		t.Fatal(err)
	}
	if want := "amazon.com b.org c.net d.io xn--bcher-kva.de 127.0.0.1"; strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, err := ParseDomains(""); err != nil || len(got) != 0 {
		t.Errorf("empty: %q, %v", got, err)
	}
	for _, bad := range []string{",", "a b.com", "x.com,*", "http://"} {
		if got, err := ParseDomains(bad); err == nil {
			t.Errorf("ParseDomains(%q) = %q, want an error", bad, got)
		}
	}
}

func mustDomains(t *testing.T, s string) []string {
	t.Helper()
	d, err := ParseDomains(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
