package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/server/mcp"
)

// ServeStdio answers what the SDK's stdio transport would end the session
// on — a line over its length limit, a message whose id is no id — with a
// JSON-RPC error each, and goes on serving the calls after them.
func TestServeStdioBadLines(t *testing.T) {
	ctx := context.Background()
	m, err := memory.Open(ctx, t.TempDir(), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	c := api.Local(api.Handler(m, api.Options{}), api.ClientOptions{})
	defer c.Close()

	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`"` + strings.Repeat("x", sdk.DefaultMaxLineLength) + `"`,
		`{"jsonrpc":"2.0","id":{"not":"an id"},"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := mcp.ServeStdio(ctx, c.Client, mcp.Options{Version: "test"}, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	var got []answer
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var a answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("answer %q: %v", sc.Text(), err)
		}
		got = append(got, a)
	}
	if len(got) != 4 {
		t.Fatalf("%d answers, want 4:\n%s", len(got), out.String())
	}
	if string(got[0].ID) != "1" || got[0].Result == nil {
		t.Errorf("initialize: %+v", got[0])
	}
	if e := got[1].Error; string(got[1].ID) != "null" || e == nil || e.Code != -32600 || !strings.Contains(e.Message, "longer than") {
		t.Errorf("the long line: id %s, %+v", got[1].ID, e)
	}
	if e := got[2].Error; string(got[2].ID) != "null" || e == nil || e.Code != -32600 {
		t.Errorf("the bad id: id %s, %+v", got[2].ID, e)
	}
	if string(got[3].ID) != "2" || !strings.Contains(string(got[3].Result), "memory_tier1") {
		t.Errorf("the call after them: %+v", got[3])
	}
}
