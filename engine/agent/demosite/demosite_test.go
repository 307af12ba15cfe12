package demosite

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestSiteServesTheTraps(t *testing.T) {
	for _, changed := range []bool{false, true} {
		s, err := Start(Options{Changed: changed})
		if err != nil {
			t.Fatal(err)
		}
		code, home := get(t, s.URL)
		if code != 200 || !strings.Contains(home, `id="cookie-banner"`) || !strings.Contains(home, `role="searchbox" aria-label="Search products"`) {
			t.Fatalf("home: %d\n%s", code, home)
		}
		code, res := get(t, s.URL+"search?q="+url.QueryEscape("padel rackets"))
		first := "Padel Racket Pro 3000"
		if changed {
			first = ChangedName
		}
		if code != 200 || !strings.Contains(res, `id="newsletter"`) || !strings.Contains(res, `<a href="/item/1">`+first+`</a>`) {
			t.Fatalf("results (changed=%v): %d\n%s", changed, code, res)
		}
		if strings.Contains(res, "Tennis") {
			t.Fatal("results match words the query does not have")
		}
		code, item := get(t, s.URL+"item/1")
		if code != 200 || !strings.Contains(item, "<title>"+first+"</title>") || !strings.Contains(item, "Buy now") {
			t.Fatalf("item: %d\n%s", code, item)
		}
		if code, _ := get(t, s.URL+"item/99"); code != 404 {
			t.Fatalf("missing item: %d", code)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSearch(t *testing.T) {
	got := Search(Catalogue, "Tennis balls")
	if len(got) != 1 || got[0].Name != "Tennis Balls (4 pack)" {
		t.Fatalf("%+v", got)
	}
	if got := Search(Catalogue, ""); len(got) != 0 {
		t.Fatalf("empty query: %+v", got)
	}
}

// The redesigned site: the first result renamed, the search button says
// Find, and the cookie banner is on the results page, not the home page.
func TestRedesign(t *testing.T) {
	s, err := Start(Options{Redesign: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	code, home := get(t, s.URL)
	if code != 200 || strings.Contains(home, `id="cookie-banner"`) || strings.Contains(home, `>Search</button>`) ||
		!strings.Contains(home, `>`+RedesignButton+`</button>`) || !strings.Contains(home, `role="searchbox" aria-label="Search products"`) {
		t.Fatalf("home: %d\n%s", code, home)
	}
	code, res := get(t, s.URL+"search?q="+url.QueryEscape("padel rackets"))
	if code != 200 || !strings.Contains(res, `id="cookie-banner"`) || !strings.Contains(res, `<button id="accept-cookies" type="button">Accept cookies</button>`) ||
		!strings.Contains(res, `<a href="/item/1">`+ChangedName+`</a>`) {
		t.Fatalf("results: %d\n%s", code, res)
	}
	// The normal site's results page has no cookie banner.
	plain, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, res := get(t, plain.URL+"search?q=padel"); strings.Contains(res, "cookie") {
		t.Fatalf("the normal results page has a cookie banner:\n%s", res)
	}
}
