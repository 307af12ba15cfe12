package main

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The engine binary is the small one: none of the agent's libraries (the
// plugin host, the built-in browser and LLM plugins, their SDKs) nor the
// servers' (the MCP SDK, the inspector) is linked into it, so a memory command does not pay for their start-up. A change
// that pulls one back in fails here, not in a benchmark nobody reads.
func TestEngineLeavesOutTheAgent(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/engine-dev/engine/cmd/engine").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps answered %d packages: %s", len(deps), out)
	}
	for _, d := range deps {
		for _, banned := range []string{
			"github.com/engine-dev/engine/plugins/",
			"github.com/engine-dev/engine/engine/agent",
			"github.com/engine-dev/engine/engine/server/mcp",
			"github.com/engine-dev/engine/engine/server/inspect",
			"github.com/modelcontextprotocol/",
			"github.com/engine-dev/engine/cmd/internal/agentcmd",
			"github.com/hashicorp/go-plugin",
			"github.com/chromedp/",
			"github.com/tmc/langchaingo",
			"cloud.google.com/",
			"google.golang.org/grpc",
			"go.etcd.io/", // a command on etcd is engine-agent's (cli.App.OpenStore)
		} {
			if strings.HasPrefix(d, banned) {
				t.Errorf("cmd/engine links %s", d)
			}
		}
	}
}

// engine-agent links etcd's client (kv/etcd) but not its server: the
// embedded etcd (~3 MB) is for tests only (kv/etcd/etcdtest).
func TestAgentLeavesOutTheEtcdServer(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/engine-dev/engine/cmd/engine-agent", "github.com/engine-dev/engine/cmd/engine").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/engine-dev/engine/kv/etcd") {
		t.Fatalf("engine-agent does not link kv/etcd: %d packages", len(deps))
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "go.etcd.io/etcd/server/") || strings.HasPrefix(d, "github.com/engine-dev/engine/kv/etcd/etcdtest") {
			t.Errorf("a binary links %s", d)
		}
	}
}

// Without engine-agent beside it or on PATH, an agent command says what is
// missing and how to get it, with the usual failure status.
func TestAgentCommandWithoutEngineAgent(t *testing.T) {
	cmd := engineCmd(t, t.TempDir(), "run", "--goal", "x", "--url", "http://127.0.0.1:1/")
	cmd.Args[0] = "engine" // the small binary
	for i, v := range cmd.Env {
		if strings.HasPrefix(v, "PATH=") {
			cmd.Env[i] = "PATH=" + t.TempDir()
		}
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v\n%s", err, out)
	}
	want := "engine: engine run: engine-agent (the agent loop and the browser and LLM plugins) is neither beside this engine binary nor on PATH"
	if !strings.HasPrefix(string(out), want) {
		t.Fatalf("got %q, want it to start %q", out, want)
	}
}
