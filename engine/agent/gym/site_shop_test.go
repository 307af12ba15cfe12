package gym

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/agent/demosite"
)

var shopFirstRE = regexp.MustCompile(`<a href="/item/\d+">([^<]+)</a>`)

// TestShopTraps checks the shop's traps on both variants (the cookie wall
// on the home page, or on the results after the redesign; the search
// widget; the newsletter) and that each task's first result starts with
// the name its rules click, renamed or not.
func TestShopTraps(t *testing.T) {
	for _, changed := range []bool{false, true} {
		srv := aSite(t, "shop", changed)
		_, home := aGet(t, nil, srv.URL+"/")
		if !strings.Contains(home, `role="searchbox" aria-label="Search products"`) {
			t.Errorf("changed %v: the search box is not the widget", changed)
		}
		if strings.Contains(home, `id="cookie-banner"`) == changed {
			t.Errorf("changed %v: the cookie wall on the home page: %v", changed, !changed)
		}
		if strings.Contains(home, ">"+demosite.RedesignButton+"</button>") != changed {
			t.Errorf("changed %v: the search button is not renamed as the variant says", changed)
		}
		for _, task := range aTasks("shop") {
			query := strings.TrimSuffix(strings.TrimPrefix(task.Goal, "search for "), " and open the first result")
			resp, res := aGet(t, nil, srv.URL+"/search?q="+url.QueryEscape(query))
			m := shopFirstRE.FindStringSubmatch(res)
			if resp.StatusCode != 200 || m == nil {
				t.Fatalf("%s (changed %v): no result: %d", task.Name, changed, resp.StatusCode)
			}
			if open := aRule(t, task, "open"); !strings.HasPrefix(m[1], open) {
				t.Errorf("%s (changed %v): the first result is %q, the rules click %q", task.Name, changed, m[1], open)
			}
			if !strings.Contains(res, `id="newsletter"`) || strings.Contains(res, `id="cookie-banner"`) != changed {
				t.Errorf("%s (changed %v): the results' overlays are not the variant's", task.Name, changed)
			}
		}
	}
}
