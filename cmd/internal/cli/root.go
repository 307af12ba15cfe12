package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory"
)

// App holds what every command shares: the standard streams and the global
// flags. There are no package-level globals; tests run Main many times in
// one process.
type App struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer

	DataDir    string // --data-dir, ENGINE_DATA_DIR, or the default
	eventsPath string // --events: append memory events here as JSONL
	store      string // --store: the shared store's URL (StoreURL)

	// OpenStore opens a shared store from its URL (etcd://...); engine-agent
	// sets it (agentcmd, sharedstore.Opener), and without it a command on a
	// shared store is handed to engine-agent.
	OpenStore memory.SharedOpener
	namespace string // --namespace, else ENGINE_NAMESPACE

	args []string // the command line, for handing a command to engine-agent
	// only is the memory command the command line names (named), "" for
	// any other: only its set is built.
	only string
}

func (a *App) rootCommand(extra []CommandSet) *cobra.Command {
	root := &cobra.Command{
		Use:   "engine",
		Short: "Memory that lets LLM browser agents learn across runs",
		Long: `engine remembers, per web domain, what a browser agent learned: lessons
(failure -> recovery patterns in two tiers), facts, selectors, trajectories,
sessions and runs. It keeps them in an embedded database in the data dir.

Environment:
  ENGINE_DATA_DIR   data dir when --data-dir is not given
                    (default: $XDG_DATA_HOME/engine or ~/.local/share/engine)
  ENGINE_STORE      shared store when --store is not given (etcd://HOST:PORT,...;
                    ENGINE_ETCD_USER, ENGINE_ETCD_PASSWORD, and for etcds://
                    ENGINE_ETCD_CA, ENGINE_ETCD_CERT, ENGINE_ETCD_KEY)
  ENGINE_NAMESPACE  namespace when --namespace is not given
  ENGINE_TIMEOUT    how long a memory server may stay silent on a request
                    before the command fails naming it (a duration; default 30s)
  ENGINE_NOW        fix the clock to a date (2026-03-12) or an RFC 3339 time`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return engine.MarkInvalid(err)
	})
	pf := root.PersistentFlags()
	pf.StringVar(&a.DataDir, "data-dir", "", "where memory lives (env ENGINE_DATA_DIR)")
	pf.StringVar(&a.eventsPath, "events", "", "append the memory events this command causes to `FILE` as JSONL")
	pf.StringVar(&a.store, "store", "", "keep memory in the shared store at `URL` (etcd://HOST:PORT[,HOST:PORT...]) instead of the data dir (env ENGINE_STORE)")
	root.PersistentPreRunE = a.checkStore
	pf.StringVar(&a.namespace, "namespace", "", "use the memory of namespace `NAME` (- is the default; env ENGINE_NAMESPACE)")

	only := a.named(pf)
	a.only = only
	for _, set := range commandSets {
		if only == "" || slices.Contains(set.names, only) {
			root.AddCommand(set.make(a)...)
		}
	}
	for _, add := range extra {
		root.AddCommand(add(a)...)
	}
	if only == "" {
		a.delegateAgentCommands(root)
	} else {
		// The command line names its command, so it is neither an agent
		// command nor `engine completion` (which build every command):
		// no agent command stubs, and not cobra's completion command
		// (four subcommands and their help).
		root.CompletionOptions.DisableDefaultCmd = true
	}
	strictUsage(root)
	a.addCompletions(root)
	return root
}

// A commandSet is one file's top-level commands: their names and the
// constructor that makes them (with their subcommands).
type commandSet struct {
	names []string
	make  CommandSet
}

// commandSets lists the top-level commands, one entry a file, so each file
// registers its own commands in an init (register).
var commandSets []commandSet

// register adds top-level commands (one each, but for commands that must
// be built together); names are their names, so a command line that names
// one builds only that set (TestCommandSetNames
// holds them to what make builds).
func register(names []string, make CommandSet) {
	commandSets = append(commandSets, commandSet{names: names, make: make})
}

// named returns the top-level command the command line names, when a
// commandSet declares it, so rootCommand builds that set alone: building
// every command's tree (flags, subcommands, usage wrappers) is ~5 % of a
// short command's CPU. It returns "" — build every command — for no
// command, help, completion, an agent command, a name no set declares (so
// that cobra's suggestions see them all) or a command line it does not
// follow; pf holds the persistent flags, whose values it skips.
func (a *App) named(pf *pflag.FlagSet) string {
	for i := 0; i < len(a.args); i++ {
		s := a.args[i]
		switch {
		case strings.HasPrefix(s, "--") && len(s) > 2:
			name, _, hasValue := strings.Cut(s[2:], "=")
			f := pf.Lookup(name)
			if f == nil || f.NoOptDefVal != "" {
				return "" // not a persistent flag taking a value: cobra decides
			}
			if !hasValue {
				i++ // --data-dir DIR: DIR is the flag's
			}
		case strings.HasPrefix(s, "-"):
			return "" // -h, --, -: cobra decides
		default:
			for _, set := range commandSets {
				if slices.Contains(set.names, s) {
					return s
				}
			}
			return ""
		}
	}
	return ""
}

// resolveDataDir returns the data dir: the flag, then ENGINE_DATA_DIR, then
// $XDG_DATA_HOME/engine, then ~/.local/share/engine.
func (a *App) ResolveDataDir() (string, error) {
	if a.DataDir != "" {
		return a.DataDir, nil
	}
	if d := os.Getenv("ENGINE_DATA_DIR"); d != "" {
		return d, nil
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "engine"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no data dir: set --data-dir or ENGINE_DATA_DIR (%v)", err)
	}
	return filepath.Join(home, ".local", "share", "engine"), nil
}

// Namespace returns the namespace commands use: --namespace, then
// ENGINE_NAMESPACE; "" is the default (a server's own), "-" the default
// namespace by name. A name outside the rule is bad input.
func (a *App) Namespace() (string, error) {
	name, from := a.namespace, "--namespace"
	if name == "" {
		name, from = os.Getenv("ENGINE_NAMESPACE"), "ENGINE_NAMESPACE"
	}
	if err := memory.CheckNamespace(name); err != nil {
		return "", Usagef("%s: %q: a namespace name is %s", from, name, memory.NamespaceRule)
	}
	return name, nil
}

// RunsDir is where the runs of namespace ns keep their folders in dataDir:
// <data-dir>/runs for the default ("" or "-"), <data-dir>/ns/<name>/runs
// for a named one, so two namespaces' runs never share a folder.
func RunsDir(dataDir, ns string) string {
	if ns == "" || ns == memory.DefaultNamespace {
		return filepath.Join(dataDir, "runs")
	}
	return filepath.Join(dataDir, "ns", ns, "runs")
}

// now returns the clock: ENGINE_NOW when set, else the system time.
func (a *App) Now() (func() time.Time, error) {
	v := os.Getenv("ENGINE_NOW")
	if v == "" {
		return time.Now, nil
	}
	t, err := parseTime(v)
	if err != nil {
		return nil, Usagef("ENGINE_NOW: %v", err)
	}
	return func() time.Time { return t }, nil
}

// parseTime accepts a date (2026-03-12) or an RFC 3339 time.
func parseTime(v string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a date (2006-01-02) nor an RFC 3339 time", v)
	}
	return t, nil
}
