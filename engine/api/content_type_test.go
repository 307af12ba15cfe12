package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/api"
)

// Every POST, PUT, PATCH and DELETE route refuses, with 415 and before
// doing anything, a request without a JSON type (or the route's own): the
// types a page on another origin can send without a CORS preflight
// (text/plain, forms, multipart) and none at all, bodiless requests too.
func TestStateChangingRoutesNeedAJSONType(t *testing.T) {
	m := open(t)
	h := api.Handler(m, api.Options{})
	export := func() string {
		return regexp.MustCompile(`"exported_at":"[^"]*"`).ReplaceAllString(body(t, do(t, h, "GET", "/v1/export", "", "")), "")
	}
	before := export()
	n := 0
	for _, rt := range api.Routes() {
		switch rt.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		default:
			continue
		}
		p := strings.NewReplacer("{id}", "l_x", "{sha256}", strings.Repeat("a", 64)).Replace(rt.Path) + "?domain=shop.example"
		for _, ct := range []string{"", "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "application json"} {
			wantProblem(t, do(t, h, rt.Method, p, ct, `{"lesson":"x","category":"site_specific","domain":"shop.example"}`), http.StatusUnsupportedMediaType, "application/json")
			n++
		}
	}
	if n < 7*20 {
		t.Fatalf("only %d requests: the route table lost its writers?", n)
	}
	if after := export(); after != before {
		t.Fatalf("memory changed:\nbefore %s\nafter  %s", before, after)
	}
	// The JSON type, with parameters, and a route's own type pass the check.
	resp := do(t, h, "POST", "/v1/lessons", "application/json; charset=utf-8", `{"lesson":"Scroll first.","category":"site_specific","domain":"shop.example"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("application/json; charset=utf-8: %d %s", resp.StatusCode, body(t, resp))
	}
	resp = do(t, h, "POST", "/v1/forget?domain=nothing.example", "application/json", "")
	if resp.StatusCode != 200 {
		t.Fatalf("bodiless with application/json: %d %s", resp.StatusCode, body(t, resp))
	}
	resp = do(t, h, "POST", "/v1/learn?domain=shop.example", "application/jsonl", `{"step":1,"command":"type e3 x","execution_result":"ok"}`+"\n")
	if resp.StatusCode != 200 {
		t.Fatalf("learn with application/jsonl: %d %s", resp.StatusCode, body(t, resp))
	}
}
