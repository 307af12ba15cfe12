package api_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/api"
)

// TestUnknownRunIs404 sends every route under /v1/runs/{id} a request for
// a run the registry does not hold, over a real HTTP server: each answers
// 404 problem+json naming the run, and writes nothing (a plan history
// added anyway would show up as the run's).
func TestUnknownRunIs404(t *testing.T) {
	m := open(t)
	srv := httptest.NewServer(api.Handler(m, api.Options{}))
	t.Cleanup(srv.Close)
	for _, rt := range []struct{ method, path, body string }{
		{"GET", "/v1/runs/run_nope", ""},
		{"POST", "/v1/runs/run_nope/progress", `{"turn_count": 1}`},
		{"POST", "/v1/runs/run_nope/complete", `{"success": true}`},
		{"POST", "/v1/runs/run_nope/resume", `{}`},
		{"POST", "/v1/runs/run_nope/fork", `{}`},
		{"GET", "/v1/runs/run_nope/plan", ""},
		{"POST", "/v1/runs/run_nope/plan/iterations", `{}`},
		{"POST", "/v1/runs/run_nope/plan/iterations", `{"planner": {"user_task": "x"}}`},
	} {
		t.Run(rt.method+" "+rt.path+" "+rt.body, func(t *testing.T) {
			req := httptest.NewRequest(rt.method, srv.URL+rt.path, strings.NewReader(rt.body))
			req.RequestURI = ""
			if rt.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			wantProblem(t, resp, 404, "run_nope")
		})
	}
	resp, err := srv.Client().Get(srv.URL + "/v1/runs/run_nope/plan")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	wantProblem(t, resp, 404, "run_nope")
}
