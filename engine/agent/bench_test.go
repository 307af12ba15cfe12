package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv"
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
// phase (attribution, manifest update, memory context with session
// history, reference trajectory, selectors, facts), the step message, the
// guardrails, the action log.
func benchSteps(b *testing.B, open func(context.Context) (kv.Store, error)) {
	ctx := context.Background()
	// Memory as a few runs leave it for the site.
	seed, err := open(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		cfg := Config{Goal: goal, StartURL: "http://shop.test/", Browser: newShop(), Model: &fakeModel{p: naive}, OpenDB: Shared(seed), Approve: ApproveAuto}
		if _, err := Run(ctx, cfg); err != nil {
			b.Fatal(err)
		}
	}
	seed.Close()
	m := &nextModel{resp: engine.ModelResponse{ToolCalls: []engine.ToolCall{{ID: "c", Name: "click", Arguments: `{"element": "Next"}`}}, Usage: engine.Usage{PromptTokens: 900, CompletionTokens: 10}}}
	cfg := Config{Goal: goal, StartURL: "http://shop.test/", Browser: newPager(), Model: m, OpenDB: open,
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

// BenchmarkStepOverhead: the database held open by the caller (the
// engine's memory work itself).
func BenchmarkStepOverhead(b *testing.B) {
	db, err := kv.Open(context.Background(), b.TempDir(), kv.Options{GCInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	benchSteps(b, Shared(db))
}

// BenchmarkStepOverheadReopen: as engine run does it, the on-disk database
// opened and closed in every memory phase so other processes can use it
// between phases.
func BenchmarkStepOverheadReopen(b *testing.B) {
	dir := b.TempDir()
	benchSteps(b, func(ctx context.Context) (kv.Store, error) {
		return kv.Open(ctx, dir, kv.Options{GCInterval: -1})
	})
}
