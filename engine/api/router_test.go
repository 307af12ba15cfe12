package api

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// Every route registers on one mux: ServeMux panics on two patterns that
// conflict, which registering one group at a time would not see.
func TestRoutesRegisterInOneMux(t *testing.T) {
	rt := newRouter(func(Route) http.Handler { return http.NotFoundHandler() })
	rt.mux(allGroups)
	if n := len(routes()); n < 50 {
		t.Fatalf("%d routes", n)
	}
}

// A request is routed by its group's mux exactly as by a mux of every
// route: the same route, the same 404 (with its text), 405 and its Allow
// header, and the same redirect of a path that is not clean.
func TestGroupRoutingMatchesOneMux(t *testing.T) {
	serve := func(r Route) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte(r.Method + " " + r.Path))
		})
	}
	grouped, one := newRouter(serve), newRouter(serve)
	all := one.mux(allGroups)
	var paths []string
	for _, r := range routes() {
		p := strings.ReplaceAll(strings.ReplaceAll(r.Path, "{id}", "x1"), "{sha256}", "ab")
		paths = append(paths, p, p+"/", p+"/more", strings.Replace(p, "/v1/", "/v1//", 1), p+"/.", p+"/../health")
	}
	paths = append(paths, "/", "/v1", "/v1/", "/v2/lessons", "/v1/nope", "/v1/nope/x", "/v1/lessons%2Fx1",
		"/v1/%6Cessons", "/v1/recall%2Ferror", "/v1/./health", "//v1/health", "/v1/lessons/x%2F1")
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodDelete, http.MethodPut, http.MethodOptions}
	n := 0
	for _, p := range paths {
		for _, m := range methods {
			req := httptest.NewRequest(m, "http://engine"+p, nil)
			a, b := httptest.NewRecorder(), httptest.NewRecorder()
			grouped.ServeHTTP(a, req)
			all.ServeHTTP(b, req)
			if a.Code != b.Code || a.Body.String() != b.Body.String() ||
				a.Header().Get("Allow") != b.Header().Get("Allow") || a.Header().Get("Location") != b.Header().Get("Location") {
				t.Errorf("%s %s: grouped %d %q (Allow %q, Location %q), one mux %d %q (Allow %q, Location %q)", m, p,
					a.Code, a.Body, a.Header().Get("Allow"), a.Header().Get("Location"),
					b.Code, b.Body, b.Header().Get("Allow"), b.Header().Get("Location"))
			}
			n++
		}
	}
	grouped.mu.Lock()
	defer grouped.mu.Unlock()
	if _, ok := grouped.muxes[allGroups]; !ok {
		t.Error("no request went to the mux of every route")
	}
	if len(grouped.muxes) < 10 {
		t.Errorf("%d muxes built for %d requests", len(grouped.muxes), n)
	}
	for g := range grouped.muxes {
		if g != allGroups && g != "" && !grouped.groups[g] {
			t.Errorf("a mux for group %q, which no route has", g)
		}
	}
}

// Paths of groups no route has share one mux: a client making up paths
// adds none.
func TestMadeUpGroupsShareAMux(t *testing.T) {
	rt := newRouter(func(Route) http.Handler { return http.NotFoundHandler() })
	for _, p := range []string{"/v1/recall/error", "/v1/nope", "/v1/nope2/x", "/v1/zzz", "/v2/x"} {
		rec := httptest.NewRecorder()
		rt.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://engine"+p, nil))
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.muxes) != 2 {
		t.Errorf("muxes for groups %v, want recall and \"\"", slices.Collect(maps.Keys(rt.muxes)))
	}
}
