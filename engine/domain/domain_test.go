package domain

import (
	"strings"
	"testing"
)

func TestHost(t *testing.T) {
	for in, want := range map[string]string{
		"https://WWW.Amazon.com:443/s?k=x": "www.amazon.com",
		"amazon.com":                       "amazon.com",
		"Amazon.COM.":                      "amazon.com",
		"127.0.0.1:8080":                   "127.0.0.1",
		"http://localhost:3000/":           "localhost",
		"[::1]:80":                         "::1",
	} {
		got, err := Host(in)
		if err != nil || got != want {
			t.Errorf("Host(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "   ", "http://", "a b.com", "*.x.com"} {
		if got, err := Host(bad); err == nil {
			t.Errorf("Host(%q) = %q, want an error", bad, got)
		}
	}
}

func TestSite(t *testing.T) {
	for in, want := range map[string]string{
		"www.amazon.com":     "amazon.com",
		"smile.amazon.co.uk": "amazon.co.uk",
		"amazon.com":         "amazon.com",
		"localhost":          "localhost",
		"127.0.0.1":          "127.0.0.1",
		"co.uk":              "co.uk",
		"foo.github.io":      "foo.github.io", // github.io is a public suffix
	} {
		if got := Site(in); got != want {
			t.Errorf("Site(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		host, d string
		want    bool
	}{
		{"www.amazon.com", "amazon.com", true},
		{"amazon.com", "amazon.com", true},
		{"a.b.amazon.com", "amazon.com", true},
		{"notamazon.com", "amazon.com", false},
		{"amazon.com.evil.net", "amazon.com", false},
		{"amazon.com", "www.amazon.com", false},
		{"amazon.co.uk", "co.uk", false},
		{"example.com", "com", false},
		{"1.127.0.0.1", "127.0.0.1", false},
		{"x.com", "", false},
	} {
		if got := Within(c.host, c.d); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.host, c.d, got, c.want)
		}
	}
}

// Hosts that are no host name are refused with a message that says why.
func TestHostRefusesNonHosts(t *testing.T) {
	for in, want := range map[string]string{
		".":                       `"." is not a host name`,
		"..":                      `".." is not a host name`,
		"-":                       `"-" is not a valid host name: label "-" starts or ends with a hyphen`,
		"a..b.com":                `"a..b.com" is not a valid host name: it has an empty label (a leading dot or two dots in a row)`,
		".example.com":            `".example.com" is not a valid host name: it has an empty label`,
		"*.example.com":           `"*.example.com" is not a valid host name: label "*" may hold only letters, digits, '-' and '_'`,
		strings.Repeat("a", 64):   `is longer than 63 characters`,
		"a\x00b.com":              `"a\x00b.com" is not a host or URL`,
		"x\xff.com":               `"x\xff.com" is not valid UTF-8`,
		strings.Repeat("a.", 130): `at most 253`,
	} {
		got, err := Host(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Host(%q) = %q, %v; want an error containing %q", in, got, err, want)
		}
	}
}

// Internationalised names are stored in the ASCII form browsers report, so
// a lesson about bücher.de is found on the page the browser calls
// xn--bcher-kva.de; IP addresses are canonical; '_' and "--" are allowed.
func TestHostNormalises(t *testing.T) {
	for in, want := range map[string]string{
		"bücher.de":                     "xn--bcher-kva.de",
		"https://WWW.Bücher.DE/x":       "www.xn--bcher-kva.de",
		"xn--bcher-kva.de":              "xn--bcher-kva.de",
		"http://b%C3%BCcher.de/":        "xn--bcher-kva.de",
		"::1":                           "::1",
		"[2001:DB8::1]":                 "2001:db8::1",
		"http://[2001:db8:0::1]:8443/a": "2001:db8::1",
		"[fe80::1%25eth0]:80":           "fe80::1",
		"my_host.local":                 "my_host.local",
		"r3---sn-abc.googlevideo.com":   "r3---sn-abc.googlevideo.com",
	} {
		got, err := Host(in)
		if err != nil || got != want {
			t.Errorf("Host(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if Site("www.xn--bcher-kva.de") != "xn--bcher-kva.de" || !Within("www.xn--bcher-kva.de", "xn--bcher-kva.de") {
		t.Error("punycode hosts do not match their site")
	}
}

// FuzzHost: Host either refuses its input or returns a host that is its own
// normal form (Host is idempotent), holds nothing a key part must not hold,
// and lies within its site.
func FuzzHost(f *testing.F) {
	for _, s := range []string{"https://WWW.Amazon.com:443/s?k=x", "bücher.de", "[::1]:8080", "::1", "..", ".", "-",
		"", "a..b", "http://b%C3%BCcher.de/", "127.0.0.1", "xn--bcher-kva.de", "co.uk", "foo.github.io", "ex_ample.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := Host(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if h == "" || h == "-" || h == "." || h == ".." || len(h) > MaxHost {
			t.Fatalf("Host(%q) = %q", s, h)
		}
		for _, r := range h {
			if r < '!' || r > '~' || r == '/' {
				t.Fatalf("Host(%q) = %q holds %q", s, h, r)
			}
		}
		again, err := Host(h)
		if err != nil || again != h {
			t.Fatalf("Host(Host(%q)) = %q, %v; want %q", s, again, err, h)
		}
		site := Site(h)
		if site == "" || !Within(h, site) && h != site {
			t.Fatalf("host %q is not within its site %q", h, site)
		}
		if sh, err := Host(site); err != nil || sh != site {
			t.Fatalf("site %q of %q does not parse as a host: %q, %v", site, h, sh, err)
		}
	})
}
