package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/agent"
	"github.com/engine-dev/engine/engine/demosite"
	"github.com/engine-dev/engine/engine/lesson"
	"github.com/engine-dev/engine/engine/run"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/plugins/host"
	"github.com/engine-dev/engine/plugins/scripted"
)

// clickModel clicks "Accept cookies" then "Search products", again and
// again, calling kill before its second answer.
type clickModel struct {
	n    int
	kill func()
}

func (m *clickModel) Complete(context.Context, engine.ModelRequest) (*engine.ModelResponse, error) {
	m.n++
	if m.n == 2 {
		m.kill()
	}
	name := "Accept cookies"
	if m.n > 1 {
		name = "Search products"
	}
	return &engine.ModelResponse{ToolCalls: []engine.ToolCall{{ID: "c", Name: "click", Arguments: `{"element": "` + name + `"}`}}}, nil
}

// A browser plugin that dies mid-run: the run ends as failed and says why,
// memory stays intact and usable.
func TestAgentBrowserPluginDiesMidRun(t *testing.T) {
	if ok, _ := scriptCondition("chromium"); !ok {
		t.Skip("no chromium")
	}
	ctx := context.Background()
	site, err := demosite.Start(demosite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	b, err := host.OpenBrowser(ctx, "chromedp", host.BrowserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	dir := t.TempDir()
	open := func(ctx context.Context) (kv.Store, error) {
		return kv.Open(ctx, filepath.Join(dir, "db"), kv.Options{GCInterval: -1})
	}
	m := &clickModel{kill: func() {
		if err := syscall.Kill(b.Pid(), syscall.SIGKILL); err != nil {
			t.Error(err)
		}
	}}
	res, err := agent.Run(ctx, agent.Config{Goal: demosite.Goal, StartURL: site.URL, Browser: b, Model: m, OpenDB: open,
		Approve: agent.ApproveAuto, RunsDir: filepath.Join(dir, "runs")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Success || !strings.HasPrefix(res.Reason, agent.ReasonBrowserFailed) || !strings.Contains(res.Reason, "plugin died") {
		t.Fatalf("%+v", res)
	}
	db, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	man, err := run.New(db, run.Options{}).Get(ctx, res.RunID)
	if err != nil || man.Status != run.Failed || man.Reason != res.Reason {
		t.Fatalf("manifest: %+v %v", man, err)
	}
	if ls, err := lesson.New(db, lesson.Options{}).List(ctx, lesson.Filter{}); err != nil || len(ls) != 3 {
		t.Fatalf("lessons after the crash: %d %v", len(ls), err)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "manifest.json")); err != nil {
		t.Fatal(err)
	}
}

// The demo's bundled rules are a valid scripted rules file.
func TestDemoRulesParse(t *testing.T) {
	if _, err := scripted.Parse(demosite.Rules); err != nil {
		t.Fatal(err)
	}
}
