// Package agentcmd holds the commands only engine-agent has: run, demo,
// doctor and plugins (and the hidden command that serves a built-in
// plugin), which need the agent loop, the plugin host and the built-in
// browser and LLM plugins; and the long-lived servers serve and mcp (the
// MCP SDK, the inspector). Their libraries (chromedp, langchaingo and the
// provider SDKs above all) cost every process that links them milliseconds
// of start-up; the engine binary leaves them out (package cli, delegate.go).
package agentcmd

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/cmd/internal/cli"
	"github.com/engine-dev/engine/engine/memory/sharedstore"
)

// app is the CLI's shared state, with this package's commands as methods.
type app struct{ *cli.App }

// commandSets lists this package's command constructors, one entry a file.
var commandSets []func(*app) []*cobra.Command

// Commands makes the agent commands; engine-agent passes it to cli.Main.
func Commands(a *cli.App) []*cobra.Command {
	a.OpenStore = sharedstore.Opener(os.Getenv)
	var out []*cobra.Command
	for _, add := range commandSets {
		out = append(out, add(&app{a})...)
	}
	return out
}
