package gym

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
)

//go:embed sites/travel
var travelFiles embed.FS

// travelCity is an airport the city fields suggest.
type travelCity struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

var travelCities = []travelCity{
	{"Barcelona", "BCN"}, {"Berlin", "BER"}, {"Lisbon", "LIS"}, {"London", "LHR"}, {"Madrid", "MAD"},
	{"Milan", "MXP"}, {"Paris", "CDG"}, {"Prague", "PRG"}, {"Rome", "FCO"}, {"Vienna", "VIE"},
}

// The month the date picker shows: every task's date is in it.
const (
	travelMonth = "December 2026"
	travelDays  = 31
)

// travelOption is how a city's suggestion reads: "Lisbon (LIS)", or
// "Lisbon · LIS" on the changed variant.
func travelOption(c travelCity, changed bool) string {
	if changed {
		return c.Name + " · " + c.Code
	}
	return c.Name + " (" + c.Code + ")"
}

// travelDay is how a day's button is named: "14 December 2026", or
// "December 14, 2026" on the changed variant.
func travelDay(day int, changed bool) string {
	if changed {
		return fmt.Sprintf("December %d, 2026", day)
	}
	return fmt.Sprintf("%d December 2026", day)
}

func travelCityNamed(name string) travelCity {
	for _, c := range travelCities {
		if c.Name == name {
			return c
		}
	}
	panic("gym: travel: no city " + name)
}

// The travel site: city fields whose suggestion lists stay open over what
// is below them (the date field, the search button) until an airport is
// chosen, and a read-only date field set through its picker. Its changed
// variant writes the suggestions and the picker's days another way and
// calls the button "Find flights".
func init() {
	register(Site{
		Name:    "travel",
		About:   "a flight search: city fields whose suggestion lists cover the date field and the search button until an airport is chosen, and a read-only date field set through a picker",
		Handler: travelHandler,
		Tasks: []Task{
			travelTask("lisbon-berlin", "Lisbon", "Berlin", 14),
			travelTask("paris-rome", "Paris", "Rome", 3),
			travelTask("madrid-vienna", "Madrid", "Vienna", 21),
			travelTask("london-prague", "London", "Prague", 9),
			travelTask("milan-barcelona", "Milan", "Barcelona", 28),
		},
	})
}

func travelTask(name, from, to string, day int) Task {
	return Task{
		Name:  "travel." + name,
		Goal:  fmt.Sprintf("find flights from %s to %s on %s", from, to, travelDay(day, false)),
		Traps: []string{TrapAutocomplete, TrapDatePicker},
		// Cold takes 11 steps; a replay on the changed variant that hands
		// over late takes 12: two more leave room.
		MaxSteps: 14,
		Rules:    travelRules(travelCityNamed(from), travelCityNamed(to), day),
	}
}

// travelRules act like a model on the travel site. Cold, it fills both
// cities and then the date, which is read-only: it clicks it, but the
// first city's suggestions cover it, so it chooses the airport, opens the
// picker and picks the day; the search button is under the second city's
// suggestions, so it chooses that airport too and searches. Shown a
// reference trajectory, it chooses each airport as it types the city and
// opens the picker at once. On the changed variant the suggestion and the
// day it was shown are named another way: it picks the ones the page has.
func travelRules(from, to travelCity, day int) []byte {
	fromOpt, toOpt := travelOption(from, false), travelOption(to, false)
	dayName, dayChanged := travelDay(day, false), travelDay(day, true)
	search := func(b *rulebook, name, last string) {
		b.on(name+"-find", last, "button - Find flights", rbClick("Find flights"))
		b.on(name, last, "", rbClick("Search flights"))
	}
	b := &rulebook{}
	b.on("done", "Title: Flights from", "", rbFinish(fmt.Sprintf("Found flights from %s to %s on %s", from.Name, to.Name, dayName)))
	b.on("pick-from", rbFailed("another element would receive the click: ul#from-list"), "", rbClick(fromOpt))
	b.on("pick-to", rbFailed("another element would receive the click: ul#to-list"), "", rbClick(toOpt))
	b.on("open-picker", rbFailed("element is read-only"), "", rbClick("Date"))
	b.on("from-renamed", rbFailed(`no element named "`+fromOpt+`"`), "", rbClick(from.Name))
	b.on("to-renamed", rbFailed(`no element named "`+toOpt+`"`), "", rbClick(to.Name))
	b.on("search-renamed", rbFailed(`no element named "Search flights"`), "button - Find flights", rbClick("Find flights"))
	b.on("day-renamed", rbFailed(`no element named "`+dayName+`"`), "button - "+dayChanged, rbClick(dayChanged))
	search(b, "search-after-day", rbOK(`click "`+dayName+`"`))
	search(b, "search-after-day-changed", rbOK(`click "`+dayChanged+`"`))
	b.on("day", rbOK(`click "Date"`), "", rbClick(dayName))
	b.on("search-after-to", `Last action: click "`+to.Name, `Date (value "`, rbClick("Search flights"))
	b.on("to-then-date", `Last action: click "`+from.Name, `To (value "`, rbClick("Date"))
	b.on("to-after-from", `Last action: click "`+from.Name, "", rbFill("To", to.Name))
	b.on("warm-date", `Last action: click "`+to.Name, "", rbClick("Date"))
	b.on("warm-to", rbOK(`fill "`+to.Name+`" into "To"`), rbReference, rbClick(toOpt))
	b.on("date", rbOK(`fill "`+to.Name+`" into "To"`), "", rbFill("Date", dayName))
	b.on("warm-from", rbOK(`fill "`+from.Name+`" into "From"`), rbReference, rbClick(fromOpt))
	b.on("to", rbOK(`fill "`+from.Name+`" into "From"`), "", rbFill("To", to.Name))
	b.on("start", "Last action: (none)", "", rbFill("From", from.Name))
	return b.JSON()
}

// travelHandler serves the travel site, or its changed variant.
func travelHandler(changed bool) http.Handler {
	tpl := template.Must(template.ParseFS(travelFiles, "sites/travel/*.html"))
	type day struct {
		Day        int
		ISO, Label string
	}
	var days []day
	for d := 1; d <= travelDays; d++ {
		days = append(days, day{d, fmt.Sprintf("2026-12-%02d", d), travelDay(d, changed)})
	}
	type city struct {
		Name  string `json:"name"`
		Code  string `json:"code"`
		Label string `json:"label"`
	}
	var cities []city
	byCode := map[string]travelCity{}
	for _, c := range travelCities {
		cities = append(cities, city{c.Name, c.Code, travelOption(c, changed)})
		byCode[c.Code] = c
	}
	search := "Search flights"
	if changed {
		search = "Find flights"
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		_ = tpl.ExecuteTemplate(w, "index.html", map[string]any{"Month": travelMonth, "Days": days, "Cities": cities, "Search": search})
	})
	mux.HandleFunc("GET /flights", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		from, okFrom := byCode[q.Get("from")]
		to, okTo := byCode[q.Get("to")]
		var d int
		if n, err := fmt.Sscanf(q.Get("date"), "2026-12-%d", &d); n != 1 || err != nil || d < 1 || d > travelDays {
			d = 0
		}
		data := map[string]any{"OK": okFrom && okTo && d > 0 && from != to}
		if data["OK"] == true {
			data["From"], data["To"], data["Date"] = from.Name, to.Name, travelDay(d, false)
			var flights []string
			for i, dep := range []string{"07:10", "12:45", "19:30"} {
				flights = append(flights, fmt.Sprintf("SW%s%d %s → %s, departs %s, €%d", from.Code[:1], 100+d*3+i, from.Code, to.Code, dep, 89+i*40))
			}
			data["Flights"] = flights
		} else {
			w.WriteHeader(http.StatusBadRequest)
		}
		_ = tpl.ExecuteTemplate(w, "flights.html", data)
	})
	mux.HandleFunc("GET /style.css", func(w http.ResponseWriter, r *http.Request) {
		b, _ := travelFiles.ReadFile("sites/travel/style.css")
		w.Header().Set("Content-Type", "text/css")
		_, _ = w.Write(b)
	})
	return mux
}
