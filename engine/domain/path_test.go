package domain

import "testing"

func TestPathScope(t *testing.T) {
	for in, want := range map[string]string{
		"":                                   "",
		"/":                                  "/",
		"/search/":                           "/search",
		"/product/12345/reviews?page=2#top":  "/product/*/reviews",
		"https://x.example/u/9f8e7d6c5b4a/a": "/u/*/a",
		"/orders/3f2b1c9e-1111-2222-3333-444455556666": "/orders/*",
		"/blog/cafe": "/blog/cafe",
		"settings":   "/settings",
	} {
		if got := PathScope(in); got != want {
			t.Errorf("PathScope(%q) = %q, want %q", in, got, want)
		}
	}
}
