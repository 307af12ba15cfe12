package gym

import (
	"embed"
	"html/template"
	"net/http"
	"strconv"
)

//go:embed sites/news
var newsFiles embed.FS

// newsStory is one article of the news site.
type newsStory struct {
	Slug, Title, Teaser, Body string
}

// newsStories are the site's articles, newest first.
var newsStories = []newsStory{
	{"harbour-bridge", "Harbour bridge reopens after two years of repairs", "Commuters return to the old crossing.", "The bridge carries twenty thousand cars a day again."},
	{"city-budget", "City council agrees on next year's budget", "Parks and libraries get more; roads get less.", "The vote was eleven to four."},
	{"night-trains", "The quiet return of the night train", "Sleeper services come back across the continent.", "Three new routes start in spring."},
	{"bakery-prize", "Corner bakery wins the national bread prize", "A sourdough from Dock Street beat two hundred entries.", "The baker has run the shop for thirty years."},
	{"museum-roof", "Museum roof garden opens to the public", "Four hundred plants on the old gallery roof.", "Entry is free on Sundays."},
	{"river-cleanup", "Volunteers pull a tonne of rubbish from the river", "The yearly clean-up had its biggest turnout.", "Two shopping trolleys and a piano were found."},
	{"chess-champion", "Twelve-year-old wins the city chess championship", "She beat the defending champion in forty moves.", "Her next tournament is the national final."},
	{"tram-line", "New tram line to the airport approved", "Construction starts next year.", "The trip will take twenty-two minutes."},
	{"jazz-festival", "Jazz festival moves to the old docks", "Bigger stages and a later curfew.", "Tickets go on sale on Friday."},
	{"heat-record", "Hottest October day on record", "Thermometers reached twenty-nine degrees.", "Forecasters expect a cold November."},
	{"library-robot", "Library tests a robot that shelves books", "It shelves three hundred books an hour.", "Staff say it still mixes up volumes."},
	{"marathon-route", "Marathon route changes for the first time in decades", "Runners will cross the harbour bridge.", "Registration closes at the end of the month."},
}

// newsBreaking are the stories the changed variant puts on top, pushing
// every other story down (onto another page, for some).
var newsBreaking = []newsStory{
	{"storm-warning", "Storm warning for the weekend", "Gales expected along the coast.", "Ferries may be cancelled."},
	{"election-date", "Election date announced", "Voters go to the polls in March.", "Campaigning starts next month."},
}

// newsPerPage is how many stories a page of the front page lists.
const newsPerPage = 4

// The news site: a support chat that covers the page until it is closed
// (Escape does not close it) and a front page paginated so that most
// articles are on a later page. Its changed variant has two new stories on
// top (articles move to other pages), the pager says "Older stories" and
// the chat's close button "End chat".
func init() {
	register(Site{
		Name:    "news",
		About:   "a news front page: a support chat widget that intercepts every click until closed (Escape does not close it), and pagination (the article is on a later page)",
		Handler: newsHandler,
		Tasks: []Task{
			newsTask("bakery-prize", newsStories[3]),
			newsTask("museum-roof", newsStories[4]),
			newsTask("tram-line", newsStories[7]),
			newsTask("library-robot", newsStories[10]),
			newsTask("city-budget", newsStories[1]),
		},
	})
}

func newsTask(name string, s newsStory) Task {
	return Task{
		Name:     "news." + name,
		Goal:     "open the article titled \"" + s.Title + "\"",
		Traps:    []string{TrapOverlay, TrapPagination},
		MaxSteps: 12,
		Rules:    newsRules(s.Title),
	}
}

// newsRules act like a model on the news site. Cold, it pages through the
// front page for the title; the chat widget takes its first click, so it
// presses Escape (as a general lesson in its prompt says), finds the chat
// still there, and closes it with its button. Shown a reference
// trajectory, it closes the chat first. On the changed variant the close
// button it was shown is gone: it uses the one the page has, and the pager
// the page has.
func newsRules(title string) []byte {
	chat := rbFailed("another element would receive the click: div#chat-widget")
	b := &rulebook{}
	b.on("done", "Title: "+title+"\n", "", rbFinish("Opened \""+title+"\""))
	b.on("close-chat", chat, "press Escape → ok", rbClick("Close chat"))
	b.on("escape", chat, "", rbPress("Escape"))
	b.on("end-chat", rbFailed(`no element named "Close chat"`), "button - End chat", rbClick("End chat"))
	b.on("warm-start", "Last action: (none)", rbReference, rbClick("Close chat"))
	b.on("open", "link - "+title+"\n", "", rbClick(title))
	b.on("next", "link - Next page\n", "", rbClick("Next page"))
	b.on("older", "link - Older stories\n", "", rbClick("Older stories"))
	return b.JSON()
}

// newsHandler serves the news site, or its changed variant.
func newsHandler(changed bool) http.Handler {
	tpl := template.Must(template.ParseFS(newsFiles, "sites/news/*.html"))
	stories := newsStories
	closeName, nextName := "Close chat", "Next page"
	if changed {
		stories = append(append([]newsStory(nil), newsBreaking...), newsStories...)
		closeName, nextName = "End chat", "Older stories"
	}
	pages := (len(stories) + newsPerPage - 1) / newsPerPage
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		page := 1
		if p := r.URL.Query().Get("page"); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > pages {
				http.NotFound(w, r)
				return
			}
			page = n
		}
		data := map[string]any{"Page": page, "Pages": pages, "CloseName": closeName, "NextName": nextName,
			"Stories": stories[(page-1)*newsPerPage : min(page*newsPerPage, len(stories))]}
		if page > 1 {
			data["Prev"] = page - 1
		}
		if page < pages {
			data["Next"] = page + 1
		}
		_ = tpl.ExecuteTemplate(w, "list.html", data)
	})
	mux.HandleFunc("GET /article/{slug}", func(w http.ResponseWriter, r *http.Request) {
		for _, s := range stories {
			if s.Slug == r.PathValue("slug") {
				_ = tpl.ExecuteTemplate(w, "article.html", map[string]any{"Story": s, "CloseName": closeName})
				return
			}
		}
		http.NotFound(w, r)
	})
	mux.HandleFunc("GET /style.css", func(w http.ResponseWriter, r *http.Request) {
		b, _ := newsFiles.ReadFile("sites/news/style.css")
		w.Header().Set("Content-Type", "text/css")
		_, _ = w.Write(b)
	})
	return mux
}
