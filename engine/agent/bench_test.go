package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/server/attach"
)

// pager is a browser with no cost: every click on "Next" loads the next
// page of shop.test, a page of 40 elements and 1 KB of text.
type pager struct {
	n    int
	elts []engine.Element
	text string
}

func newPager() *pager {
	p := &pager{text: strings.Repeat("Padel rackets and balls for every court. ", 25)}
	for i := 0; i < 39; i++ {
		p.elts = append(p.elts, engine.Element{Ref: fmt.Sprintf("e%d", i+2), Role: "link", Name: fmt.Sprintf("Product %d", i)})
	}
	p.elts = append(p.elts, engine.Element{Ref: "e1", Role: "button", Name: "Next"})
	return p
}

func (p *pager) Navigate(context.Context, string) error { return nil }
func (p *pager) Snapshot(context.Context) (*engine.Snapshot, error) {
	return &engine.Snapshot{URL: fmt.Sprintf("http://shop.test/list?page=%d", p.n), Title: "Products", Elements: p.elts,
		Tree: fmt.Sprintf("page %d", p.n), Text: p.text}, nil
}
func (p *pager) Act(context.Context, engine.Action) error   { p.n++; return nil }
func (p *pager) Screenshot(context.Context) ([]byte, error) { return []byte("png"), nil }
func (p *pager) Close() error                               { return nil }

// nextModel always clicks Next, at no cost.
type nextModel struct{ resp engine.ModelResponse }

func (m *nextModel) Complete(context.Context, engine.ModelRequest) (*engine.ModelResponse, error) {
	r := m.resp
	return &r, nil
}

// benchSteps runs one run of b.N steps; the engine's own work per step is
// everything but the (free) browser and model: interpretation, the memory
// requests (attribution, manifest update, memory context with session
// history, reference trajectory, selectors, facts), the step message, the
// guardrails, the action log.
func benchSteps(b *testing.B, mem *api.Client) {
	ctx := context.Background()
	seedSite(b, mem)
	m := &nextModel{resp: engine.ModelResponse{ToolCalls: []engine.ToolCall{{ID: "c", Name: "click", Arguments: `{"element": "Next"}`}}, Usage: engine.Usage{PromptTokens: 900, CompletionTokens: 10}}}
	cfg := Config{Goal: goal, StartURL: "http://shop.test/", Browser: newPager(), Model: m, Memory: mem,
		Approve: ApproveAuto, MaxSteps: b.N, MaxErrors: 1, RunsDir: b.TempDir()}
	b.ReportAllocs()
	b.ResetTimer()
	res, err := Run(ctx, cfg)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if res.Steps != b.N || res.Errors != 0 {
		b.Fatalf("%+v", res)
	}
}

// seedSite leaves memory as a few runs leave it for the site.
func seedSite(b *testing.B, mem *api.Client) {
	for i := 0; i < 3; i++ {
		cfg := Config{Goal: goal, StartURL: "http://shop.test/", Browser: newShop(), Model: &fakeModel{p: naive}, Memory: mem, Approve: ApproveAuto}
		if _, err := Run(context.Background(), cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStepOverhead: engine run holding the data dir itself, reaching
// memory through the API in its own process (api.Local).
func BenchmarkStepOverhead(b *testing.B) {
	benchSteps(b, memOf(b, openDisk(b)))
}

// BenchmarkStepOverheadSocket: engine run as the client of a memory server
// over the server's unix socket.
func BenchmarkStepOverheadSocket(b *testing.B) {
	benchSteps(b, socketClient(b))
}

// socketClient holds a memory on disk and serves it on its unix socket, as
// a running engine run does, and returns a client that reaches it through
// the socket, as a second run does.
func socketClient(b *testing.B) *api.Client {
	ctx := context.Background()
	dir := b.TempDir()
	holder, err := attach.Open(ctx, dir, attach.Options{Serve: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { holder.Close() })
	client, err := attach.Open(ctx, dir, attach.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Close() })
	if !strings.HasPrefix(client.Where(), "served by") {
		b.Fatalf("the client is %s, not served over the socket", client.Where())
	}
	return client.Client
}

// BenchmarkStepOverheadFlat runs 2,000-step runs and reports the mean cost
// of steps 2–11 and of the last ten (ns/step@10, ns/step@2000): the cost
// of a step must not grow with the run (the data dir reopened per step made
// it grow from ~20 ms to 110–150 ms).
func BenchmarkStepOverheadFlat(b *testing.B) {
	const steps = 2000
	mem := memOf(b, openDisk(b))
	seedSite(b, mem)
	var early, late time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var at []time.Time
		m := &nextModel{resp: engine.ModelResponse{ToolCalls: []engine.ToolCall{{ID: "c", Name: "click", Arguments: `{"element": "Next"}`}}}}
		cfg := Config{Goal: goal, StartURL: "http://shop.test/", Browser: newPager(), Model: m, Memory: mem,
			Approve: ApproveAuto, MaxSteps: steps, MaxErrors: 1,
			OnStep: func(StepInfo) { at = append(at, time.Now()) }}
		res, err := Run(context.Background(), cfg)
		if err != nil || res.Steps != steps {
			b.Fatalf("%+v, %v", res, err)
		}
		early += at[11].Sub(at[1])
		late += at[steps-1].Sub(at[steps-11])
	}
	n := time.Duration(b.N)
	b.ReportMetric(float64(early/n/10), "ns/step@10")
	b.ReportMetric(float64(late/n/10), "ns/step@2000")
}
