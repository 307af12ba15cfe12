package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/invopop/jsonschema"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api/problem"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/run"
)

// OpenAPI returns the API as an OpenAPI 3.1 document, built from the route
// table the router serves (so the two cannot list different routes). JSON
// Schemas of bodies and answers are reflected from the Go types the
// handlers decode and encode (github.com/invopop/jsonschema) into shared
// components referenced by $ref; a request body's required fields are its
// route's Required, which the server enforces.
func OpenAPI() map[string]any { return openAPI() }

// The document's schema names: the error answer, and the suffix of a
// request body's schema where it differs from the answer of the same type
// (an answer has every field the engine fills, a request only its route's
// required ones).
const (
	problemSchema = "Problem"
	inputSuffix   = "Input"
)

var openAPI = sync.OnceValue(func() map[string]any {
	resp := newSchemas(false)
	req := newSchemas(true)
	paths := map[string]any{}
	var bodies []map[string]any // the request bodies' media, whose refs mergeSchemas may rename
	usedTags := map[string]bool{}
	ids := map[string]string{}
	for _, rt := range routes() {
		id := operationID(rt)
		if prev, dup := ids[id]; dup {
			panic(fmt.Sprintf("api: operationId %s of %s %s is %s's too", id, rt.Method, rt.Path, prev))
		}
		ids[id] = rt.Method + " " + rt.Path
		tag := tagOf(rt.Path)
		usedTags[tag] = true
		var answer any
		if rt.Stream {
			answer = map[string]any{"schema": resp.ref(rt.Response),
				"description": "one JSON value per line, each of this schema"}
		} else {
			answer = map[string]any{"schema": resp.ref(rt.Response)}
		}
		if ex, ok := responseExamples[rt.Method+" "+rt.Path]; ok {
			answer.(map[string]any)["example"] = ex
		}
		op := map[string]any{
			"operationId": id,
			"summary":     rt.Summary,
			"tags":        []any{tag},
			"responses":   errorResponses(rt),
			// The least role a scoped token needs (engine tokens create).
			"x-engine-role": string(RoleOf(rt)),
		}
		op["responses"].(map[string]any)["200"] = map[string]any{"description": "OK",
			"content": map[string]any{responseType(rt): answer}}
		var params []any
		for _, name := range pathParams(rt.Path) {
			p := map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string"},
				"description": pathParamDescription(name)}
			if ex, ok := pathExamples[rt.Method+" "+rt.Path]; ok {
				p["example"] = ex
			}
			params = append(params, p)
		}
		for _, p := range rt.Query {
			s := map[string]any{"type": p.Type}
			if enum := queryEnum(rt.Path, p.Name); enum != nil {
				s["enum"] = enum
			}
			param := map[string]any{"name": p.Name, "in": "query", "required": p.Required,
				"description": p.Description, "schema": s}
			if ex, ok := queryExamples[rt.Method+" "+rt.Path][p.Name]; ok {
				param["example"] = ex
			}
			params = append(params, param)
		}
		if params != nil {
			op["parameters"] = params
		}
		switch {
		case rt.BodyType != "":
			media := map[string]any{"schema": map[string]any{"type": "string",
				"description": "JSON lines: one JSON object per line"}}
			if ex, ok := requestExamples[rt.Method+" "+rt.Path]; ok {
				media["example"] = ex
			}
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{rt.BodyType: media}}
		case rt.Body != nil:
			media := map[string]any{"schema": req.body(rt)}
			bodies = append(bodies, media)
			if ex, ok := requestExamples[rt.Method+" "+rt.Path]; ok {
				media["example"] = ex
			}
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": media}}
		}
		if public[rt.Method+" "+rt.Path] {
			op["security"] = []any{map[string]any{}}
		}
		item, _ := paths[rt.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[rt.Path] = item
		}
		item[strings.ToLower(rt.Method)] = op
	}
	schemas, renamed := mergeSchemas(resp, req)
	for _, media := range bodies {
		media["schema"] = renameRefs(media["schema"], renamed)
	}
	schemas[problemSchema] = problemSchemaOf()
	var tags []any
	for _, t := range tagList {
		if usedTags[t.name] {
			tags = append(tags, map[string]any{"name": t.name, "description": t.description})
		}
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "engine memory",
			"version":     "1",
			"description": "The memory of LLM browser agents, per web domain: lessons, facts, selectors, trajectories, sessions, runs and plans. Schema version " + strconv.Itoa(keyspace.SchemaVersion) + ".",
		},
		"tags":  tags,
		"paths": paths,
		"components": map[string]any{
			"schemas":   schemas,
			"responses": problemResponses(),
			"securitySchemes": map[string]any{
				"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "TCP listeners only: the server's serve.token"},
			},
		},
		"security": []any{map[string]any{"bearer": []any{}}, map[string]any{}},
	}
	// The document goes through JSON once, so what OpenAPI returns is
	// exactly what GET /v1/openapi.json serves (plain maps, slices,
	// strings, float64s and bools).
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
})

// public are the routes a TCP listener serves without the token (Public).
var public = map[string]bool{"GET /v1/openapi.json": true}

// Public reports whether a request may be served without the token on a
// TCP listener: it asks for the API's own description, which holds no
// data (a client generator or a person fetches it first). A server gives
// it as service.Options.Public.
func Public(r *http.Request) bool {
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	return r.URL.RawPath == "" && public[method+" "+r.URL.Path]
}

// schemas reflects Go types into JSON Schemas under
// #/components/schemas: one per named type, shared by every route that
// uses it.
type schemas struct {
	r     *jsonschema.Reflector
	input bool
	defs  map[string]any
	// types records each schema name's Go type, so two types of one
	// name (lesson.Source, run.Source) are caught rather than merged.
	types map[string]reflect.Type
	// required holds the Required of each request body type.
	required map[string][]string
}

func newSchemas(input bool) *schemas {
	s := &schemas{input: input, defs: map[string]any{}, types: map[string]reflect.Type{}, required: map[string][]string{}}
	s.r = &jsonschema.Reflector{
		Anonymous: true,
		// An answer has every field that is not omitempty; a request
		// only the fields of its route's Required.
		RequiredFromJSONSchemaTags: input,
		Mapper:                     enumOf,
		Namer: func(t reflect.Type) string {
			name := schemaName(t)
			if t.Name() == "" {
				return name
			}
			if prev, ok := s.types[name]; ok && prev != t {
				panic(fmt.Sprintf("api: two types are named %s in the OpenAPI document: %v and %v", name, prev, t))
			}
			s.types[name] = t
			return name
		},
	}
	return s
}

// schemaName is a type's component name: its Go name, the type arguments
// of a generic one joined in ("Page[lesson.Lesson]" → "PageLesson"); a
// name two packages' types share is qualified by the package
// (lesson.Version → LessonVersion, and LessonAttributionEntry where the
// API has a LessonAttribution of its own).
func schemaName(t reflect.Type) string {
	name := t.Name()
	if i := strings.IndexByte(name, '['); i >= 0 {
		args := name[i+1 : len(name)-1]
		name = name[:i]
		for _, a := range strings.Split(args, ",") {
			a = a[strings.LastIndexAny(a, "./")+1:]
			name += strings.Trim(a, "]*[ ")
		}
	}
	names := typeNames()
	if len(names.byName[name]) > 1 && t.PkgPath() != apiPkg {
		pkg := t.PkgPath()[strings.LastIndexByte(t.PkgPath(), '/')+1:]
		name = strings.ToUpper(pkg[:1]) + pkg[1:] + name
		if names.api[name] {
			name += "Entry"
		}
	}
	return name
}

var apiPkg = reflect.TypeFor[Route]().PkgPath()

// typeNames are the names of the named types the routes' bodies and
// answers are made of: the types of each name, and the API's own.
var typeNames = sync.OnceValue(func() (out struct {
	byName map[string]map[reflect.Type]bool
	api    map[string]bool
}) {
	out.byName, out.api = map[string]map[reflect.Type]bool{}, map[string]bool{}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		if seen[t] {
			return
		}
		seen[t] = true
		if t.Name() != "" && t.PkgPath() != "" {
			if out.byName[t.Name()] == nil {
				out.byName[t.Name()] = map[reflect.Type]bool{}
			}
			out.byName[t.Name()][t] = true
			if t.PkgPath() == apiPkg {
				out.api[t.Name()] = true
			}
		}
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(t.Elem())
		case reflect.Struct:
			for i := range t.NumField() {
				if f := t.Field(i); f.IsExported() {
					walk(f.Type)
				}
			}
		}
	}
	for _, rt := range routes() {
		for _, v := range []any{rt.Body, rt.Response} {
			if v != nil {
				walk(reflect.TypeOf(v))
			}
		}
	}
	return out
})

// ref reflects v's type and returns the schema that refers to it.
func (s *schemas) ref(v any) any {
	sch := s.r.Reflect(v)
	b, err := json.Marshal(sch)
	if err != nil {
		panic(err) // a route's type that cannot be described is a programming error
	}
	b = bytes.ReplaceAll(b, []byte(`"#/$defs/`), []byte(`"#/components/schemas/`))
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	delete(out, "$schema")
	if defs, ok := out["$defs"].(map[string]any); ok {
		for name, d := range defs {
			s.defs[name] = d
		}
		delete(out, "$defs")
	}
	return out
}

// body is the schema of rt's request body: its type's, with rt.Required
// as the type's required fields (a type is the body of routes that
// require the same fields).
func (s *schemas) body(rt Route) any {
	out := s.ref(rt.Body).(map[string]any)
	ref, _ := out["$ref"].(string)
	name := strings.TrimPrefix(ref, "#/components/schemas/")
	if name == "" || name == ref {
		if len(rt.Required) > 0 {
			panic(fmt.Sprintf("api: %s %s requires fields of a body that is not a named type", rt.Method, rt.Path))
		}
		return out
	}
	if prev, ok := s.required[name]; ok && !slices.Equal(prev, rt.Required) {
		panic(fmt.Sprintf("api: %s %s requires %v of %s, another route %v", rt.Method, rt.Path, rt.Required, name, prev))
	}
	s.required[name] = rt.Required
	if len(rt.Required) > 0 {
		s.defs[name].(map[string]any)["required"] = toAny(rt.Required)
	}
	return out
}

// mergeSchemas joins the answers' schemas and the request bodies': a
// request schema that differs from the answer schema of its name is
// renamed NameInput, and so, in turn, is every request schema that refers
// to a renamed one.
func mergeSchemas(resp, req *schemas) (map[string]any, map[string]bool) {
	out := map[string]any{}
	for name, d := range resp.defs {
		out[name] = d
	}
	renamed := map[string]bool{}
	for {
		changed := false
		for name, d := range req.defs {
			if renamed[name] {
				continue
			}
			if a, ok := resp.defs[name]; ok && !reflect.DeepEqual(a, d) {
				renamed[name], changed = true, true
			}
		}
		if !changed {
			break
		}
		// Rewrite the refs to renamed schemas, then compare again: a
		// schema whose child was renamed differs from its answer twin.
		for name, d := range req.defs {
			req.defs[name] = renameRefs(d, renamed)
		}
	}
	for name, d := range req.defs {
		if renamed[name] {
			out[name+inputSuffix] = d
		} else if _, ok := out[name]; !ok {
			out[name] = d
		}
	}
	return out, renamed
}

// renameRefs rewrites in v every $ref to a renamed schema.
func renameRefs(v any, renamed map[string]bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				if name := strings.TrimPrefix(s, "#/components/schemas/"); renamed[name] {
					out[k] = s + inputSuffix
					continue
				}
			}
			out[k] = renameRefs(e, renamed)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = renameRefs(e, renamed)
		}
		return out
	}
	return v
}

func toAny[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// enumOf describes the engine's closed sets of words as enums.
func enumOf(t reflect.Type) *jsonschema.Schema {
	var values []any
	switch t {
	case reflect.TypeFor[lesson.Category]():
		values = toAny(lesson.Categories)
	case reflect.TypeFor[lesson.Trust]():
		values = toAny(lesson.Trusts)
	case reflect.TypeFor[engine.Source]():
		values = toAny(engine.Sources)
	case reflect.TypeFor[fact.Type]():
		values = toAny(fact.Types)
	case reflect.TypeFor[run.Status]():
		values = toAny(run.Statuses)
	default:
		return nil
	}
	return &jsonschema.Schema{Type: "string", Enum: values}
}

// queryEnums are the closed sets of the query parameters of these names
// ("PATH NAME" for one route's own, else "NAME").
var queryEnums = map[string][]any{
	"category":                     toAny(lesson.Categories),
	"trust":                        toAny([]lesson.Trust{lesson.Trusted, lesson.Candidate}),
	"/v1/runs status":              toAny(run.Statuses),
	"/v1/sessions status":          {"completed", "succeeded", "failed"},
	"/v1/sessions/rendered status": {"completed", "succeeded", "failed"},
	"type":                         toAny(fact.Types),
}

func queryEnum(path, name string) []any {
	if e, ok := queryEnums[path+" "+name]; ok {
		return e
	}
	return queryEnums[name]
}

func problemSchemaOf() any {
	r := &jsonschema.Reflector{Anonymous: true, DoNotReference: true}
	b, err := json.Marshal(r.Reflect(problem.Problem{}))
	if err != nil {
		panic(err)
	}
	var out map[string]any
	json.Unmarshal(b, &out)
	delete(out, "$schema")
	out["description"] = "An RFC 9457 problem: detail is the one-line message the CLI prints"
	return out
}

// The error answers, each an application/problem+json Problem.
var problemStatuses = []struct {
	code, name, description string
}{
	{"400", "BadRequest", "bad input: the detail names the problem"},
	{"401", "Unauthorized", "no or a wrong bearer token (TCP listeners)"},
	{"403", "Forbidden", "the token's scope (its namespace or role) does not allow this request"},
	{"404", "NotFound", "no such record, or no such route"},
	{"408", "RequestTimeout", "the request body stalled"},
	{"413", "TooLarge", "the request body is over the route's limit"},
	{"415", "UnsupportedMediaType", "a state-changing request without Content-Type: application/json (or the route's own type)"},
	{"503", "Busy", "the memory lock or the request's deadline ran out: retry (see Retry-After)"},
}

func problemResponses() map[string]any {
	content := map[string]any{problem.ContentType: map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/" + problemSchema}}}
	out := map[string]any{"Error": map[string]any{"description": "an unexpected server error", "content": content}}
	for _, s := range problemStatuses {
		out[s.name] = map[string]any{"description": s.description, "content": content}
	}
	return out
}

// errorResponses are the problem answers rt can give.
func errorResponses(rt Route) map[string]any {
	out := map[string]any{"default": map[string]any{"$ref": "#/components/responses/Error"}}
	for _, s := range problemStatuses {
		switch s.code {
		case "401", "403":
			if public[rt.Method+" "+rt.Path] {
				continue
			}
		case "404":
			if len(pathParams(rt.Path)) == 0 {
				continue
			}
		case "408", "413":
			if rt.Body == nil && rt.BodyType == "" {
				continue
			}
		case "415":
			if rt.Method == "GET" {
				continue
			}
		}
		out[s.code] = map[string]any{"$ref": "#/components/responses/" + s.name}
	}
	return out
}

var pathParam = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([a-z_0-9]+)\}`) })

func pathParams(path string) []string {
	var out []string
	for _, m := range pathParam().FindAllStringSubmatch(path, -1) {
		out = append(out, m[1])
	}
	return out
}

func pathParamDescription(name string) string {
	switch name {
	case "sha256":
		return "the import's SHA-256, as its answer and engine imports list give it"
	case "id":
		return "the record's id"
	}
	return name
}

// operationID is the route's stable operationId (operationIDs), or for a
// route that has none the route as one word: POST /v1/lessons/{id}/use →
// postLessonsIdUse.
func operationID(rt Route) string {
	if id, ok := operationIDs[rt.Method+" "+rt.Path]; ok {
		return id
	}
	id := strings.ToLower(rt.Method)
	for _, part := range strings.FieldsFunc(strings.TrimPrefix(rt.Path, "/v1/"), func(r rune) bool { return r == '/' || r == '.' || r == '{' || r == '}' || r == '_' }) {
		id += strings.ToUpper(part[:1]) + part[1:]
	}
	return id
}

// operationIDs name each operation as a generated client's method: they
// are part of the API and never change.
var operationIDs = map[string]string{
	"GET /v1/tokens":                                "listTokens",
	"POST /v1/tokens":                               "createToken",
	"DELETE /v1/tokens/{id}":                        "revokeToken",
	"POST /v1/namespaces":                           "createNamespace",
	"POST /v1/attribution/facts":                    "attributeFacts",
	"POST /v1/attribution/lessons":                  "attributeLessons",
	"POST /v1/attribution/selectors":                "attributeSelectors",
	"POST /v1/attribution/trajectories":             "attributeTrajectories",
	"GET /v1/context":                               "getContext",
	"GET /v1/export":                                "exportMemory",
	"GET /v1/facts":                                 "listFacts",
	"POST /v1/facts":                                "setFact",
	"POST /v1/facts/observe":                        "observeFact",
	"POST /v1/facts/{id}/edit":                      "editFact",
	"POST /v1/forget":                               "forget",
	"GET /v1/health":                                "getHealth",
	"GET /v1/history/{id}":                          "getHistory",
	"POST /v1/import":                               "importMemory",
	"POST /v1/imports/{sha256}/revert":              "revertImport",
	"POST /v1/learn":                                "learn",
	"GET /v1/lessons":                               "listLessons",
	"POST /v1/lessons":                              "recordLesson",
	"DELETE /v1/lessons/{id}":                       "removeLesson",
	"GET /v1/lessons/{id}":                          "getLesson",
	"POST /v1/lessons/{id}/edit":                    "editLesson",
	"GET /v1/lessons/{id}/history":                  "getLessonHistory",
	"POST /v1/lessons/{id}/retract":                 "retractLesson",
	"POST /v1/lessons/{id}/revert":                  "revertLesson",
	"POST /v1/lessons/{id}/use":                     "useLesson",
	"GET /v1/namespaces":                            "listNamespaces",
	"GET /v1/openapi.json":                          "getOpenAPI",
	"POST /v1/prune":                                "pruneLessons",
	"GET /v1/quarantine/facts":                      "listQuarantinedFacts",
	"POST /v1/quarantine/facts/{id}/approve":        "approveFact",
	"POST /v1/quarantine/facts/{id}/reject":         "rejectFact",
	"GET /v1/quarantine/lessons":                    "listQuarantinedLessons",
	"POST /v1/quarantine/lessons/{id}/approve":      "approveLesson",
	"POST /v1/quarantine/lessons/{id}/reject":       "rejectLesson",
	"GET /v1/quarantine/trajectories":               "listQuarantinedTrajectories",
	"POST /v1/quarantine/trajectories/{id}/approve": "approveTrajectory",
	"POST /v1/quarantine/trajectories/{id}/reject":  "rejectTrajectory",
	"GET /v1/recall/domain":                         "recallDomain",
	"POST /v1/recall/error":                         "recallError",
	"GET /v1/recall/tier1":                          "recallTier1",
	"GET /v1/recall/trajectory":                     "recallTrajectory",
	"POST /v1/retract/{id}":                         "retractRecord",
	"GET /v1/retracted":                             "listRetracted",
	"GET /v1/retracted/lessons":                     "listRetractedLessons",
	"POST /v1/revert":                               "revertRun",
	"POST /v1/revert/{id}":                          "revertRecord",
	"GET /v1/runs":                                  "listRuns",
	"POST /v1/runs":                                 "startRun",
	"GET /v1/runs/{id}":                             "getRun",
	"POST /v1/runs/{id}/complete":                   "completeRun",
	"POST /v1/runs/{id}/fork":                       "forkRun",
	"GET /v1/runs/{id}/plan":                        "getRunPlan",
	"POST /v1/runs/{id}/plan/iterations":            "addPlanIteration",
	"POST /v1/runs/{id}/progress":                   "recordRunProgress",
	"POST /v1/runs/{id}/resume":                     "resumeRun",
	"GET /v1/selectors":                             "listSelectors",
	"POST /v1/selectors":                            "recordSelector",
	"GET /v1/selectors/lookup":                      "lookupSelector",
	"GET /v1/sessions":                              "listSessions",
	"POST /v1/sessions":                             "recordSession",
	"GET /v1/sessions/rendered":                     "renderSessions",
	"POST /v1/stale/lessons":                        "markStaleLessons",
	"POST /v1/stale/trajectories":                   "markStaleTrajectories",
	"GET /v1/trajectories":                          "listTrajectories",
	"POST /v1/trajectories":                         "recordTrajectory",
	"DELETE /v1/trajectories/{id}":                  "removeTrajectory",
	"GET /v1/trajectories/{id}":                     "getTrajectory",
}

// tagList are the document's tags, one per resource, in its order.
var tagList = []struct{ name, description string }{
	{"recall", "What an agent reads while it works: the tips for a prompt, an error, a site, a task"},
	{"context", "One call for everything memory holds for a page and a goal, within a token budget"},
	{"lessons", "Advice learned from failures, in two tiers"},
	{"facts", "Things true of a site: timings, selectors, flows, quirks, with a confidence"},
	{"selectors", "Where an element of a site is, with its successes and failures"},
	{"trajectories", "Recorded successful runs, replayed for similar tasks"},
	{"sessions", "Summaries of past runs"},
	{"runs", "Runs: their manifests, progress, plans and completion"},
	{"quarantine", "Records whose text failed the screen, held until a person approves or rejects them"},
	{"history", "Versions, retractions and reverts of records, runs and imports"},
	{"archive", "Export, import and forget"},
	{"namespaces", "The namespaces of one store"},
	{"tokens", "Bearer tokens scoped to a namespace (or all) and a role: read, write, admin"},
	{"meta", "The API itself: health and this document"},
}

// tagOf is the resource a route's path is about.
func tagOf(path string) string {
	parts := strings.Split(strings.TrimPrefix(path, "/v1/"), "/")
	switch parts[0] {
	case "quarantine":
		return "quarantine"
	case "attribution", "stale", "retracted":
		if len(parts) > 1 {
			if parts[0] == "retracted" {
				return "history"
			}
			return parts[1]
		}
		return "history"
	case "learn", "prune":
		return "lessons"
	case "recall":
		return "recall"
	case "history", "revert", "retract", "imports":
		return "history"
	case "export", "import", "forget":
		return "archive"
	case "health", "openapi.json":
		return "meta"
	}
	return parts[0]
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
