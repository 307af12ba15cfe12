package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/api/problem"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/selector"
)

func open(t *testing.T) *memory.Memory {
	t.Helper()
	m, err := memory.Open(context.Background(), t.TempDir(), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func do(t *testing.T, h http.Handler, method, path, ctype, body string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result()
}

// TestOpenAPIListsExactlyTheRoutes serves the document and checks every
// route in it is served, and that paths and methods it does not list are
// not: the document and the router are the same table.
func TestOpenAPIListsExactlyTheRoutes(t *testing.T) {
	h := api.Handler(open(t), api.Options{})
	resp := do(t, h, "GET", "/v1/openapi.json", "", "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET /v1/openapi.json: %d", resp.StatusCode)
	}
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi = %q", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	served := map[string]bool{}
	for _, r := range api.Routes() {
		served[r.Method+" "+r.Path] = true
	}
	for k := range served {
		if !documented[k] {
			t.Errorf("route %s is served but not documented", k)
		}
	}
	for k := range documented {
		if !served[k] {
			t.Errorf("route %s is documented but not in the route table", k)
		}
	}
	// Every documented route reaches a handler (never the router's own
	// "no route" answer), and every other method on its path does not.
	for k := range documented {
		method, path, _ := strings.Cut(k, " ")
		url := strings.NewReplacer("{id}", "nope", "{run}", "nope").Replace(path)
		if b := body(t, do(t, h, method, url, "", "")); strings.Contains(b, "no route") {
			t.Errorf("%s %s: the router does not serve it: %s", method, url, b)
		}
		// Another method on a route's path is 405, Allow naming the
		// methods the path takes.
		var allow []string
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if documented[m+" "+path] {
				allow = append(allow, m)
			}
		}
		for _, other := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
			if documented[other+" "+path] {
				continue
			}
			resp := do(t, h, other, url, "", "")
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != strings.Join(allow, ", ") {
				t.Errorf("%s %s (not documented): %d, Allow %q; want 405, Allow %q", other, url, resp.StatusCode, resp.Header.Get("Allow"), strings.Join(allow, ", "))
			}
			if b := body(t, resp); !strings.Contains(b, "this route takes "+strings.Join(allow, ", ")) {
				t.Errorf("%s %s (not documented): %s", other, url, b)
			}
		}
	}
	if b := body(t, do(t, h, "GET", "/v1/nothing", "", "")); !strings.Contains(b, "no route GET /v1/nothing") {
		t.Errorf("unknown route: %s", b)
	}
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantProblem(t *testing.T, resp *http.Response, status int, detail string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body(t, resp))
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json", ct)
	}
	var p problem.Problem
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	if p.Status != status || !strings.Contains(p.Detail, detail) {
		t.Fatalf("problem %+v, want status %d and detail containing %q", p, status, detail)
	}
}

func TestBadRequestsAreProblems(t *testing.T) {
	h := api.Handler(open(t), api.Options{})
	wantProblem(t, do(t, h, "POST", "/v1/recall/error", "application/json", `{"command": "click"`), 400, "the JSON is cut off")
	wantProblem(t, do(t, h, "POST", "/v1/recall/error", "application/json", `{"command": "click", "eror": "x"}`), 400, `unknown field "eror"`)
	wantProblem(t, do(t, h, "POST", "/v1/recall/error", "application/json", `{"command": "click"} {}`), 400, "more than one JSON value")
	wantProblem(t, do(t, h, "POST", "/v1/recall/error", "application/json", ``), 400, "the body is empty")
	wantProblem(t, do(t, h, "POST", "/v1/recall/error", "text/plain", `{}`), 415, "takes application/json")
	wantProblem(t, do(t, h, "POST", "/v1/recall/error", "application/json", `{"command": " ", "error": "x"}`), 400, "the command is empty")
	big := `{"command": "` + strings.Repeat("x", api.MaxBody) + `"}`
	wantProblem(t, do(t, h, "POST", "/v1/recall/error", "application/json", big), 413, "over")
	wantProblem(t, do(t, h, "GET", "/v1/lessons/nope", "", ""), 404, "no such lesson")
	wantProblem(t, do(t, h, "GET", "/v1/lessons?tier=3", "", ""), 400, "tier")
	wantProblem(t, do(t, h, "GET", "/v1/lessons?category=fun", "", ""), 400, `unknown category "fun"`)
	wantProblem(t, do(t, h, "GET", "/v1/recall/domain", "", ""), 400, "the host parameter is required")
	wantProblem(t, do(t, h, "POST", "/v1/lessons", "application/json", `{"lesson": "x", "category": "site_specific", "domain": "a\u0000b"}`), 400, "invalid")
}

func TestClockHeaderNeedsAFixedClockServer(t *testing.T) {
	m := open(t)
	req := func(h http.Handler) *http.Response {
		r := httptest.NewRequest("POST", "/v1/lessons", strings.NewReader(`{"lesson": "wait for it", "category": "best_practice"}`))
		r.Header.Set(api.HeaderNow, "2026-03-12T10:00:00Z")
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Result()
	}
	wantProblem(t, req(api.Handler(m, api.Options{})), 400, "keeps its own clock")
	resp := req(api.Handler(m, api.Options{AllowClock: true}))
	b := body(t, resp)
	var got api.RecordedLesson
	if err := json.Unmarshal([]byte(b), &got); err != nil || got.Lesson.CreatedAt != "2026-03-12" {
		t.Fatalf("with AllowClock: %s, %v; want created 2026-03-12", b, err)
	}
}

// TestLocalClientRoundTrip drives the lesson routes through the in-process
// client, the CLI's embedded mode: answers, events and errors.
func TestLocalClientRoundTrip(t *testing.T) {
	ctx := context.Background()
	var events []string
	c := api.Local(api.Handler(open(t), api.Options{AllowClock: true}), api.ClientOptions{
		Events: func(e event.Event) { events = append(events, e.Name) },
		Now:    time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC),
	})
	defer c.Close()
	rec, err := c.RecordLesson(ctx, lesson.Lesson{Lesson: "scroll the list first", Category: "site_specific",
		FailedCommand: "click", ErrorPattern: "not visible", Domain: "shop.example"})
	if err != nil || !rec.Created || rec.Lesson.CreatedAt != "2026-03-12" {
		t.Fatalf("record: %+v, %v", rec, err)
	}
	if len(events) != 1 || events[0] != event.LessonRecorded {
		t.Fatalf("events after record: %v, want [%s]", events, event.LessonRecorded)
	}
	again, err := c.RecordLesson(ctx, lesson.Lesson{Lesson: "scroll the list first", Category: "site_specific",
		FailedCommand: "click", ErrorPattern: "not visible", Domain: "shop.example"})
	if err != nil || again.Created || again.Lesson.ID != rec.Lesson.ID || again.Lesson.UseCount != 1 {
		t.Fatalf("the same pattern again: %+v, %v; want one more use of %s", again, err, rec.Lesson.ID)
	}
	tips, err := c.RecallError(ctx, "click e12", "element not visible", "www.shop.example")
	if err != nil || len(tips) == 0 || tips[0].ID != rec.Lesson.ID {
		t.Fatalf("recall: %+v, %v", tips, err)
	}
	used, err := c.UseLesson(ctx, rec.Lesson.ID, api.UseRequest{Domain: "shop.example"})
	if err != nil || used.UseCount != 2 {
		t.Fatalf("use: %+v, %v", used, err)
	}
	page, err := c.Lessons(ctx, api.LessonFilter{Domain: "shop.example"})
	if err != nil || len(page.Lessons) != 1 {
		t.Fatalf("list: %+v, %v", page, err)
	}
	if err := c.RemoveLesson(ctx, rec.Lesson.ID); err != nil {
		t.Fatal(err)
	}
	_, err = c.Lesson(ctx, rec.Lesson.ID)
	if !errors.Is(err, engine.ErrNotFound) || err.Error() != "no such lesson "+rec.Lesson.ID && !strings.Contains(err.Error(), "no such lesson") {
		t.Fatalf("get after remove: %v; want a not-found error", err)
	}
	_, err = c.RecordLesson(ctx, lesson.Lesson{Lesson: "", Category: "best_practice"})
	if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "the lesson text is empty") {
		t.Fatalf("empty lesson: %v; want bad input naming the problem", err)
	}
	learned, err := c.Learn(ctx, "shop.example", []byte(`{"step":1,"command":"fill e3 x","execution_result":"error","stderr":"Error: too many arguments for fill"}
{"step":2,"command":"type e3 x","execution_result":"ok"}
`))
	if err != nil || len(learned) != 1 {
		t.Fatalf("learn: %+v, %v", learned, err)
	}
	if _, err := c.Learn(ctx, "", []byte("not json\n")); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("learn from a bad log: %v; want bad input", err)
	}
}

// Lesson lists come in pages whose cursors join them to the whole list;
// EachLesson walks them; a bad cursor is bad input.
func TestLessonPages(t *testing.T) {
	ctx := context.Background()
	c := api.Local(api.Handler(open(t), api.Options{}), api.ClientOptions{})
	defer c.Close()
	for i := range 7 {
		if _, err := c.RecordLesson(ctx, lesson.Lesson{Lesson: "tip " + string(rune('a'+i)), Category: "site_specific",
			FailedCommand: "click", ErrorPattern: "pattern " + string(rune('a'+i)), Domain: "shop.example"}); err != nil {
			t.Fatal(err)
		}
	}
	var all []string
	if _, err := c.EachLesson(ctx, api.LessonFilter{}, 0, func(l lesson.Lesson) error { all = append(all, l.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(all) != 7+3 {
		t.Fatalf("every lesson: %d, want 10 (7 and the 3 seeds)", len(all))
	}
	var paged []string
	cursor := ""
	for pages := 0; ; pages++ {
		p, err := c.Lessons(ctx, api.LessonFilter{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Lessons) > 3 || pages > 4 {
			t.Fatalf("page %d: %d lessons", pages, len(p.Lessons))
		}
		for _, l := range p.Lessons {
			paged = append(paged, l.ID)
		}
		if cursor = p.Next; cursor == "" {
			break
		}
	}
	if strings.Join(paged, " ") != strings.Join(all, " ") {
		t.Fatalf("pages of 3: %v\nwant %v", paged, all)
	}
	var first []string
	next, err := c.EachLesson(ctx, api.LessonFilter{}, 4, func(l lesson.Lesson) error { first = append(first, l.ID); return nil })
	if err != nil || len(first) != 4 || next == "" {
		t.Fatalf("at most 4: %v, next %q, %v", first, next, err)
	}
	var rest []string
	if _, err := c.EachLesson(ctx, api.LessonFilter{Cursor: next}, 0, func(l lesson.Lesson) error { rest = append(rest, l.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(append(first, rest...), " ") != strings.Join(all, " ") {
		t.Fatalf("4 then the rest: %v %v\nwant %v", first, rest, all)
	}
	if _, err := c.Lessons(ctx, api.LessonFilter{Cursor: "not-a-cursor"}); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("a bad cursor: %v; want bad input", err)
	}
}

// A per-site list answers the whole list, or a page when asked.
func TestSiteListPages(t *testing.T) {
	ctx := context.Background()
	m := open(t)
	for _, k := range []string{"a", "b", "c"} {
		if _, err := m.Facts.Observe(ctx, fact.Observation{Domain: "shop.example", Type: fact.Quirk, Key: k, Value: "v " + k}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Selectors.Record(ctx, selector.Observation{Domain: "shop.example", Role: "button", Name: k, Selector: "#" + k}); err != nil {
			t.Fatal(err)
		}
	}
	h := api.Handler(m, api.Options{})
	for _, route := range []string{"facts", "selectors"} {
		var whole map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body(t, do(t, h, "GET", "/v1/"+route+"?domain=shop.example", "", ""))), &whole); err != nil {
			t.Fatal(err)
		}
		if _, ok := whole["next"]; ok {
			t.Errorf("%s: the whole list has a next", route)
		}
		var items []string
		cursor := ""
		for pages := 0; pages < 5; pages++ {
			q := "/v1/" + route + "?domain=shop.example&limit=2"
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			var p map[string]json.RawMessage
			if err := json.Unmarshal([]byte(body(t, do(t, h, "GET", q, "", ""))), &p); err != nil {
				t.Fatal(err)
			}
			var page []json.RawMessage
			json.Unmarshal(p[route], &page)
			if len(page) > 2 {
				t.Fatalf("%s: a page of %d", route, len(page))
			}
			for _, it := range page {
				items = append(items, string(it))
			}
			cursor = ""
			json.Unmarshal(p["next"], &cursor)
			if cursor == "" {
				break
			}
		}
		var all []json.RawMessage
		json.Unmarshal(whole[route], &all)
		if len(items) != len(all) || len(all) != 3 {
			t.Fatalf("%s: pages gave %d items, the whole list %d (want 3)", route, len(items), len(all))
		}
		for i := range all {
			if items[i] != string(all[i]) {
				t.Fatalf("%s: item %d differs between the pages and the whole list", route, i)
			}
		}
		wantProblem(t, do(t, h, "GET", "/v1/"+route+"?domain=shop.example&cursor=junk", "", ""), 400, "cursor")
	}
}

// TestProvenanceHeaders: a client may say it is a person or a program and
// name its run and model; it may not pose as the engine's own seeding,
// learning or an import, nor send a value that is not one.
func TestProvenanceHeaders(t *testing.T) {
	h := api.Handler(open(t), api.Options{})
	req := func(hdr map[string]string) *http.Response {
		r := httptest.NewRequest("GET", "/v1/health", nil)
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Result()
	}
	for _, ok := range []map[string]string{
		{api.HeaderSource: "manual"},
		{api.HeaderSource: "api", api.HeaderRun: "20260312-100000-ab12", api.HeaderModel: "scripted/demo"},
		{api.HeaderRun: "r1"},
	} {
		if resp := req(ok); resp.StatusCode != 200 {
			t.Errorf("%v: %d %s", ok, resp.StatusCode, body(t, resp))
		}
	}
	wantProblem(t, req(map[string]string{api.HeaderSource: "seed"}), 400, `"seed" is the engine's own`)
	wantProblem(t, req(map[string]string{api.HeaderSource: "learned"}), 400, `"learned" needs the run that learned it`)
	wantProblem(t, req(map[string]string{api.HeaderSource: "imported", api.HeaderRun: "r1"}), 400, `"imported" is the engine's own`)
	if resp := req(map[string]string{api.HeaderSource: "learned", api.HeaderRun: "r1"}); resp.StatusCode != 200 {
		t.Errorf("a run's learned writes: %d %s", resp.StatusCode, body(t, resp))
	}
	wantProblem(t, req(map[string]string{api.HeaderSource: "bogus"}), 400, `unknown source "bogus"`)
	wantProblem(t, req(map[string]string{api.HeaderModel: strings.Repeat("m", engine.MaxProvenanceField+1)}), 400, "model is 201 bytes")
}
