package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/lesson"
)

// post sends body to srv's path as a learning run r1 would, over real HTTP.
func post(t *testing.T, srv *httptest.Server, path, ctype, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Engine-Source", "learned")
	req.Header.Set("Engine-Run", "r1")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func tier1(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/v1/recall/tier1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A client cannot write its own trust: POST /v1/lessons that sets
// counters or trust is refused with 400 naming every such field, and
// nothing is written; the same lesson without them is a candidate with
// no use, out of Tier 1.
func TestLessonCountersCannotBeWritten(t *testing.T) {
	srv := httptest.NewServer(api.Handler(open(t), api.Options{}))
	defer srv.Close()
	const text = `"lesson": "If click fails with a cookie wall, press Escape.", "category": "error_recovery", "failed_command": "click", "error_pattern": "cookie wall"`
	code, body := post(t, srv, "/v1/lessons", "application/json",
		`{`+text+`, "use_count": 50, "triggered_domains": ["a.com", "b.com", "c.com", "d.com"], "shown": 3, "used": 2, "helped": 1, "trust": "trusted"}`)
	if code != http.StatusBadRequest {
		t.Fatalf("self-promoting lesson: %d %s", code, body)
	}
	for _, f := range []string{"use_count", "triggered_domains", "shown", "used", "helped", "trust", "POST /v1/import?trust=true"} {
		if !strings.Contains(body, f) {
			t.Errorf("the refusal does not name %s: %s", f, body)
		}
	}
	if strings.Contains(tier1(t, srv), "cookie wall") {
		t.Fatal("a refused lesson is in Tier 1")
	}
	for _, field := range []string{`"use_count": 50`, `"triggered_domains": ["a.com"]`, `"helped": 1`} {
		if code, body := post(t, srv, "/v1/lessons", "application/json", `{`+text+`, `+field+`}`); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", field, code, body)
		}
	}
	code, body = post(t, srv, "/v1/lessons", "application/json", `{`+text+`, "use_count": 0, "triggered_domains": []}`)
	var rec api.RecordedLesson
	if code != http.StatusOK && code != http.StatusCreated || json.Unmarshal([]byte(body), &rec) != nil {
		t.Fatalf("plain lesson: %d %s", code, body)
	}
	if l := rec.Lesson; l.UseCount != 0 || l.Trust != lesson.Candidate || l.Category != lesson.ErrorRecovery || l.Provenance.Run != "r1" {
		t.Fatalf("stored: %+v", l)
	}
	if strings.Contains(tier1(t, srv), "cookie wall") {
		t.Fatal("a written candidate is in Tier 1")
	}
}

// One learning call is one piece of evidence: a log holding the same
// failure→recovery on five sites gives one lesson one use on one site,
// a candidate outside Tier 1.
func TestOneLearnCallCannotReachTier1(t *testing.T) {
	srv := httptest.NewServer(api.Handler(open(t), api.Options{}))
	defer srv.Close()
	var log strings.Builder
	for i, site := range []string{"a.com", "b.com", "c.com", "d.com", "e.com"} {
		fmt.Fprintf(&log, `{"step": %d, "action": "click", "ref": "e5", "ok": false, "error": "Element e5 intercepts pointer events", "url": "https://%s/", "origin": "browser"}`+"\n", 2*i+1, site)
		fmt.Fprintf(&log, `{"step": %d, "action": "press", "value": "Escape", "ok": true, "url": "https://%s/"}`+"\n", 2*i+2, site)
	}
	code, body := post(t, srv, "/v1/learn", "application/jsonl", log.String())
	var learned []lesson.Learned
	if code != http.StatusOK || json.Unmarshal([]byte(body), &learned) != nil {
		t.Fatalf("learn: %d %s", code, body)
	}
	if len(learned) != 1 {
		t.Fatalf("learned %d lessons from one log: %s", len(learned), body)
	}
	if l := learned[0].Lesson; l.UseCount != 1 || len(l.TriggeredDomains) != 1 || l.Trust != lesson.Candidate || l.Category != lesson.ErrorRecovery {
		t.Fatalf("learned: %+v", l)
	}
	if strings.Contains(tier1(t, srv), "intercepts pointer events") {
		t.Fatal("one learning call reached Tier 1")
	}
}

// A trajectory's run count and shown/used/helped counts are the engine's
// accounting too: POST /v1/trajectories that sets them is refused, naming
// them; the same trajectory without them is stored with one run.
func TestTrajectoryCountsCannotBeWritten(t *testing.T) {
	srv := httptest.NewServer(api.Handler(open(t), api.Options{}))
	defer srv.Close()
	steps, err := json.Marshal(searchSteps)
	if err != nil {
		t.Fatal(err)
	}
	base := `"domain": "www.shop.example", "goal": "search padel rackets", "steps": ` + string(steps)
	code, body := post(t, srv, "/v1/trajectories", "application/json", `{`+base+`, "runs": 40, "helped": 7, "used": 7, "shown": 7}`)
	if code != http.StatusBadRequest || !strings.Contains(body, "runs, shown, used, helped cannot be written") ||
		!strings.Contains(body, "POST /v1/import?trust=true") || strings.Contains(body, "--") {
		t.Fatalf("counted trajectory: %d %s", code, body)
	}
	code, body = post(t, srv, "/v1/trajectories", "application/json", `{`+base+`}`)
	if code != http.StatusOK || !strings.Contains(body, `"runs":1`) {
		t.Fatalf("plain trajectory: %d %s", code, body)
	}
}
