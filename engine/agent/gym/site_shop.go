package gym

import (
	"net/http"

	"github.com/engine-dev/engine/engine/agent/demosite"
)

// The shop is the demo shop (engine/agent/demosite): a cookie wall, a
// search box that is a widget, an autocomplete list over the search button
// and a newsletter overlay on the results. Its changed variant is the
// demo's redesign: the button says "Find", the cookie wall moved to the
// results page and the first padel racket has another name.
func init() {
	register(Site{
		Name:  "shop",
		About: "the demo shop: a cookie wall, a search box that is a widget, an autocomplete list over the search button and a newsletter overlay",
		Handler: func(changed bool) http.Handler {
			return demosite.Handler(demosite.Options{Redesign: changed})
		},
		Tasks: []Task{
			shopTask("padel-racket", "padel rackets", "Padel Racket"),
			shopTask("tennis-balls", "tennis balls", "Tennis Balls"),
			shopTask("running-shoes", "running shoes", "Running Shoes"),
			shopTask("padel-balls", "padel balls", "Padel Balls"),
			shopTask("tennis-racket", "tennis rackets", "Tennis Racket"),
		},
	})
}

// shopTask is the demo's task for another query: search for query and open
// the first result, whose name starts with first on both variants.
func shopTask(name, query, first string) Task {
	return Task{
		Name:     "shop." + name,
		Goal:     "search for " + query + " and open the first result",
		Traps:    []string{TrapConsentWall, TrapNotAnInput, TrapAutocomplete, TrapOverlay},
		MaxSteps: 12,
		Rules:    shopRules(query, first),
	}
}

// shopRules act like a model on the shop. Cold, it clicks into the search
// box (the cookie wall takes the click), fills the widget (not an input),
// clicks the search button (the suggestions cover it) and the first result
// (the newsletter covers it), and recovers from each error as the error
// says. Shown a reference trajectory, it accepts the cookies first, clicks
// the widget before typing, submits with Enter and closes the newsletter
// with Escape. On the redesign the trajectory's first step is gone and the
// cookie wall waits on the results page; it recovers from both.
func shopRules(query, first string) []byte {
	results := "Title: Results for"
	b := &rulebook{}
	b.on("done", "Price: €", "", rbFinish("Opened the first result for "+query))
	b.on("escape", rbFailed("another element would receive the click: div#newsletter"), "", rbPress("Escape"))
	b.on("cookies", rbFailed("another element would receive the click: div#cookie-banner"), "", rbClick("Accept cookies"))
	b.on("enter", rbFailed("another element would receive the click: ul#suggestions"), "", rbPress("Enter"))
	b.on("no-search-button", rbFailed(`no element named "button Search"`), "", rbPress("Enter"))
	b.on("focus", rbFailed("element is not an input"), "", rbClick("Search products"))
	b.on("no-cookie-wall", rbFailed(`no element named "Accept cookies"`), "", rbClick("Search products"))
	b.on("open-after-cookies", rbOK(`click "Accept cookies"`), results, rbClick(first))
	b.on("open-after-escape", rbOK("press Escape"), "", rbClick(first))
	b.on("warm-escape", rbOK("press Enter"), rbReference, rbPress("Escape"))
	b.on("open", rbOK("press Enter"), "", rbClick(first))
	b.on("warm-enter", rbOK(`type "`+query+`" into "Search products"`), rbReference, rbPress("Enter"))
	b.on("submit", rbOK(`type "`+query+`" into "Search products"`), "", rbClick("button Search"))
	b.on("type", rbOK(`click "Search products"`), "", rbType("Search products", query))
	b.on("warm-focus", rbOK(`click "Accept cookies"`), rbReference, rbClick("Search products"))
	b.on("fill", rbOK(`click "Accept cookies"`), "", rbFill("Search products", query))
	b.on("warm-start", "Last action: (none)", rbReference, rbClick("Accept cookies"))
	b.on("start", "Last action: (none)", "", rbClick("Search products"))
	return b.JSON()
}
