// Package demosite is the bundled demo shop the engine serves on 127.0.0.1
// for `engine demo` and for tests: a small site embedded in the binary with
// the traps real sites have — a cookie banner that blocks clicks, a search
// box that is a custom widget where fill fails ("element is not an input")
// until it is clicked, an autocomplete dropdown that covers the submit
// button, and a newsletter overlay dismissed with Escape.
package demosite

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

//go:embed site
var files embed.FS

// Rules are the scripted LLM provider's rules for the demo task: they act
// like a model that walks into every trap on a cold run, and follows the
// reference trajectory when memory shows one (plugins/scripted's format).
//
//go:embed rules.json
var Rules []byte

// Goal is the demo task.
const Goal = "search for padel rackets and open the first result"

// Product is one item of the catalogue.
type Product struct {
	ID    int
	Name  string
	Price string
}

// Catalogue is the shop's products, in result order.
var Catalogue = []Product{
	{1, "Padel Racket Pro 3000", "€129"},
	{2, "Padel Racket Lite", "€59"},
	{3, "Padel Balls (3 pack)", "€9"},
	{4, "Tennis Racket Classic", "€89"},
	{5, "Tennis Balls (4 pack)", "€7"},
	{6, "Running Shoes Swift", "€99"},
}

// Options configure the site.
type Options struct {
	// Changed serves the site after a change: the first padel racket has
	// another name, so a recorded trajectory no longer holds there.
	Changed bool
	// Redesign is Changed and more: the search button says "Find" (not
	// "Search") and the cookie banner moved from the home page to the
	// results page, so a recorded trajectory fails at its first step.
	Redesign bool
}

// RedesignButton is the search button's name on the redesigned site.
const RedesignButton = "Find"

// ChangedName is the first product's name on the changed site.
const ChangedName = "Padel Racket Ultra 4000"

// Handler serves the site.
func Handler(opts Options) http.Handler {
	tpl := template.Must(template.ParseFS(files, "site/*.html"))
	cat := append([]Product(nil), Catalogue...)
	if opts.Changed || opts.Redesign {
		cat[0].Name = ChangedName
	}
	find := func(id string) (Product, bool) {
		n, err := strconv.Atoi(id)
		for _, p := range cat {
			if err == nil && p.ID == n {
				return p, true
			}
		}
		return Product{}, false
	}
	mux := http.NewServeMux()
	static := func(name, ctype string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, err := files.ReadFile("site/" + name)
			if err != nil {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", ctype)
			_, _ = w.Write(b)
		}
	}
	home := "index.html"
	if opts.Redesign {
		home = "redesign/index.html"
	}
	mux.HandleFunc("GET /{$}", static(home, "text/html; charset=utf-8"))
	mux.HandleFunc("GET /style.css", static("style.css", "text/css"))
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		q := strings.TrimSpace(r.URL.Query().Get("q"))
		_ = tpl.ExecuteTemplate(w, "search.html", map[string]any{"Query": q, "Results": Search(cat, q), "Cookies": opts.Redesign})
	})
	mux.HandleFunc("GET /item/{id}", func(w http.ResponseWriter, r *http.Request) {
		p, ok := find(r.PathValue("id"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		_ = tpl.ExecuteTemplate(w, "item.html", p)
	})
	mux.HandleFunc("POST /checkout", func(w http.ResponseWriter, r *http.Request) {
		p, ok := find(r.FormValue("id"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		_ = tpl.ExecuteTemplate(w, "checkout.html", p)
	})
	return mux
}

// Search returns the products matching every word of q (a trailing plural
// "s" is ignored), in catalogue order.
func Search(cat []Product, q string) []Product {
	words := strings.Fields(strings.ToLower(q))
	var out []Product
	for _, p := range cat {
		name := strings.ToLower(p.Name)
		all := len(words) > 0
		for _, w := range words {
			if !strings.Contains(name, w) && !strings.Contains(name, strings.TrimSuffix(w, "s")) {
				all = false
			}
		}
		if all {
			out = append(out, p)
		}
	}
	return out
}

// Server is the site served on 127.0.0.1.
type Server struct {
	URL string // http://127.0.0.1:PORT/
	srv *http.Server
	ln  net.Listener
}

// Start serves the site on a random port of 127.0.0.1.
func Start(opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo site: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/", ln: ln,
		srv: &http.Server{Handler: Handler(opts), ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(ln) }() // ends with ErrServerClosed at Close
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}
