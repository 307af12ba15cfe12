package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"github.com/engine-dev/engine/engine"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolFunc is a tool: its typed input in, the text a model reads and the
// structured answer out.
type toolFunc[In, Out any] func(ctx context.Context, in In) (string, Out, error)

// addTool registers h as tool t with input and output schemas inferred
// from In and Out (edit lets a tool refine its input schema). It is the
// SDK's generic AddTool less one step: the answer is not validated
// against its own schema, which it matches by construction (it is Out,
// marshalled); that validation decoded and walked every answer again and
// cost about a tenth of a recall's round trip. The input is validated as
// the SDK does, and an error from h is a tool error (IsError) carrying
// its message.
func addTool[In, Out any](s *sdk.Server, t *sdk.Tool, edit func(*jsonschema.Schema), h toolFunc[In, Out]) {
	in := schemaFor[In]()
	if edit != nil {
		edit(in)
	}
	resolved, err := in.Resolve(nil)
	if err != nil {
		panic(fmt.Errorf("tool %s: input schema: %w", t.Name, err)) // static types: every test fails
	}
	t.InputSchema, t.OutputSchema = in, schemaFor[Out]()
	s.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		v, err := decodeInput[In](req.Params.Arguments, resolved)
		if err != nil {
			return toolError(err), nil
		}
		text, out, err := h(WithSession(withClient(ctx, req.ClientInfo()), req.Session), v)
		if err != nil {
			return toolError(err), nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: out}, nil
	})
}

// AddTool registers h as tool t on s as the memory tools are: input
// and output schemas inferred from In and Out, the input validated, an
// error from h a tool error (IsError) carrying its message. h finds the
// MCP client's name with ClientName and its session with SessionOf.
func AddTool[In, Out any](s *sdk.Server, t *sdk.Tool, h func(ctx context.Context, in In) (string, Out, error)) {
	addTool(s, t, nil, h)
}

// schemaFor is the JSON Schema of T (of what it points to, for a pointer).
func schemaFor[T any]() *jsonschema.Schema {
	rt := reflect.TypeFor[T]()
	for rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	s, err := jsonschema.ForType(rt, nil)
	if err != nil {
		panic(fmt.Errorf("schema of %v: %w", rt, err))
	}
	return s
}

// decodeInput checks a call's arguments against the input schema and
// decodes them.
func decodeInput[In any](args json.RawMessage, resolved *jsonschema.Resolved) (In, error) {
	var in In
	if len(bytes.TrimSpace(args)) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return in, fmt.Errorf("arguments: %w", err)
	}
	if err := resolved.Validate(m); err != nil {
		return in, fmt.Errorf("validating \"arguments\": %w", err)
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return in, fmt.Errorf("arguments: %w", err)
	}
	return in, nil
}

func toolError(err error) *sdk.CallToolResult {
	var r sdk.CallToolResult
	r.SetError(err)
	return &r
}

type clientKey struct{}

// withClient keeps the MCP client's name (from its initialize info) in
// ctx, for the provenance of what its tool calls write.
func withClient(ctx context.Context, ci *sdk.Implementation) context.Context {
	if ci == nil || ci.Name == "" {
		return ctx
	}
	name := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, ci.Name)
	if len(name) > engine.MaxProvenanceField {
		name = strings.ToValidUTF8(name[:engine.MaxProvenanceField], "")
	}
	return context.WithValue(ctx, clientKey{}, name)
}

type sessionKey struct{}

// WithSession keeps the MCP session of a tool call in ctx, for SessionOf
// (AddTool's tools get it kept).
func WithSession(ctx context.Context, ss *sdk.ServerSession) context.Context {
	if ss == nil {
		return ctx
	}
	return context.WithValue(ctx, sessionKey{}, ss)
}

// SessionOf is the MCP session a tool call came in, nil for none.
func SessionOf(ctx context.Context) *sdk.ServerSession {
	ss, _ := ctx.Value(sessionKey{}).(*sdk.ServerSession)
	return ss
}

// ClientName is the MCP client's name (from its initialize info) a tool
// call came from, or "".
func ClientName(ctx context.Context) string { return clientName(ctx) }

// clientName is the MCP client's name withClient kept, or "".
func clientName(ctx context.Context) string {
	name, _ := ctx.Value(clientKey{}).(string)
	return name
}
