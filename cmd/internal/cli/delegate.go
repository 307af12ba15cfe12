package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"
)

// AgentBinary is the binary that has the agent commands: the engine CLI
// plus the agent loop, the plugin host and the built-in plugins, and the
// memory servers (cmd/engine-agent). The engine binary leaves them out so that every
// memory command starts as a small process; see delegateAgentCommands.
const AgentBinary = "engine-agent"

// AgentCommands are the commands only engine-agent has, with the one line
// `engine --help` shows for each: the agent loop and its plugins, and the
// long-lived servers (serve, mcp), whose start-up cost does not matter and
// whose libraries (the MCP SDK, the inspector) a short command need not
// load. engine-agent's commands use the same
// lines (AgentShort), so both binaries list the same commands alike.
var AgentCommands = []struct{ Name, Short string }{
	{"demo", "Run the same task cold, warm and with replay on the bundled demo site, and show what memory learned"},
	{"eval", "Measure what memory changes: run cases with and without memory, report the difference with confidence intervals"},
	{"doctor", "Check the installation: data dir, schema, lock, chromium, plugins, provider keys"},
	{"mcp", "Serve memory to an MCP host (Claude and other agents) over stdio"},
	{"plugins", "List and check browser and LLM plugins"},
	{"run", "Run a browser agent on a goal, with memory, and learn from the run"},
	{"serve", "Hold the data dir and serve its memory over HTTP (unix socket, and TCP with --listen)"},
}

// AgentShort is the help line of agent command name.
func AgentShort(name string) string {
	for _, c := range AgentCommands {
		if c.Name == name {
			return c.Short
		}
	}
	panic("cli: no agent command " + name)
}

// delegateAgentCommands adds, for each agent command the root lacks, a
// command that runs engine-agent with this process's whole command line
// (the way git runs git-NAME): found next to this executable, else on
// PATH. On unix engine-agent replaces this process, so its exit status,
// signals and terminal are the user's own.
func (a *App) delegateAgentCommands(root *cobra.Command) {
	have := map[string]bool{}
	for _, c := range root.Commands() {
		have[c.Name()] = true
	}
	for _, ac := range AgentCommands {
		if have[ac.Name] {
			continue
		}
		root.AddCommand(&cobra.Command{
			Use:                ac.Name,
			Short:              ac.Short,
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, _ []string) error {
				bin, err := agentBinary()
				if err != nil {
					return fmt.Errorf("engine %s: %w", ac.Name, err)
				}
				return runAgent(bin, a.args, a)
			},
		})
	}
}

// agentBinary finds engine-agent: beside the running executable (bin/engine
// and bin/engine-agent from make build; both from go install), else on PATH.
func agentBinary() (string, error) {
	if exe, err := os.Executable(); err == nil {
		if exe, err := filepath.EvalSymlinks(exe); err == nil {
			p := filepath.Join(filepath.Dir(exe), AgentBinary)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	p, err := exec.LookPath(AgentBinary)
	if err == nil {
		return p, nil
	}
	if !errors.Is(err, exec.ErrNotFound) {
		return "", err
	}
	return "", errors.New(AgentBinary + " (the agent loop and the browser and LLM plugins) is neither beside this engine binary nor on PATH: " +
		"build both with make build (or go install github.com/engine-dev/engine/cmd/engine-agent)")
}
