package agentcmd

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/cmd/internal/cli"
	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/plugins/builtin"
	"github.com/engine-dev/engine/plugins/loader"
)

// Plugin commands: `engine plugins list`, `engine plugins check`, and the
// hidden `engine __plugin KIND NAME` that the engine runs to serve its own
// built-in plugins as subprocesses (see plugins/loader).

func init() {
	commandSets = append(commandSets, func(a *app) []*cobra.Command {
		return []*cobra.Command{a.pluginsCommand(), servePluginCommand()}
	})
}

// pluginLogger is where plugin logs go: stderr, as text, at the level of
// ENGINE_LOG_LEVEL (debug, info, warn, error; default warn).
func pluginLogger(w io.Writer) *slog.Logger {
	level := slog.LevelWarn
	if v := os.Getenv("ENGINE_LOG_LEVEL"); v != "" {
		_ = level.UnmarshalText([]byte(v))
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

func servePluginCommand() *cobra.Command {
	return &cobra.Command{
		Use:                builtin.Command + " KIND NAME",
		Short:              "Serve a built-in plugin (the engine runs this itself)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := builtin.Main(args); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
}

func (a *app) pluginsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: cli.AgentShort("plugins"),
		Long: `Browsers and LLM providers are plugins: subprocesses the engine talks to
over gRPC. Built-in plugins ship inside the engine binary; external plugins
are executables named engine-plugin-NAME in $ENGINE_PLUGIN_DIR or on PATH.

Environment:
  ENGINE_PLUGIN_DIR        directory searched first for external plugins
  ENGINE_PLUGIN_CHECKSUMS  sha256sum-style file pinning external plugins
  ENGINE_CHROMIUM          chromium binary for the chromedp browser
  ENGINE_LLM_RULES         rules file of the scripted LLM provider
  ENGINE_LOG_LEVEL         plugin log level on stderr (default warn)`,
	}
	cmd.AddCommand(a.pluginsListCommand(), a.pluginsCheckCommand())
	return cmd
}

func (a *app) pluginsListCommand() *cobra.Command {
	var asJSON, describe bool
	cmd := &cobra.Command{
		Use:   "list [--describe]",
		Short: "Show the available plugins: kind, name, version, source",
		Long: `Show the built-in plugins and the external ones (engine-plugin-NAME in
$ENGINE_PLUGIN_DIR, then on PATH). An external plugin is run to ask its kind
and version only when $ENGINE_PLUGIN_CHECKSUMS pins it, or with --describe;
otherwise it is listed by its file, so listing never runs an unknown program.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			infos, err := loader.List(cmd.Context(), loader.ListOptions{Options: loader.Options{Logger: pluginLogger(a.Stderr)}, Describe: describe})
			if err != nil {
				return err
			}
			if asJSON {
				if infos == nil {
					infos = []loader.Info{}
				}
				return cli.PrintJSON(a.Stdout, infos)
			}
			t := cli.NewTable(a.Stdout, "KIND", "NAME", "VERSION", "SOURCE", "DESCRIPTION")
			for _, i := range infos {
				kind, version, desc := i.Kind, i.Version, i.Description
				source := i.Source
				if i.Path != "" {
					source += " " + i.Path
				}
				if kind == "" {
					kind = "?"
				}
				if version == "" {
					version = "-"
				}
				switch {
				case i.Error != "":
					desc = "error: " + i.Error
				case i.NotStarted != "":
					desc = i.NotStarted
				case i.Shadowed:
					desc = "(shadowed) " + desc
				}
				t.Row(kind, i.Name, version, source, cli.Truncate(desc, 100))
			}
			return t.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&describe, "describe", false, "run every external plugin, pinned or not, to ask its kind and version")
	return cmd
}

func (a *app) pluginsCheckCommand() *cobra.Command {
	var (
		browserName, llmSpec, url, prompt, rules, baseURL, chromium string
		timeout                                                     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "check (--browser NAME [--url URL] | --llm PROVIDER[:MODEL] [--prompt TEXT])",
		Short: "Start a plugin, describe it, and optionally try one call",
		Long: `check starts the plugin as the agent would and prints its Describe answer
as JSON; with --url it also navigates and prints the snapshot, with
--prompt it also sends one request and prints the answer.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (browserName == "") == (llmSpec == "") {
				return cli.Usagef("give exactly one of --browser NAME or --llm PROVIDER[:MODEL]")
			}
			ctx := cmd.Context()
			opts := loader.Options{Logger: pluginLogger(a.Stderr), CallTimeout: timeout}
			out := map[string]any{}
			if browserName != "" {
				b, err := loader.OpenBrowser(ctx, browserName, loader.BrowserOptions{Options: opts, ChromiumPath: chromium})
				if err != nil {
					return err
				}
				defer b.Close()
				out["plugin"] = b.Info()
				if url != "" {
					if err := b.Navigate(ctx, url); err != nil {
						return err
					}
					snap, err := b.Snapshot(ctx)
					if err != nil {
						return err
					}
					out["snapshot"] = snap
				}
				if err := b.Close(); err != nil {
					return err
				}
				return cli.PrintJSON(a.Stdout, out)
			}
			m, err := loader.OpenModel(ctx, llmSpec, loader.ModelOptions{Options: opts, RulesFile: rules, BaseURL: baseURL})
			if err != nil {
				return err
			}
			defer m.Close()
			out["plugin"] = m.Info()
			if prompt != "" {
				resp, err := m.Complete(ctx, engine.ModelRequest{
					System:   "You are checking an engine LLM plugin.",
					Messages: []engine.Message{{Role: engine.RoleUser, Content: prompt}},
				})
				if err != nil {
					return err
				}
				out["response"] = resp
			}
			return cli.PrintJSON(a.Stdout, out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&browserName, "browser", "", "browser plugin `NAME` (chromedp, static, or an external one)")
	f.StringVar(&llmSpec, "llm", "", "LLM plugin as `PROVIDER[:MODEL]` (scripted, openai, anthropic, googleai, ollama, ...)")
	f.StringVar(&url, "url", "", "navigate to `URL` and print the snapshot")
	f.StringVar(&prompt, "prompt", "", "send one user message and print the answer")
	f.StringVar(&rules, "rules", "", "scripted provider's rules `FILE` (env ENGINE_LLM_RULES)")
	f.StringVar(&baseURL, "base-url", "", "OpenAI-compatible or ollama server `URL`")
	f.StringVar(&chromium, "chromium", "", "chromium binary `PATH` (env ENGINE_CHROMIUM)")
	f.DurationVar(&timeout, "timeout", 0, "per-call timeout (default 60s browser, 5m LLM)")
	return cmd
}
