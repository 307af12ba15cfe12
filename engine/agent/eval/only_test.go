package eval

import (
	"strings"
	"testing"
)

// --only keeps the names any pattern matches, in their order; a pattern
// that is malformed or matches nothing is an error naming it.
func TestOnly(t *testing.T) {
	names := []string{"shop.cart", "shop.search", "news.latest", "news.archive"}
	got, err := Only(names, "shop.*, news.latest")
	if err != nil || strings.Join(got, " ") != "shop.cart shop.search news.latest" {
		t.Errorf("%v, %v", got, err)
	}
	for pat, want := range map[string]string{
		"shop.*,blog.*": `pattern "blog.*" matches no case (the cases: shop.cart, shop.search, news.latest, news.archive)`,
		"shop.[":        `pattern "shop.[": syntax error in pattern`,
		" , ":           "no patterns",
	} {
		if _, err := Only(names, pat); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", pat, err, want)
		}
	}
}
