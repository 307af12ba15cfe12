package api

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/invopop/jsonschema"

	"github.com/engine-dev/engine/engine/api/problem"
	"github.com/engine-dev/engine/engine/memory/keyspace"
)

// OpenAPI returns the API as an OpenAPI 3.1 document, built from the route
// table the router serves (so the two cannot list different routes). JSON
// Schemas of bodies and answers are reflected from the Go types the
// handlers decode and encode (github.com/invopop/jsonschema).
func OpenAPI() map[string]any { return openAPI() }

var openAPI = sync.OnceValue(func() map[string]any {
	r := &jsonschema.Reflector{Anonymous: true, DoNotReference: true}
	schema := func(v any) any {
		b, err := json.Marshal(r.Reflect(v))
		if err != nil {
			panic(err) // a route's type that cannot be described is a programming error
		}
		var out map[string]any
		json.Unmarshal(b, &out)
		delete(out, "$schema")
		return out
	}
	problem := map[string]any{
		"description": "an RFC 9457 problem: 400 bad input, 401 no or wrong token (TCP), 403 the token's scope (its namespace or role) does not allow it, 404 unknown id, 413 body too large",
		"content":     map[string]any{problem.ContentType: map[string]any{"schema": schema(problem.Problem{})}},
	}
	paths := map[string]any{}
	for _, rt := range routes() {
		op := map[string]any{
			"operationId": operationID(rt),
			"summary":     rt.Summary,
			// The least role a scoped token needs (engine tokens create).
			"x-engine-role": string(RoleOf(rt)),
			"responses": map[string]any{
				"200":     map[string]any{"description": "OK", "content": map[string]any{responseType(rt): map[string]any{"schema": schema(rt.Response)}}},
				"default": problem,
			},
		}
		var params []any
		for _, name := range pathParams(rt.Path) {
			params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		for _, p := range rt.Query {
			params = append(params, map[string]any{"name": p.Name, "in": "query", "required": p.Required,
				"description": p.Description, "schema": map[string]any{"type": p.Type}})
		}
		if params != nil {
			op["parameters"] = params
		}
		switch {
		case rt.BodyType != "":
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{rt.BodyType: map[string]any{}}}
		case rt.Body != nil:
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": schema(rt.Body)}}}
		}
		item, _ := paths[rt.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[rt.Path] = item
		}
		item[strings.ToLower(rt.Method)] = op
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "engine memory",
			"version":     "1",
			"description": "The memory of LLM browser agents, per web domain: lessons, facts, selectors, trajectories, sessions, runs and plans. Schema version " + strconv.Itoa(keyspace.SchemaVersion) + ".",
		},
		"paths": paths,
		"components": map[string]any{"securitySchemes": map[string]any{
			"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "TCP listeners only: the server's serve.token"},
		}},
		"security": []any{map[string]any{"bearer": []any{}}, map[string]any{}},
	}
})

var pathParam = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([a-z_]+)\}`) })

func pathParams(path string) []string {
	var out []string
	for _, m := range pathParam().FindAllStringSubmatch(path, -1) {
		out = append(out, m[1])
	}
	return out
}

// operationID is the route as one word: GET /v1/lessons/{id}/use → postLessonsIdUse.
func operationID(rt Route) string {
	id := strings.ToLower(rt.Method)
	for _, part := range strings.FieldsFunc(strings.TrimPrefix(rt.Path, "/v1/"), func(r rune) bool { return r == '/' || r == '.' || r == '{' || r == '}' || r == '_' }) {
		id += strings.ToUpper(part[:1]) + part[1:]
	}
	return id
}

func responseType(rt Route) string {
	if rt.Stream {
		return "application/jsonl"
	}
	return "application/json"
}

// health answers GET /v1/health after reading the schema stamp, so a
// server whose store fails says so.
func health(c *call) (any, error) {
	if _, err := keyspace.Check(c.ctx, c.m.DB()); err != nil {
		return nil, err
	}
	return Health{Status: "ok", Schema: keyspace.SchemaVersion}, nil
}
