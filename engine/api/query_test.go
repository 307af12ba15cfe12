package api_test

import (
	"net/http"
	"testing"

	"github.com/engine-dev/engine/engine/api"
)

// A query parameter a route does not take is refused, naming it and the
// ones the route takes, before anything runs: a misspelt filter would
// otherwise be ignored and the answer hold everything. A malformed query
// is refused too; a route's own parameters are served.
func TestUnknownQueryParameters(t *testing.T) {
	h := api.Handler(open(t), api.Options{})
	wantProblem(t, do(t, h, "GET", "/v1/lessons?domian=example.com", "", ""), http.StatusBadRequest,
		`unknown query parameter "domian": GET /v1/lessons takes domain,`)
	wantProblem(t, do(t, h, "GET", "/v1/health?verbose=1&x=2", "", ""), http.StatusBadRequest,
		`unknown query parameters "verbose", "x": GET /v1/health takes no query parameters`)
	wantProblem(t, do(t, h, "POST", "/v1/forget?domain=example.com&dryrun=true", "application/json", ""), http.StatusBadRequest,
		`unknown query parameter "dryrun"`)
	wantProblem(t, do(t, h, "GET", "/v1/lessons?domain=%zz", "", ""), http.StatusBadRequest, `query: invalid URL escape "%zz"`)
	if resp := do(t, h, "GET", "/v1/lessons?domain=example.com", "", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("a route's own parameter: %d", resp.StatusCode)
	}
}
