package agentcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/engine-dev/engine/cmd/internal/cli"
)

// MCPHosts are the MCP hosts engine mcp --print-config writes a
// configuration for, each with what to do with it (JSONWhere: with --json).
var MCPHosts = []struct{ Name, Where, JSONWhere string }{
	{"claude-desktop", "paste it into claude_desktop_config.json (Settings > Developer > Edit Config)", ""},
	{"claude-code", "run it in a terminal: it adds the server to Claude Code for every project", "paste it into .mcp.json at a project's root"},
	{"cursor", "paste it into ~/.cursor/mcp.json, or .cursor/mcp.json in a project", ""},
	{"vscode", "paste it into .vscode/mcp.json in a workspace, or the user mcp.json (MCP: Open User Configuration)", ""},
}

// mcpWhere is what to do with host's configuration, for the line on
// stderr.
func mcpWhere(host string, asJSON bool) string {
	for _, h := range MCPHosts {
		if h.Name == host {
			if asJSON && h.JSONWhere != "" {
				return h.JSONWhere
			}
			return h.Where
		}
	}
	return ""
}

// mcpHostNames is the hosts' names, for messages and completion.
func mcpHostNames() []string {
	names := make([]string, len(MCPHosts))
	for i, h := range MCPHosts {
		names[i] = h.Name
	}
	return names
}

// mcpServer is one server of an MCP host's configuration, in the field
// order the hosts document.
type mcpServer struct {
	Type    string            `json:"type,omitempty"` // VS Code's: stdio
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// mcpLaunch is how a host starts this engine mcp: the server's name, the
// absolute path of the engine binary, its arguments and environment.
type mcpLaunch struct {
	name    string
	command string
	args    []string
	env     map[string]string
}

// printMCPConfig writes host's configuration for l to w: JSON for the
// hosts that read a file, the claude mcp add command line for Claude Code
// (its JSON form, .mcp.json's, with asJSON).
func printMCPConfig(w io.Writer, host string, asJSON bool, l mcpLaunch) error {
	s := mcpServer{Command: l.command, Args: l.args, Env: l.env}
	var conf any
	switch host {
	case "claude-desktop", "cursor":
		conf = map[string]any{"mcpServers": map[string]mcpServer{l.name: s}}
	case "claude-code":
		if !asJSON {
			_, err := fmt.Fprintln(w, claudeMCPAdd(l))
			return err
		}
		conf = map[string]any{"mcpServers": map[string]mcpServer{l.name: s}}
	case "vscode":
		s.Type = "stdio"
		conf = map[string]any{"servers": map[string]mcpServer{l.name: s}}
	default:
		return fmt.Errorf("no MCP host %q", host)
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// claudeMCPAdd is the command line that adds l to Claude Code for every
// project of the user: options, then the name, then -- and the server's
// own command line, as claude mcp add documents.
func claudeMCPAdd(l mcpLaunch) string {
	words := []string{"claude", "mcp", "add", "--transport", "stdio", "--scope", "user"}
	keys := make([]string, 0, len(l.env))
	for k := range l.env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		words = append(words, "--env", shellQuote(k+"="+l.env[k]))
	}
	words = append(words, l.name, "--", shellQuote(l.command))
	for _, a := range l.args {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and the punctuation paths and flags use.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// mcpLaunchOf is how a host starts this command: the engine binary's
// absolute path (symlinks resolved; engine beside engine-agent when engine
// handed the command over, as it does), mcp with the flags given to it but
// --print-config and --json (--browser first), and the memory it reaches as environment:
// ENGINE_SERVER, else ENGINE_STORE or the data dir's absolute path, and
// the namespace when one is chosen.
func (a *app) mcpLaunchOf(fl *pflag.FlagSet) (mcpLaunch, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return mcpLaunch{}, fmt.Errorf("the path of this executable: %w", err)
	}
	if filepath.Base(exe) == cli.AgentBinary {
		if p := filepath.Join(filepath.Dir(exe), "engine"); isExecutable(p) {
			exe = p
		}
	}
	l := mcpLaunch{name: "engine", command: exe, args: []string{"mcp"}, env: map[string]string{}}
	if f := fl.Lookup("browser"); f != nil && f.Changed {
		l.name = "engine-browser"
		l.args = append(l.args, "--browser", f.Value.String())
	}
	fl.VisitAll(func(f *pflag.Flag) {
		switch {
		case !f.Changed || f.Name == "print-config" || f.Name == "json" || f.Name == "browser":
		case f.Value.Type() == "bool":
			if f.Value.String() == "true" {
				l.args = append(l.args, "--"+f.Name)
			} else {
				l.args = append(l.args, "--"+f.Name+"=false")
			}
		default:
			l.args = append(l.args, "--"+f.Name, f.Value.String())
		}
	})
	ns, err := a.Namespace()
	if err != nil {
		return mcpLaunch{}, err
	}
	if ns != "" {
		l.env["ENGINE_NAMESPACE"] = ns
	}
	switch {
	case os.Getenv("ENGINE_SERVER") != "":
		l.env["ENGINE_SERVER"] = os.Getenv("ENGINE_SERVER")
		fmt.Fprintln(a.Stderr, "engine: add ENGINE_TOKEN (the server's token) to the server's env: it is not printed")
	case a.StoreURL() != "":
		l.env["ENGINE_STORE"] = a.StoreURL()
	default:
		dir, err := a.ResolveDataDir()
		if err == nil {
			dir, err = filepath.Abs(dir)
		}
		if err != nil {
			return mcpLaunch{}, err
		}
		l.env["ENGINE_DATA_DIR"] = dir
	}
	return l, nil
}

// isExecutable reports whether p is a file someone may execute.
func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// addPrintConfigFlags registers --print-config (with its hosts completed)
// and --json on engine mcp.
func addPrintConfigFlags(c *cobra.Command, host *string, asJSON *bool) {
	var where []string
	for _, h := range MCPHosts {
		where = append(where, h.Name)
	}
	c.Flags().StringVar(host, "print-config", "", "print the configuration that makes MCP host `HOST` start this command ("+strings.Join(where, ", ")+"), with this binary's absolute path, and exit")
	c.Flags().BoolVar(asJSON, "json", false, "with --print-config claude-code: print the .mcp.json form instead of the claude mcp add command")
	_ = c.RegisterFlagCompletionFunc("print-config", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return mcpHostNames(), cobra.ShellCompDirectiveNoFileComp
	})
}
