package agent

import (
	"strings"
	"testing"
)

// The allocation-free forms say what the plain ones say, whatever the
// text: white space of every kind, case that lowers to another length
// (İ, the Kelvin sign), invalid UTF-8.
func FuzzNormalise(f *testing.F) {
	for _, s := range [][3]string{
		{"Product 1", "product 1", "link"},
		{"Product  1", "link product 1", "Link"},
		{"  Search   products ", "search products", "searchbox"},
		{"a\tb\nc", "a b c", "Button"},
		{"İstanbul", "i̇stanbul", "LINK"},
		{"\u212a Kelvin", "k kelvin", "link"},
		{"non\u00a0breaking", "non breaking", "link"},
		{"\xff\xfe bad", "\ufffd\ufffd bad", "li\xffnk"},
		{"", "", ""},
		{"x ", "x", " "},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, s, u, role string) {
		if got, want := oneLine(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("oneLine(%q) = %q, want %q", s, got, want)
		}
		if got, want := lowerEqual(s, u), strings.ToLower(s) == u; got != want {
			t.Fatalf("lowerEqual(%q, %q) = %v", s, u, got)
		}
		if got, want := lowerHasPrefix(s, u), strings.HasPrefix(strings.ToLower(s), u); got != want {
			t.Fatalf("lowerHasPrefix(%q, %q) = %v", s, u, got)
		}
		if got, want := lowerPairEqual(role, s, u), strings.ToLower(role)+" "+strings.ToLower(s) == u; got != want {
			t.Fatalf("lowerPairEqual(%q, %q, %q) = %v", role, s, u, got)
		}
		for _, n := range []int{0, 1, 3, 60} {
			want := s
			if r := []rune(s); len(r) > n {
				want = string(r[:n]) + "…"
			}
			if got := clip(s, n); got != want {
				t.Fatalf("clip(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	})
}
