package gym

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
)

// The checkout site: an outdoor shop behind a consent wall that swallows
// every click until it is accepted, and a three-step checkout whose
// delivery step needs an option that stays hidden until "Choose delivery"
// is clicked (its continue button is disabled till then). Its tasks end at
// the order review, which orders nothing, so they finish under
// --approve never.

//go:embed sites/checkout
var checkoutFiles embed.FS

// checkoutNames are what the changed variant renames.
type checkoutNames struct {
	WallID, Accept, Proceed, Reveal, Continue string
}

var (
	checkoutOriginal = checkoutNames{WallID: "consent", Accept: "Accept all", Proceed: "Proceed to delivery",
		Reveal: "Choose delivery", Continue: "Continue to review"}
	checkoutChanged = checkoutNames{WallID: "privacy-wall", Accept: "Allow all", Proceed: "Next: delivery",
		Reveal: "Delivery options", Continue: "Review order"}
)

type checkoutProduct struct {
	ID                 int
	Name, About, Price string
}

var checkoutProducts = []checkoutProduct{
	{1, "Trail Backpack", "a 38 litre pack with a rain cover.", "€89"},
	{2, "Dome Tent 2P", "a two-person tent that pitches in five minutes.", "€149"},
	{3, "Camp Stove Mini", "a gas stove that folds to the size of a fist.", "€39"},
	{4, "Head Lamp 300", "300 lumens, three modes, a red light.", "€29"},
	{5, "Steel Bottle 1L", "keeps water cold for a day.", "€19"},
}

type checkoutShip struct{ ID, Name string }

var checkoutShips = []checkoutShip{
	{"standard", "Standard (3-5 days)"}, {"express", "Express (next day)"}, {"pickup", "Pickup in store"},
}

func init() {
	register(Site{
		Name:    "checkout",
		About:   "An outdoor shop behind a consent wall that intercepts clicks, with a three-step checkout whose delivery option is hidden until revealed (the next button is disabled till one is chosen).",
		Handler: checkoutHandler,
		Tasks: []Task{
			checkoutTask("backpack-express", 0, 1),
			checkoutTask("tent-standard", 1, 0),
			checkoutTask("stove-pickup", 2, 2),
			checkoutTask("lamp-express", 3, 1),
			checkoutTask("bottle-standard", 4, 0),
		},
	})
}

func checkoutTask(name string, product, ship int) Task {
	p, s := checkoutProducts[product], checkoutShips[ship]
	return Task{
		Name:     "checkout." + name,
		Goal:     fmt.Sprintf("Put the %s in the basket and go on to the order review with %s delivery (stop at the review; do not place the order)", p.Name, s.Name),
		Traps:    []string{TrapConsentWall, TrapHiddenRequired, TrapMultiStep},
		MaxSteps: 12,
		Rules:    checkoutRules(p.Name, s.Name),
	}
}

// checkoutRules: cold, the agent clicks the item under the consent wall
// (intercepted), accepts, goes through the basket, tries to continue from
// delivery with no option chosen (disabled), reveals the options, picks
// one and continues. Shown a reference trajectory, it accepts first and
// reveals the options before it continues. Both variants' names are here,
// each rule firing only when the page shows its name.
func checkoutRules(product, ship string) []byte {
	o, c := checkoutOriginal, checkoutChanged
	p := &playbook{}
	p.on("done", "Title: Order review", "", pbFinish(fmt.Sprintf("At the order review: %s with %s delivery", product, ship)))
	for _, n := range []checkoutNames{o, c} {
		p.on("wall-"+n.WallID, pbFailed("another element would receive the click"), pbEl("button", n.Accept), pbClick(n.Accept))
		p.on("reveal-"+n.Reveal, pbFailed("element is disabled"), pbEl("button", n.Reveal), pbClick(n.Reveal))
	}
	p.once("memory-accept", pbNone, pbStep("click", "button", o.Accept), pbClick(o.Accept))
	for _, n := range []checkoutNames{o, c} {
		p.on("continue-"+n.Continue, pbOK(fmt.Sprintf("click %q", ship)), pbEl("button", n.Continue), pbClick(n.Continue))
	}
	p.on("pick", pbEl("radio", ship), "", pbClick(ship))
	p.once("memory-reveal", pbEl("button", o.Reveal), pbStep("click", "button", o.Reveal), pbClick(o.Reveal))
	for _, n := range []checkoutNames{o, c} {
		p.on("try-"+n.Continue, pbEl("button", n.Continue), "", pbClick(n.Continue))
		p.on("proceed-"+n.Proceed, pbEl("button", n.Proceed), "", pbClick(n.Proceed))
	}
	p.on("add", "Title: "+product, "", pbClick("Add to basket"))
	p.on("open", "Title: Trailhead Outfitters", "", pbClick(product))
	return p.JSON()
}

func checkoutHandler(changed bool) http.Handler {
	n := checkoutOriginal
	if changed {
		n = checkoutChanged
	}
	tpl := template.Must(template.ParseFS(checkoutFiles, "sites/checkout/*.html"))
	product := func(r *http.Request) (checkoutProduct, bool) {
		id, err := strconv.Atoi(r.FormValue("item"))
		if v := r.PathValue("id"); v != "" {
			id, err = strconv.Atoi(v)
		}
		for _, p := range checkoutProducts {
			if err == nil && p.ID == id {
				return p, true
			}
		}
		return checkoutProduct{}, false
	}
	page := func(name, title string, extra func(r *http.Request, d map[string]any) bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			c, err := r.Cookie("consent")
			d := map[string]any{"N": n, "Title": title, "Wall": err != nil || c.Value != "yes", "Products": checkoutProducts, "Ships": checkoutShips}
			if extra != nil && !extra(r, d) {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_ = tpl.ExecuteTemplate(w, name, d)
		}
	}
	withProduct := func(title string) func(r *http.Request, d map[string]any) bool {
		return func(r *http.Request, d map[string]any) bool {
			p, ok := product(r)
			d["P"] = p
			if title == "" {
				d["Title"] = p.Name + " – Trailhead Outfitters"
			}
			return ok
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", page("home.html", "Trailhead Outfitters", nil))
	mux.HandleFunc("GET /item/{id}", page("item.html", "", withProduct("")))
	mux.HandleFunc("GET /basket", page("basket.html", "Basket", withProduct("Basket")))
	mux.HandleFunc("GET /delivery", page("delivery.html", "Delivery", withProduct("Delivery")))
	mux.HandleFunc("GET /review", page("review.html", "Order review", func(r *http.Request, d map[string]any) bool {
		p, ok := product(r)
		d["P"] = p
		for _, s := range checkoutShips {
			if s.ID == r.FormValue("ship") {
				d["Ship"] = s.Name
				return ok
			}
		}
		return false // no delivery chosen: the form cannot send that
	}))
	return mux
}
