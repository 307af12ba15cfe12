package loader

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
)

// plugins/examples/rawllm follows plugins/README.md with plain gRPC (no
// go-plugin, no engine packages): the README is enough to write a plugin.
func TestPluginRawGRPCPluginFromTheREADME(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, ExternalPrefix+"rawllm")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/engine-dev/engine/plugins/examples/rawllm").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	opts, logs := testOptions(t, dir)
	ctx := context.Background()
	m, err := OpenModel(ctx, "rawllm:abc", ModelOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(ctx, engine.ModelRequest{Messages: []engine.Message{{Role: "user", Content: "racket"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "abc:tekcar" || resp.Usage != (engine.Usage{PromptTokens: 6, CompletionTokens: 10}) {
		t.Fatalf("resp = %+v", resp)
	}
	pid := m.Pid()
	m.Close()
	waitGone(t, pid)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), `msg=completing`) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if out := logs.String(); !strings.Contains(out, "msg=completing") || !strings.Contains(out, "plugin=rawllm") || !strings.Contains(out, "last=racket") {
		t.Fatalf("logs:\n%s", out)
	}
	_, err = OpenModel(ctx, "rawllm:fail", ModelOptions{Options: opts})
	if err == nil || !strings.Contains(err.Error(), `rawllm: model "fail" does not exist`) {
		t.Fatalf("Open error: %v", err)
	}
	infos, err := List(ctx, ListOptions{Options: opts, Describe: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range infos {
		if i.Name == "rawllm" && (i.Kind != "llm" || i.Version != "0.1.0" || i.Error != "") {
			t.Fatalf("listed as %+v", i)
		}
	}
	// Started by hand, it says what it is.
	out, err := exec.Command(bin).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "engine plugin") {
		t.Fatalf("by hand: %v %s", err, out)
	}
	_ = os.Remove(bin)
}
