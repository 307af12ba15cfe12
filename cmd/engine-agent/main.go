// Command engine-agent is the engine CLI with the agent loop and the
// servers: every engine command, plus run, demo, doctor, plugins, serve and
// mcp, and the built-in browser and LLM plugins it serves to itself as
// subprocesses. `engine run ...` runs `engine-agent run ...`.
package main

import (
	"os"

	"github.com/engine-dev/engine/cmd/internal/agentcmd"
	"github.com/engine-dev/engine/cmd/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, agentcmd.Commands))
}
