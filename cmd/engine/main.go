// Command engine is the memory that lets LLM browser agents learn across
// runs: its short memory commands (query, recall, lessons, import, ...).
// The agent and server commands (run, demo, doctor, plugins, serve, mcp) are
// engine-agent's; engine hands them over, so a memory command starts as a
// small process.
package main

import (
	"os"

	"github.com/engine-dev/engine/cmd/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
