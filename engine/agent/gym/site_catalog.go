package gym

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
)

// The catalog site: a product list with infinite scroll (each scroll down
// brings the next batch of six, so an item further down is not on the page
// until the agent scrolls to it) that is slow (after every batch an
// overlay covers the list while prices refresh: a click at once is
// intercepted, a wait lets it through).

//go:embed sites/catalog
var catalogFiles embed.FS

// catalogDelay is how long the overlay covers the list after a batch.
const catalogDelay = 2000

type catalogItem struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

var catalogItems = func() []catalogItem {
	names := []string{
		"Trail Runner Shoes", "Rain Shell Jacket", "Merino Beanie", "Fleece Gloves", "Hiking Poles", "Map Case",
		"Storm Lantern", "Canvas Tarp", "Folding Saw", "Camp Chair", "Water Filter", "Solar Charger",
		"Bivy Sack", "Ice Axe", "Crampons", "Glacier Glasses", "Avalanche Probe", "Snow Shovel",
		"Paddle Board", "Dry Bag 20L", "Life Vest", "Kayak Paddle", "Waterproof Case", "Canoe Seat",
	}
	out := make([]catalogItem, len(names))
	for i, n := range names {
		out[i] = catalogItem{ID: i + 1, Name: n}
	}
	return out
}()

// catalogTexts are what the changed variant renames: the overlay's id and
// the status line while loading and when done.
type catalogTexts struct{ OverlayID, Loading, Ready string }

var (
	catalogOriginal = catalogTexts{"refresh", "Refreshing prices…", "Prices up to date"}
	catalogChanged  = catalogTexts{"stock-check", "Checking stock…", "Stock checked"}
)

// catalogBatches are the list's batches of six; the changed variant moves
// every batch one later (the last comes first).
func catalogBatches(changed bool) [][]catalogItem {
	var out [][]catalogItem
	for i := 0; i < len(catalogItems); i += 6 {
		out = append(out, catalogItems[i:i+6])
	}
	if changed {
		out = append(out[len(out)-1:], out[:len(out)-1]...)
	}
	return out
}

func init() {
	register(Site{
		Name:    "catalog",
		About:   "A gear catalog with infinite scroll (items further down load only as the page scrolls) and a slow refresh overlay after every batch that intercepts clicks until it is done.",
		Handler: catalogHandler,
		Tasks: []Task{
			catalogTask("merino-beanie", "Merino Beanie"),
			catalogTask("storm-lantern", "Storm Lantern"),
			catalogTask("folding-saw", "Folding Saw"),
			catalogTask("ice-axe", "Ice Axe"),
			catalogTask("dry-bag", "Dry Bag 20L"),
		},
	})
}

func catalogTask(name, item string) Task {
	traps := []string{TrapSlowPage}
	if b := catalogBatchOf(item, false); b > 0 {
		traps = append(traps, TrapInfiniteScroll)
	}
	return Task{
		Name:     "catalog." + name,
		Goal:     fmt.Sprintf("Find the %s in the Basecamp catalog and open its page", item),
		Traps:    traps,
		MaxSteps: 12,
		Rules:    catalogRules(item),
	}
}

// catalogBatchOf is the batch (from 0) that holds item.
func catalogBatchOf(item string, changed bool) int {
	for i, b := range catalogBatches(changed) {
		for _, it := range b {
			if it.Name == item {
				return i
			}
		}
	}
	panic("catalog: no item " + item)
}

// catalogRules: cold, the agent clicks the item by name at once (not on
// the page yet when it is further down: it scrolls; on the page but under
// the refresh overlay: intercepted, so it waits for the status line) and
// opens it. Shown a reference trajectory, it scrolls as it shows and waits
// before it clicks.
func catalogRules(item string) []byte {
	o, c := catalogOriginal, catalogChanged
	p := &playbook{}
	p.on("done", "Title: "+item+" –", "", pbFinish("Opened the "+item+" page"))
	for _, t := range []catalogTexts{o, c} {
		p.on("wait-"+t.OverlayID, pbFailed("another element would receive the click: div#"+t.OverlayID), "", pbWaitText(t.Ready))
	}
	p.once("memory-scroll", pbNone, `scroll "down"`, pbScroll())
	p.once("memory-wait", pbEl("link", item), pbWaitStep(o.Ready), pbWaitText(o.Ready))
	p.on("open", pbEl("link", item), "", pbClick(item))
	p.on("guess", pbNone, "", pbClick(item))
	p.on("scroll", "Title: Basecamp Catalog", "", pbScroll())
	return p.JSON()
}

// pbWaitText waits until text shows on the page.
func pbWaitText(text string) pbCall { return pbCall{"wait", map[string]any{"text": text}} }

// pbWaitStep is how a reference trajectory shows a wait for text.
func pbWaitStep(text string) string { return fmt.Sprintf("wait %q", text) }

func catalogHandler(changed bool) http.Handler {
	t := catalogOriginal
	if changed {
		t = catalogChanged
	}
	tpl := template.Must(template.ParseFS(catalogFiles, "sites/catalog/*.html"))
	batches := catalogBatches(changed)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = tpl.ExecuteTemplate(w, "list.html", map[string]any{"OverlayID": t.OverlayID, "Loading": t.Loading,
			"Ready": t.Ready, "Batches": batches, "DelayMS": catalogDelay})
	})
	mux.HandleFunc("GET /item/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil || id < 1 || id > len(catalogItems) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = tpl.ExecuteTemplate(w, "item.html", catalogItems[id-1])
	})
	return mux
}
