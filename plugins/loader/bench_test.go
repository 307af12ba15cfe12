package loader

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

// Benchmarks of the plugin boundary. Targets: a small call
// ≤ 250 µs, start to first call ≤ 20 ms (without a browser's own start).
//
//	go test -run '^$' -bench Plugin -benchtime 2s ./plugins/loader/

func benchOpts(b *testing.B) Options {
	return Options{NoPath: true}
}

// BenchmarkPluginSmallCall: one Act that the plugin answers at once
// (the static browser, scroll with no ref), through the whole host stack.
func BenchmarkPluginSmallCall(b *testing.B) {
	ctx := context.Background()
	br, err := OpenBrowser(ctx, "static", BrowserOptions{Options: benchOpts(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	a := engine.Action{Kind: engine.ActScroll, Value: "down"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := br.Act(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPluginSmallCompletion: one scripted model call with a short
// conversation.
func BenchmarkPluginSmallCompletion(b *testing.B) {
	ctx := context.Background()
	rules := filepath.Join(b.TempDir(), "rules.json")
	os.WriteFile(rules, []byte(`{"rules":[{"tool_calls":[{"name":"click","arguments":{"ref":"e12"}}]}]}`), 0o644)
	m, err := OpenModel(ctx, "scripted", ModelOptions{Options: benchOpts(b), RulesFile: rules})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	req := engine.ModelRequest{System: "You drive a browser.", Messages: []engine.Message{{Role: "user", Content: "Buy a padel racket."}}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Complete(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// bigPage has n rows, each with a link, a text field, a button and text.
func bigPage(n int) string {
	var sb strings.Builder
	sb.WriteString("<!doctype html><title>Catalogue</title><h1>Catalogue</h1><form>")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, `<div class="row"><a href="/p/%d">Product number %d, a padel racket</a>
<input aria-label="Quantity %d" value="1"><button type="button">Add %d to cart</button>
<p>Carbon frame, 360 g, balance medium. Ships in 2 days. Item %d.</p></div>`, i, i, i, i, i)
	}
	sb.WriteString("</form>")
	return sb.String()
}

func benchSnapshot(b *testing.B, name string, rows int) {
	if name == "chromedp" {
		if _, err := exec.LookPath("chromium"); err != nil {
			b.Skip("no chromium")
		}
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, bigPage(rows))
	}))
	defer ts.Close()
	ctx := context.Background()
	br, err := OpenBrowser(ctx, name, BrowserOptions{Options: benchOpts(b), MaxTreeBytes: 1 << 20, MaxTextBytes: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	if err := br.Navigate(ctx, ts.URL); err != nil {
		b.Fatal(err)
	}
	s, err := br.Snapshot(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := br.Snapshot(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(s.Elements)), "elements")
	b.ReportMetric(float64(len(s.Tree)+len(s.Text))/1024, "KiB")
}

// BenchmarkPluginSnapshot: a whole-page snapshot in one call. static shows
// the transport's share (the parse is cheap); chromedp adds chromium's
// accessibility tree.
func BenchmarkPluginSnapshot(b *testing.B) {
	for _, name := range []string{"static", "chromedp"} {
		for _, rows := range []int{25, 250} {
			b.Run(fmt.Sprintf("%s/rows=%d", name, rows), func(b *testing.B) { benchSnapshot(b, name, rows) })
		}
	}
}

// BenchmarkPluginStartup: start the plugin process, handshake, Describe and
// Open (the first call), then stop it. The plugin is this test binary.
func BenchmarkPluginStartup(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		br, err := OpenBrowser(ctx, "static", BrowserOptions{Options: benchOpts(b)})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		br.Close()
		b.StartTimer()
	}
}

// BenchmarkPluginStartupEngineBinary is the same with the real engine-agent
// binary (built once here) serving its built-in plugin.
func BenchmarkPluginStartupEngineBinary(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "engine-agent")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/engine-dev/engine/cmd/engine-agent")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Skipf("building the engine: %v\n%s", err, out)
	}
	o := benchOpts(b)
	o.Self = bin
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		br, err := OpenBrowser(ctx, "static", BrowserOptions{Options: o})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		br.Close()
		b.StartTimer()
	}
}
