package gym

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// get fetches path from h and returns the body; with a consent cookie
// when consent is set.
func get(t *testing.T, h http.Handler, path string, consent bool) (int, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequest("GET", srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if consent {
		req.AddCookie(&http.Cookie{Name: "consent", Value: "yes"})
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func wantIn(t *testing.T, what, body string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(body, s) {
			t.Errorf("%s: no %q in:\n%s", what, s, body)
		}
	}
}

func wantNotIn(t *testing.T, what, body string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(body, s) {
			t.Errorf("%s: %q should not be in it", what, s)
		}
	}
}

func taskOf(t *testing.T, name string) Task {
	t.Helper()
	for _, task := range Tasks() {
		if task.Name == name {
			return task
		}
	}
	t.Fatalf("no task %s", name)
	return Task{}
}

// TestCheckoutTraps: the consent wall is served until the cookie is set;
// the delivery step's options are hidden and its button disabled; the
// review needs a delivery; the changed variant renames what the rules
// name.
func TestCheckoutTraps(t *testing.T) {
	for _, changed := range []bool{false, true} {
		n := checkoutOriginal
		if changed {
			n = checkoutChanged
		}
		h := checkoutHandler(changed)
		_, home := get(t, h, "/", false)
		wantIn(t, "home without consent", home, `id="`+n.WallID+`"`, ">"+n.Accept+"<", "Trail Backpack")
		_, home = get(t, h, "/", true)
		wantNotIn(t, "home with consent", home, `id="`+n.WallID+`"`)
		_, basket := get(t, h, "/basket?item=1", true)
		wantIn(t, "basket", basket, ">"+n.Proceed+"<")
		_, delivery := get(t, h, "/delivery?item=1", true)
		wantIn(t, "delivery", delivery, `<fieldset id="ship-options" hidden>`, `id="next" disabled>`+n.Continue+"<", ">"+n.Reveal+"<")
		if code, _ := get(t, h, "/review?item=1", true); code != http.StatusNotFound {
			t.Errorf("review without delivery: %d, want 404", code)
		}
		_, review := get(t, h, "/review?item=1&ship=express", true)
		wantIn(t, "review", review, "<title>Order review</title>", "Trail Backpack", "Express (next day)")
	}
	for _, other := range []string{checkoutOriginal.Accept, checkoutOriginal.Reveal, checkoutOriginal.Continue, checkoutOriginal.Proceed} {
		_, b1 := get(t, checkoutHandler(true), "/", false)
		_, b2 := get(t, checkoutHandler(true), "/delivery?item=1", true)
		_, b3 := get(t, checkoutHandler(true), "/basket?item=1", true)
		wantNotIn(t, "changed variant", b1+b2+b3, ">"+other+"<")
	}
	rules := string(taskOf(t, "checkout.backpack-express").Rules)
	wantIn(t, "rules", rules, checkoutOriginal.Accept, checkoutChanged.Accept, "memory-accept", "Order review")
}

// TestCatalogTraps: the list holds only the first batch until scrolled,
// an overlay covers it after every batch, and the changed variant moves
// every batch one later and renames the overlay and its status.
func TestCatalogTraps(t *testing.T) {
	_, list := get(t, catalogHandler(false), "/", false)
	wantIn(t, "list", list, `id="refresh"`, "Refreshing prices…", "setTimeout", "addEventListener('scroll'")
	// The items are data for the script, not links in the page.
	wantNotIn(t, "list", list, `href="/item/`)
	if got := catalogBatchOf("Dry Bag 20L", false); got != 3 {
		t.Errorf("Dry Bag 20L in batch %d, want 3", got)
	}
	if got := catalogBatchOf("Dry Bag 20L", true); got != 0 {
		t.Errorf("changed: Dry Bag 20L in batch %d, want 0", got)
	}
	_, changed := get(t, catalogHandler(true), "/", false)
	wantIn(t, "changed list", changed, `id="stock-check"`, "Checking stock…")
	wantNotIn(t, "changed list", changed, `id="refresh"`, "Prices up to date")
	_, item := get(t, catalogHandler(false), "/item/20", false)
	wantIn(t, "item", item, "<title>Dry Bag 20L – Basecamp Catalog</title>")
	task := taskOf(t, "catalog.dry-bag")
	if len(task.Traps) != 2 {
		t.Errorf("catalog.dry-bag traps %v, want slow page and infinite scroll", task.Traps)
	}
}

// TestHelpTraps: the search box is a widget with a role, not an input;
// ids differ on every load; results open in a new tab; the changed
// variant renames the widget.
func TestHelpTraps(t *testing.T) {
	h := helpHandler(false)
	_, a := get(t, h, "/", false)
	_, b := get(t, h, "/", false)
	wantIn(t, "home", a, `role="searchbox"`, `aria-label="Search help articles"`)
	wantNotIn(t, "home", a, "<input")
	if a == b {
		t.Error("two loads of the home page are the same: the ids should change")
	}
	_, res := get(t, h, "/search?q=billing+plan", false)
	wantIn(t, "results", res, `target="_blank"`, "Change your billing plan")
	_, changed := get(t, helpHandler(true), "/", false)
	wantIn(t, "changed home", changed, `aria-label="Ask a question"`)
	wantNotIn(t, "changed home", changed, "Search help articles")
}

// TestFormsTraps: the contact form is in a shadow root with a combobox
// that is not a select; the survey frame comes from another host, with
// its own page linked; the changed variant renames the fields.
func TestFormsTraps(t *testing.T) {
	srv := httptest.NewServer(formsHandler(false))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/feedback")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	home := string(body)
	_, contact := get(t, formsHandler(false), "/", false)
	wantIn(t, "contact", contact, "attachShadow", `role="combobox"`, `role="option">Billing<`)
	wantNotIn(t, "contact", contact, "<select", "<iframe")
	wantIn(t, "feedback", home, "Open the survey on its own page",
		`src="http://`+strings.Replace(strings.TrimPrefix(srv.URL, "http://"), "127.0.0.1", "localhost", 1)+`/survey"`)
	_, survey := get(t, formsHandler(false), "/survey", false)
	wantIn(t, "survey", survey, `<select name="rating">`, "Comment", "Send feedback")
	_, thanks := get(t, formsHandler(false), "/survey/thanks?rating=Good&comment=ok", false)
	wantIn(t, "thanks", thanks, "Thanks for your feedback", "Good")
	_, changed := get(t, formsHandler(true), "/", false)
	_, changedFeedback := get(t, formsHandler(true), "/feedback", false)
	changed += changedFeedback
	_, changedSurvey := get(t, formsHandler(true), "/survey", false)
	wantIn(t, "changed", changed+changedSurvey, ">Subject<", "Take the survey in full", "Your remarks")
	wantNotIn(t, "changed", changed+changedSurvey, ">Topic<", "Open the survey on its own page", ">Comment<")
}
