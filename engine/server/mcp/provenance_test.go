package mcp_test

import (
	"context"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/server/mcp/mcptest"
)

// What an MCP client writes says it came over the API, from that client.
func TestWritesNameTheClient(t *testing.T) {
	ctx := context.Background()
	cs, c, _ := connect(t)
	mcptest.OK(t, ctx, cs, "memory_observe_fact", map[string]any{"domain": "shop.example", "type": "timing", "key": "search", "value": "results take 3s"}, "")
	l, err := c.Facts(ctx, "shop.example", false)
	if err != nil || len(l.Facts) != 1 {
		t.Fatalf("facts: %+v, %v", l, err)
	}
	if p := l.Facts[0].Provenance; p.Source != engine.SourceAPI || p.Model != "test" || p.Site != "shop.example" {
		t.Fatalf("provenance %+v, want source api, model test", p)
	}
}
