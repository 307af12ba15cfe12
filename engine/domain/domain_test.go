package domain

import "testing"

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
