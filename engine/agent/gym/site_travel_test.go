package gym

import (
	"html"
	"net/http"
	"strings"
	"testing"
)

// TestTravelTraps checks the travel site on both variants: a read-only
// date field with a picker of the month's days named as the variant names
// them, suggestion lists laid over the date field and the search button,
// the variant's suggestions and button, and a search that needs both
// airports and a date.
func TestTravelTraps(t *testing.T) {
	for _, changed := range []bool{false, true} {
		srv := aSite(t, "travel", changed)
		_, page := aGet(t, nil, srv.URL+"/")
		page = html.UnescapeString(page)
		if !strings.Contains(page, `aria-label="Date" placeholder="Date" readonly>`) || !strings.Contains(page, `role="dialog" aria-label="Choose a date" hidden`) {
			t.Errorf("changed %v: no read-only date field with a picker", changed)
		}
		button := map[bool]string{false: "Search flights", true: "Find flights"}[changed]
		if !strings.Contains(page, ">"+button+"</button>") {
			t.Errorf("changed %v: the search button is not %q", changed, button)
		}
		for _, task := range aTasks("travel") {
			day := aRule(t, task, "day")
			if changed {
				day = aRule(t, task, "day-renamed")
			}
			if !strings.Contains(page, `aria-label="`+day+`"`) {
				t.Errorf("%s (changed %v): the picker has no day %q", task.Name, changed, day)
			}
			from := aRule(t, task, "pick-from")
			if !strings.Contains(page, `"label":"`+from+`"`) != changed {
				t.Errorf("%s (changed %v): the suggestion %q is there: %v", task.Name, changed, from, !changed)
			}
		}
		// The lists open 34px below the city fields and keep their first
		// 56px empty: the date field and the button, 60px below, are under
		// them.
		_, css := aGet(t, nil, srv.URL+"/style.css")
		for _, want := range []string{"#date { left: 0; top: 60px; }", "#search-btn { left: 250px; top: 60px; }", "top: 34px;", "padding: 56px 0 0;"} {
			if !strings.Contains(css, want) {
				t.Errorf("changed %v: the style has no %q", changed, want)
			}
		}
		resp, res := aGet(t, nil, srv.URL+"/flights?from=LIS&to=BER&date=2026-12-14")
		if resp.StatusCode != 200 || !strings.Contains(res, "<title>Flights from Lisbon to Berlin on 14 December 2026</title>") {
			t.Errorf("changed %v: a search: %s\n%s", changed, resp.Status, res)
		}
		for _, q := range []string{"from=&to=BER&date=2026-12-14", "from=LIS&to=BER&date=", "from=LIS&to=LIS&date=2026-12-14", "from=LIS&to=BER&date=2026-12-40"} {
			if resp, res := aGet(t, nil, srv.URL+"/flights?"+q); resp.StatusCode != http.StatusBadRequest || !strings.Contains(res, "Choose both cities") {
				t.Errorf("changed %v: a search with %s: %s", changed, q, resp.Status)
			}
		}
	}
}
