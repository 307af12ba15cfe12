package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/engine-dev/engine/engine/memory/fact"
)

// The document's examples, by "METHOD /path". The round-trip test sends
// every one to a real server in the order of exampleOrder and checks the
// answer against the document, so the ids here are those the examples
// before them create (a lesson's and a trajectory's id derive from their
// content; the run's is given).
const (
	exampleDomain     = "shop.example"
	exampleRun        = "run_example"
	exampleLesson     = "l66b08807a8"           // the id of requestExamples["POST /v1/lessons"]
	exampleTrajectory = "traj_b8f62547e7f1d94c" // the id of requestExamples["POST /v1/trajectories"]
)

// exampleFact is the id of requestExamples["POST /v1/facts/observe"].
var exampleFact = fact.IDOf(fact.Fact{Domain: exampleDomain, Type: fact.Selector, Key: "search box", Value: "#q"})

// exampleImport is the SHA-256 of requestExamples["POST /v1/import"] as
// encoding/json writes it, which the import's provenance records.
var exampleImport = func() string {
	b, _ := json.Marshal(requestExamples["POST /v1/import"])
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}()

var requestExamples = map[string]any{
	"POST /v1/namespaces": map[string]any{"name": "team-a"},
	"POST /v1/tokens":     map[string]any{"namespace": "team-a", "role": "write", "name": "crawler", "expires_in": "720h"},
	"POST /v1/lessons": map[string]any{"lesson": "If the Add to cart button is hidden behind the cookie banner, accept the banner first",
		"category": "site_specific", "failed_command": "click", "error_pattern": "not visible", "domain": exampleDomain},
	"POST /v1/recall/error":         map[string]any{"command": "click e12", "error": "element is not visible", "domain": exampleDomain},
	"POST /v1/lessons/{id}/use":     map[string]any{"domain": exampleDomain, "helped": true},
	"POST /v1/lessons/{id}/edit":    map[string]any{"lesson": "Accept the cookie banner before clicking Add to cart"},
	"POST /v1/lessons/{id}/retract": map[string]any{"reason": "the site removed the banner"},
	"POST /v1/retract/{id}":         map[string]any{"reason": "the site removed the banner"},
	"POST /v1/facts/observe":        map[string]any{"domain": exampleDomain, "type": "selector", "key": "search box", "value": "#q"},
	"POST /v1/facts":                map[string]any{"domain": exampleDomain, "type": "timing", "key": "checkout load", "value": "3s", "confidence": 0.8},
	"POST /v1/facts/{id}/edit":      map[string]any{"value": "#search"},
	"POST /v1/selectors":            map[string]any{"domain": exampleDomain, "role": "button", "name": "Checkout", "selector": "#checkout"},
	"POST /v1/trajectories": map[string]any{"domain": exampleDomain, "goal": "add 2 padel rackets to the cart", "steps": []any{
		map[string]any{"action": "navigate", "url": "https://shop.example/"},
		map[string]any{"action": "type", "role": "textbox", "name": "Quantity", "selector": "#qty", "value": "2", "verified": true},
		map[string]any{"action": "click", "role": "button", "name": "Add to cart", "selector": "#add", "verified": true},
	}},
	"POST /v1/sessions":           map[string]any{"domain": exampleDomain, "goal": "buy a padel racket", "outcome": "bought one racket", "success": true},
	"POST /v1/runs":               map[string]any{"run_id": exampleRun, "goal": "buy a padel racket", "start_url": "https://shop.example/"},
	"POST /v1/runs/{id}/progress": map[string]any{"current_url": "https://shop.example/cart", "turn_count": 3},
	"POST /v1/runs/{id}/complete": map[string]any{"success": true, "summary": "bought one racket"},
	"POST /v1/runs/{id}/fork":     map[string]any{"goal": "buy two padel rackets"},
	"POST /v1/runs/{id}/resume":   map[string]any{},
	"POST /v1/attribution/lessons": map[string]any{"lessons": []any{
		map[string]any{"id": exampleLesson, "shown": 1, "used": 1, "helped": 1}}},
	"POST /v1/attribution/facts":         map[string]any{"facts": []any{}},
	"POST /v1/attribution/selectors":     map[string]any{"selectors": []any{}},
	"POST /v1/attribution/trajectories":  map[string]any{"trajectories": []any{}},
	"POST /v1/stale/lessons":             map[string]any{},
	"POST /v1/stale/trajectories":        map[string]any{"trajectories": []any{}},
	"POST /v1/runs/{id}/plan/iterations": map[string]any{"iteration": 1},
	"POST /v1/import": map[string]any{"version": 1, "lessons": []any{map[string]any{"lesson": "Wait for the spinner to go before reading prices",
		"category": "best_practice"}}},
	"POST /v1/learn": `{"step":1,"action":"fill","ref":"e3","ok":false,"error":"element is read-only","url":"https://shop.example/login"}
{"step":2,"action":"type","ref":"e3","ok":true,"url":"https://shop.example/login"}
`,
}

// exampleLessonAnswer is the lesson requestExamples["POST /v1/lessons"]
// records, as the server answers it.
var exampleLessonAnswer = map[string]any{"id": exampleLesson,
	"lesson":   "If the Add to cart button is hidden behind the cookie banner, accept the banner first",
	"category": "site_specific", "failed_command": "click", "error_pattern": "not visible", "domain": exampleDomain,
	"use_count": 0, "created_at": "2026-11-28", "last_used": "2026-11-28", "source": "api", "triggered_domains": []any{},
	"trust": "candidate", "provenance": map[string]any{"source": "api", "site": exampleDomain, "at": "2026-11-28T09:00:56.785409063Z"}}

// responseExamples are answers as the server gives them (the round trip
// checks each against its schema).
var responseExamples = map[string]any{
	"GET /v1/health":        map[string]any{"status": "ok", "schema": 1},
	"POST /v1/lessons":      map[string]any{"lesson": exampleLessonAnswer, "created": true},
	"POST /v1/recall/error": []any{exampleLessonAnswer},
	"GET /v1/lessons/{id}":  exampleLessonAnswer,
	"POST /v1/runs": map[string]any{"run_id": exampleRun, "status": "running", "goal": "buy a padel racket", "domain": exampleDomain,
		"start_url": "https://shop.example/", "started_at": "2026-11-28T09:00:56.810762132Z", "updated_at": "2026-11-28T09:00:56.810762132Z",
		"artifact_paths": []any{}, "turn_count": 0, "heartbeat_at": "2026-11-28T09:00:56.810762132Z"},
	"POST /v1/facts/observe": map[string]any{"fact": map[string]any{"domain": exampleDomain, "type": "selector", "key": "search box", "value": "#q",
		"confidence": 0.5, "sources": 1, "first_seen": "2026-11-28T09:00:56.809404426Z", "last_seen": "2026-11-28T09:00:56.809404426Z",
		"provenance": map[string]any{"source": "api", "site": exampleDomain, "at": "2026-11-28T09:00:56.809404426Z"}},
		"result": "new", "contradicted": []any{}, "pruned": []any{}},
}

// pathExamples are each route's path parameter.
var pathExamples = map[string]any{
	"DELETE /v1/tokens/{id}":                        "t0123456789ab",
	"GET /v1/lessons/{id}":                          exampleLesson,
	"DELETE /v1/lessons/{id}":                       exampleLesson,
	"POST /v1/lessons/{id}/edit":                    exampleLesson,
	"GET /v1/lessons/{id}/history":                  exampleLesson,
	"POST /v1/lessons/{id}/retract":                 exampleLesson,
	"POST /v1/lessons/{id}/revert":                  exampleLesson,
	"POST /v1/lessons/{id}/use":                     exampleLesson,
	"GET /v1/history/{id}":                          exampleLesson,
	"POST /v1/retract/{id}":                         exampleTrajectory,
	"POST /v1/revert/{id}":                          exampleTrajectory,
	"POST /v1/quarantine/lessons/{id}/approve":      exampleLesson,
	"POST /v1/quarantine/lessons/{id}/reject":       exampleLesson,
	"POST /v1/quarantine/facts/{id}/approve":        exampleFact,
	"POST /v1/quarantine/facts/{id}/reject":         exampleFact,
	"POST /v1/quarantine/trajectories/{id}/approve": exampleTrajectory,
	"POST /v1/quarantine/trajectories/{id}/reject":  exampleTrajectory,
	"POST /v1/facts/{id}/edit":                      exampleFact,
	"GET /v1/trajectories/{id}":                     exampleTrajectory,
	"DELETE /v1/trajectories/{id}":                  exampleTrajectory,
	"GET /v1/runs/{id}":                             exampleRun,
	"POST /v1/runs/{id}/complete":                   exampleRun,
	"POST /v1/runs/{id}/fork":                       exampleRun,
	"GET /v1/runs/{id}/plan":                        exampleRun,
	"POST /v1/runs/{id}/plan/iterations":            exampleRun,
	"POST /v1/runs/{id}/progress":                   exampleRun,
	"POST /v1/runs/{id}/resume":                     exampleRun,
	"POST /v1/imports/{sha256}/revert":              exampleImport,
}

// queryExamples are each route's query parameters.
var queryExamples = map[string]map[string]any{
	"GET /v1/context":              {"url": "https://shop.example/cart", "goal": "buy a padel racket", "budget": 2000},
	"GET /v1/recall/domain":        {"host": exampleDomain},
	"GET /v1/recall/trajectory":    {"domain": exampleDomain, "goal": "add 3 padel rackets to the cart"},
	"GET /v1/selectors/lookup":     {"url": "https://shop.example/cart", "role": "button", "name": "Checkout"},
	"GET /v1/sessions/rendered":    {"domain": exampleDomain},
	"GET /v1/trajectories/{id}":    {"domain": exampleDomain},
	"DELETE /v1/trajectories/{id}": {"domain": exampleDomain},
	"POST /v1/forget":              {"domain": "old.example", "dry_run": true},
	"POST /v1/revert":              {"run": exampleRun},
	"GET /v1/lessons":              {"domain": exampleDomain, "category": "site_specific"},
	"GET /v1/runs":                 {"status": "completed"},
	"POST /v1/learn":               {"domain": exampleDomain},
	"POST /v1/import":              {"source": "memory.json"},
}
