package gym

import (
	"crypto/rand"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
)

// The help site: a help center whose search box is a widget, not an
// input (fill fails until it is clicked), whose element ids change on
// every load, and whose results open in a new tab (target=_blank).

//go:embed sites/help
var helpFiles embed.FS

// helpNames are what the changed variant renames.
type helpNames struct{ Widget, Hint string }

var (
	helpOriginal = helpNames{Widget: "Search help articles", Hint: "Articles open in a new tab."}
	helpChanged  = helpNames{Widget: "Ask a question", Hint: "Each answer opens in a new tab."}
)

type helpArticle struct {
	ID          int
	Title, Body string
}

var helpArticles = []helpArticle{
	{1, "Unlock a locked account", "After five failed sign-ins an account locks for an hour; support can unlock it sooner."},
	{2, "Change your billing plan", "Plans change from Billing; the new price starts with the next invoice."},
	{3, "Export your data to CSV", "Data, then Export, writes every table to a CSV file you can download."},
	{4, "Invite a team member", "Team, then Invite: a member joins once they accept the invitation."},
	{5, "Turn on two-step sign-in", "Security, then Two-step sign-in: scan the code with an authenticator app."},
	{6, "Close your account", "Accounts close from Settings; data is kept for 30 days."},
	{7, "Billing receipts and invoices", "Every invoice is under Billing, then Invoices."},
}

func init() {
	register(Site{
		Name:    "help",
		About:   "A help center whose search box is a widget that is not an input until clicked, whose element ids change on every load, and whose results open in a new tab.",
		Handler: helpHandler,
		Tasks: []Task{
			helpTask("locked-account", "locked account", 0),
			helpTask("billing-plan", "billing plan", 1),
			helpTask("export-csv", "export csv", 2),
			helpTask("invite-member", "invite team", 3),
			helpTask("two-step", "two-step sign-in", 4),
		},
	})
}

func helpTask(name, query string, article int) Task {
	a := helpArticles[article]
	return Task{
		Name:     "help." + name,
		Goal:     fmt.Sprintf("Find the help article %q in the Lumen help center (search for %q) and open it", a.Title, query),
		Traps:    []string{TrapNotAnInput, TrapDynamicIDs, TrapNewTab},
		MaxSteps: 10,
		Rules:    helpRules(query, a.Title),
	}
}

// helpRules: cold, the agent fills the search box (not an input), clicks
// it, types, presses Enter and opens the article from the results. Shown
// a reference trajectory, it clicks the box first.
func helpRules(query, title string) []byte {
	o, c := helpOriginal, helpChanged
	p := &playbook{}
	p.on("done", "Title: "+title+" –", "", pbFinish("Opened the article "+title))
	p.on("open", pbEl("link", title), "", pbClick(title))
	p.on("enter", "Last action: type ", "", pbPress("Enter"))
	for _, n := range []helpNames{o, c} {
		p.on("focus-"+n.Widget, pbFailed("element is not an input"), pbEl("searchbox", n.Widget), pbClick(n.Widget))
		p.on("type-"+n.Widget, pbOK(fmt.Sprintf("click %q", n.Widget)), "", pbType(n.Widget, query))
	}
	p.once("memory-focus", pbNone, pbStep("click", "searchbox", o.Widget), pbClick(o.Widget))
	for _, n := range []helpNames{o, c} {
		p.on("fill-"+n.Widget, pbEl("searchbox", n.Widget), "", pbFill(n.Widget, query))
	}
	return p.JSON()
}

// helpPage is a page's data; ID gives an element an id that changes on
// every load.
type helpPage struct {
	N       helpNames
	Q       string
	Results []helpArticle
	A       helpArticle
	salt    string
}

// ID is prefix with this load's random suffix.
func (d *helpPage) ID(prefix string) string { return prefix + "-" + d.salt }

func helpSalt() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// helpSearch returns the articles whose title holds every word of q.
func helpSearch(q string) []helpArticle {
	words := strings.Fields(strings.ToLower(q))
	var out []helpArticle
	for _, a := range helpArticles {
		t := strings.ToLower(a.Title)
		all := len(words) > 0
		for _, w := range words {
			if !strings.Contains(t, w) {
				all = false
			}
		}
		if all {
			out = append(out, a)
		}
	}
	return out
}

func helpHandler(changed bool) http.Handler {
	n := helpOriginal
	if changed {
		n = helpChanged
	}
	tpl := template.Must(template.ParseFS(helpFiles, "sites/help/*.html"))
	render := func(w http.ResponseWriter, name string, d *helpPage) {
		d.N, d.salt = n, helpSalt()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = tpl.ExecuteTemplate(w, name, d)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { render(w, "home.html", &helpPage{}) })
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		q := strings.TrimSpace(r.FormValue("q"))
		res := helpSearch(q)
		if changed {
			// The changed variant lists the best match last.
			for i, j := 0, len(res)-1; i < j; i, j = i+1, j-1 {
				res[i], res[j] = res[j], res[i]
			}
		}
		render(w, "results.html", &helpPage{Q: q, Results: res})
	})
	mux.HandleFunc("GET /article/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil || id < 1 || id > len(helpArticles) {
			http.NotFound(w, r)
			return
		}
		render(w, "article.html", &helpPage{A: helpArticles[id-1]})
	})
	return mux
}
