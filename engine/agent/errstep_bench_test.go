package agent

import (
	"context"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
)

// blockedPager is a pager whose every click is covered by the cookie
// banner: each step follows a failure on the page's side, so each memory
// phase asks for the tips for that error (Trigger A).
type blockedPager struct{ *pager }

func (p blockedPager) Act(ctx context.Context, a engine.Action) error {
	p.n++ // a new page each step: the repeat guardrail stays quiet
	return intercepted("div#cookie-banner")
}

// benchErrorSteps runs one run of b.N steps, each after a browser-side
// failure: the step's memory context carries the error tips.
func benchErrorSteps(b *testing.B, mem *api.Client) {
	seedSite(b, mem)
	m := &nextModel{resp: engine.ModelResponse{ToolCalls: []engine.ToolCall{{ID: "c", Name: "click", Arguments: `{"element": "Next"}`}}}}
	cfg := Config{Goal: goal, StartURL: "http://shop.test/", Browser: blockedPager{newPager()}, Model: m, Memory: mem,
		Approve: ApproveAuto, MaxSteps: b.N, MaxErrors: b.N + 1}
	b.ReportAllocs()
	b.ResetTimer()
	res, err := Run(context.Background(), cfg)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if res.Steps != b.N || res.Errors != b.N {
		b.Fatalf("%+v", res)
	}
}

// BenchmarkErrorStepOverhead: steps after an error, memory in process.
func BenchmarkErrorStepOverhead(b *testing.B) { benchErrorSteps(b, memOf(b, openDisk(b))) }

// BenchmarkErrorStepOverheadSocket: the same over a memory server's socket.
func BenchmarkErrorStepOverheadSocket(b *testing.B) { benchErrorSteps(b, socketClient(b)) }
