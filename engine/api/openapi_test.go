package api_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
)

// fetchDoc fetches the document as a client does, over a real server.
func fetchDoc(t *testing.T, base string) []byte {
	t.Helper()
	resp, err := http.Get(base + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /v1/openapi.json: %d %s %v", resp.StatusCode, b, err)
	}
	return b
}

func newValidator(t *testing.T, doc []byte) validator.Validator {
	t.Helper()
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		t.Fatalf("the document does not build: %v", errs)
	}
	return v
}

func describe(errs []*verrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  %s: %s", e.Message, e.Reason)
		for _, f := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n    %s: %s", f.FieldPath, f.Reason)
		}
	}
	return b.String()
}

// The served document is a valid OpenAPI 3.1 document (checked against the
// OpenAPI 3.1 schema), declares every path parameter, names every
// operation once, tags it, and answers every error with the problem
// schema.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	srv := httptest.NewServer(api.Handler(open(t), api.Options{}))
	defer srv.Close()
	b := fetchDoc(t, srv.URL)
	v := newValidator(t, b)
	if ok, errs := v.ValidateDocument(); !ok {
		t.Fatalf("not a valid OpenAPI 3.1 document:%s", describe(errs))
	}
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string           `json:"operationId"`
			Tags        []string         `json:"tags"`
			Parameters  []map[string]any `json:"parameters"`
			Responses   map[string]struct {
				Ref string `json:"$ref"`
			} `json:"responses"`
			RequestBody struct {
				Content map[string]struct {
					Example any `json:"example"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
		Tags []struct {
			Name string `json:"name"`
		} `json:"tags"`
		Components struct {
			Schemas   map[string]any `json:"schemas"`
			Responses map[string]struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, tg := range doc.Tags {
		tags = append(tags, tg.Name)
	}
	for name, r := range doc.Components.Responses {
		if r.Content["application/problem+json"].Schema.Ref != "#/components/schemas/Problem" {
			t.Errorf("response %s is not a problem", name)
		}
	}
	ids := map[string]string{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			where := strings.ToUpper(method) + " " + path
			if prev, ok := ids[op.OperationID]; ok || op.OperationID == "" {
				t.Errorf("%s: operationId %q (also %s)", where, op.OperationID, prev)
			}
			ids[op.OperationID] = where
			if len(op.Tags) != 1 || !slices.Contains(tags, op.Tags[0]) {
				t.Errorf("%s: tags %v, not one of %v", where, op.Tags, tags)
			}
			for _, seg := range strings.Split(path, "/") {
				name, ok := strings.CutPrefix(seg, "{")
				if !ok {
					continue
				}
				name = strings.TrimSuffix(name, "}")
				if !slices.ContainsFunc(op.Parameters, func(p map[string]any) bool { return p["name"] == name && p["in"] == "path" && p["required"] == true }) {
					t.Errorf("%s: path parameter %s is not declared", where, name)
				}
			}
			if op.Responses["default"].Ref != "#/components/responses/Error" || op.Responses["400"].Ref != "#/components/responses/BadRequest" {
				t.Errorf("%s: error answers %+v", where, op.Responses)
			}
			for ct, media := range op.RequestBody.Content {
				if media.Example == nil {
					t.Errorf("%s: request body %s has no example", where, ct)
				}
			}
		}
	}
	for _, name := range []string{"Lesson", "LessonInput", "Fact", "Trajectory", "Manifest", "Problem"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("no schema %s among %d", name, len(doc.Components.Schemas))
		}
	}
}

// exampleRank orders the round trip: what others refer to first, what
// changes a record's state next, what removes things last.
func exampleRank(method, path string) int {
	switch {
	case method == "POST" && slices.Contains([]string{"/v1/lessons", "/v1/runs", "/v1/facts/observe", "/v1/facts", "/v1/selectors",
		"/v1/trajectories", "/v1/sessions", "/v1/import", "/v1/runs/{id}/plan/iterations", "/v1/runs/{id}/progress"}, path):
		return 0
	case method == "DELETE", strings.HasSuffix(path, "/reject"), path == "/v1/forget", strings.HasPrefix(path, "/v1/imports/"):
		return 3
	case strings.Contains(path, "revert"), strings.Contains(path, "retract"), strings.HasPrefix(path, "/v1/runs/{id}/"), strings.HasSuffix(path, "/approve"):
		return 2
	}
	return 1
}

// exampleProblems are the operations whose example answers a documented
// problem on the round trip's memory: its records are not in quarantine,
// and no token has the example's id.
var exampleProblems = map[string]int{
	"DELETE /v1/tokens/{id}":                        404, // a token's id is random: the example's is no token's
	"POST /v1/quarantine/facts/{id}/approve":        404,
	"POST /v1/quarantine/facts/{id}/reject":         404,
	"POST /v1/quarantine/lessons/{id}/reject":       404,
	"POST /v1/quarantine/trajectories/{id}/approve": 404,
	"POST /v1/quarantine/trajectories/{id}/reject":  404,
}

// The round trip: every operation's example request goes to a real server
// (the real handler over badger on disk, over HTTP), and the request and
// its answer are checked against the document; a request that leaves out
// one of a body's required fields is refused with 400.
func TestOpenAPIRoundTrip(t *testing.T) {
	ctx := context.Background()
	m, err := memory.Open(ctx, t.TempDir(), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	srv := httptest.NewServer(api.Handler(m, api.Options{}))
	defer srv.Close()
	b := fetchDoc(t, srv.URL)
	v := newValidator(t, b)
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name    string `json:"name"`
				In      string `json:"in"`
				Example any    `json:"example"`
			} `json:"parameters"`
			RequestBody *struct {
				Content map[string]struct {
					Example any `json:"example"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	// The validator does check answers: a health answer of the wrong
	// shape and a problem that is not one are caught.
	for _, c := range []struct {
		status      int
		ctype, body string
	}{
		{200, "application/json", `{"status": 1}`},
		{404, "application/problem+json", `{"title": 404}`},
	} {
		req := httptest.NewRequest("GET", srv.URL+"/v1/lessons/x", nil)
		if c.status == 200 {
			req = httptest.NewRequest("GET", srv.URL+"/v1/health", nil)
		}
		resp := &http.Response{StatusCode: c.status, Header: http.Header{"Content-Type": {c.ctype}}, Body: io.NopCloser(strings.NewReader(c.body))}
		if ok, _ := v.ValidateHttpResponse(req, resp); ok {
			t.Fatalf("the validator passed %d %s", c.status, c.body)
		}
	}
	// Every response example is a valid answer of its operation.
	var answers struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]struct {
					Example any `json:"example"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(b, &answers); err != nil {
		t.Fatal(err)
	}
	examples := 0
	for path, ops := range answers.Paths {
		for method, op := range ops {
			for ct, media := range op.Responses["200"].Content {
				if media.Example == nil {
					continue
				}
				examples++
				body, _ := json.Marshal(media.Example)
				p := strings.NewReplacer("{id}", "x", "{sha256}", "x").Replace(path)
				req := httptest.NewRequest(strings.ToUpper(method), srv.URL+p, nil)
				resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(bytes.NewReader(body))}
				if ok, errs := v.ValidateHttpResponse(req, resp); !ok {
					t.Errorf("%s %s: the response example is not valid:%s", method, path, describe(errs))
				}
			}
		}
	}
	if examples < 5 {
		t.Errorf("%d response examples", examples)
	}
	routes := api.Routes()
	slices.SortStableFunc(routes, func(a, b api.Route) int { return exampleRank(a.Method, a.Path) - exampleRank(b.Method, b.Path) })
	send := func(rt api.Route, body []byte, ctype string, query url.Values) (*http.Request, *http.Response, []byte) {
		t.Helper()
		path := rt.Path
		op := doc.Paths[rt.Path][strings.ToLower(rt.Method)]
		for _, p := range op.Parameters {
			if p.In == "path" {
				if p.Example == nil {
					t.Fatalf("%s %s: no example of path parameter %s", rt.Method, rt.Path, p.Name)
				}
				path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(fmt.Sprint(p.Example)))
			}
		}
		u := srv.URL + path
		if len(query) > 0 {
			u += "?" + query.Encode()
		}
		req, err := http.NewRequest(rt.Method, u, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		resp.Body = io.NopCloser(bytes.NewReader(got))
		req.Body = io.NopCloser(bytes.NewReader(body))
		return req, resp, got
	}
	for _, rt := range routes {
		op := doc.Paths[rt.Path][strings.ToLower(rt.Method)]
		query := url.Values{}
		for _, p := range op.Parameters {
			if p.In == "query" && p.Example != nil {
				query.Set(p.Name, fmt.Sprint(p.Example))
			}
		}
		var body []byte
		ctype := ""
		if rt.Method != "GET" {
			ctype = "application/json"
		}
		if op.RequestBody != nil {
			for ct, media := range op.RequestBody.Content {
				ctype = ct
				if s, ok := media.Example.(string); ok {
					body = []byte(s)
				} else {
					body, _ = json.Marshal(media.Example)
				}
			}
		}
		req, resp, got := send(rt, body, ctype, query)
		where := rt.Method + " " + rt.Path
		// (The validator reads a JSON-lines body as one JSON value.)
		if ok, errs := v.ValidateHttpRequest(req); !ok && rt.BodyType == "" {
			t.Errorf("%s: the example request is not valid against the document:%s", where, describe(errs))
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		if ok, errs := v.ValidateHttpResponse(req, resp); !ok {
			t.Errorf("%s: the answer %d %.300s is not valid against the document:%s", where, resp.StatusCode, got, describe(errs))
		}
		if want := cmp.Or(exampleProblems[where], 200); resp.StatusCode != want {
			t.Errorf("%s: the example request answered %d %s, want %d", where, resp.StatusCode, got, want)
		}
		// Each required field left out is refused, and the refusal is a
		// documented problem.
		for _, f := range rt.Required {
			var obj map[string]any
			if err := json.Unmarshal(body, &obj); err != nil {
				t.Fatalf("%s: example %s: %v", where, body, err)
			}
			delete(obj, f)
			less, _ := json.Marshal(obj)
			req, resp, got := send(rt, less, ctype, query)
			var p struct{ Detail string }
			json.Unmarshal(got, &p)
			if resp.StatusCode != 400 || !strings.Contains(p.Detail, fmt.Sprintf("%q", f)) {
				t.Errorf("%s without %s: %d %s, want 400 naming it", where, f, resp.StatusCode, got)
			}
			if ok, errs := v.ValidateHttpResponse(req, resp); !ok {
				t.Errorf("%s without %s: the refusal is not valid against the document:%s", where, f, describe(errs))
			}
		}
	}
}
