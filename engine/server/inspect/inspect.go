// Package inspect is the web inspector of memory: server-rendered pages
// (html/template, embedded CSS, no JavaScript) over an *api.Client that
// show lessons, facts, selectors, trajectories, sessions and runs, a run's
// step timeline with the memory, model call and screenshot of each step,
// and a chart of errors and model calls across the runs of a goal. It
// opens no store: everything it shows comes through the memory API,
// except a run's artifact files, read from the data dir's runs folder
// (engine/memory/runfiles, found from the run id). Its one action, deleting a
// lesson, is a POST form guarded against cross-site requests.
package inspect

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/runfiles"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure the inspector.
type Options struct {
	// RunsDir is the data dir's runs folder, where run artifacts are read;
	// "" when memory is reached remotely (the run pages then say so).
	RunsDir string
	// RunsDirOf, when set, is the runs folder of one request's namespace
	// (a token of one namespace reads its own runs' files), in place of
	// RunsDir.
	RunsDirOf func(context.Context) string
	// Logger gets the errors a page could not show (nil: discarded).
	Logger *slog.Logger
}

// csrfField is the hidden form field that carries the CSRF token.
const csrfField = "csrf"

// Inspector serves the inspector's pages.
type Inspector struct {
	c     *api.Client
	opts  Options
	pages map[string]*template.Template
	csrf  string
	sums  *runfiles.Summaries
	mux   *http.ServeMux
}

// Handler returns the inspector over c, to be mounted at "/".
func Handler(c *api.Client, opts Options) *Inspector {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	var b [32]byte
	rand.Read(b[:])
	in := &Inspector{c: c, opts: opts, csrf: hex.EncodeToString(b[:]), sums: runfiles.NewSummaries(4096),
		pages: parseTemplates(), mux: http.NewServeMux()}
	static, _ := fs.Sub(staticFS, "static")
	in.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	in.mux.HandleFunc("GET /{$}", in.runsPage)
	in.mux.HandleFunc("GET /runs", in.runsPage)
	in.mux.HandleFunc("GET /runs/{id}", in.runPage)
	in.mux.HandleFunc("GET /runs/{id}/files/{name}", in.runFile)
	in.mux.HandleFunc("GET /lessons", in.lessonsPage)
	in.mux.HandleFunc("POST /lessons/{id}/delete", in.deleteLesson)
	in.mux.HandleFunc("POST /lessons/{id}/approve", in.approveLesson)
	in.mux.HandleFunc("POST /lessons/{id}/reject", in.rejectLesson)
	in.mux.HandleFunc("GET /facts", in.factsPage)
	in.mux.HandleFunc("GET /selectors", in.selectorsPage)
	in.mux.HandleFunc("GET /trajectories", in.trajectoriesPage)
	in.mux.HandleFunc("GET /sessions", in.sessionsPage)
	in.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		in.fail(w, r, engine.NotFound(fmt.Sprintf("no page %s %s", r.Method, r.URL.Path)))
	})
	return in
}

// csp keeps pages to their own CSS and images: no script runs, no form
// posts elsewhere, no other site frames them.
const csp = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP serves a page. State-changing requests must come from the
// inspector's own pages: net/http's cross-origin protection (Sec-Fetch-Site
// and Origin) and the form's CSRF token.
func (in *Inspector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if err := crossOrigin.Check(r); err != nil {
		in.fail(w, r, forbidden("cross-origin request refused"))
		return
	}
	in.mux.ServeHTTP(w, r)
}

var crossOrigin = http.NewCrossOriginProtection()

// checkCSRF reports whether a POST carries this inspector's form token.
func (in *Inspector) checkCSRF(r *http.Request) bool {
	got := r.PostFormValue(csrfField)
	return len(got) == len(in.csrf) && subtle.ConstantTimeCompare([]byte(got), []byte(in.csrf)) == 1
}

// forbiddenError is a request refused for where it came from.
type forbiddenError struct{ msg string }

func (e forbiddenError) Error() string { return e.msg }

func forbidden(msg string) error { return forbiddenError{msg} }

// statusOf classes an error as the API does.
func statusOf(err error) int {
	var fe forbiddenError
	switch {
	case errors.As(err, &fe):
		return http.StatusForbidden
	case errors.Is(err, api.ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, engine.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, engine.ErrInvalid):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// fail renders the error page.
func (in *Inspector) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if status == http.StatusInternalServerError {
		in.opts.Logger.Warn("inspector", "path", r.URL.Path, "err", err)
	}
	in.render(w, r, status, "error", view{Title: http.StatusText(status), Data: err.Error()})
}

// view is what every page template gets.
type view struct {
	Title  string
	Active string // the nav entry
	CSRF   string
	Data   any
}

// render executes page into a buffer first, so a template error is a 500
// and not half a page.
func (in *Inspector) render(w http.ResponseWriter, r *http.Request, status int, page string, v view) {
	v.CSRF = in.csrf
	var b bytes.Buffer
	if err := in.pages[page].ExecuteTemplate(&b, "layout", v); err != nil {
		in.opts.Logger.Error("inspector: template", "page", page, "err", err)
		http.Error(w, "the page could not be rendered: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(b.Bytes())
	}
}

// parseTemplates returns each page's template: the layout and the page.
func parseTemplates() map[string]*template.Template {
	base := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html"))
	names, _ := fs.Glob(templateFS, "templates/*.html")
	out := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		out[name] = template.Must(template.Must(base.Clone()).ParseFS(templateFS, n))
	}
	return out
}
