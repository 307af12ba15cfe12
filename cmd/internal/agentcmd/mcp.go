package agentcmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/engine-dev/engine/cmd/internal/cli"
	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/server/attach"
	"github.com/engine-dev/engine/engine/server/browsermcp"
	"github.com/engine-dev/engine/engine/server/mcp"
	"github.com/engine-dev/engine/engine/trust/redact"
	"github.com/engine-dev/engine/plugins/loader"
	"github.com/engine-dev/engine/plugins/shared"
)

func init() {
	commandSets = append(commandSets, func(a *app) []*cobra.Command {
		return []*cobra.Command{a.mcpCommand()}
	})
}

func (a *app) mcpCommand() *cobra.Command {
	var f runFlags
	var printConfig string
	var asJSON bool
	c := &cobra.Command{
		Use:   "mcp",
		Short: cli.AgentShort("mcp"),
		Long: `Serve the data dir's memory over the Model Context Protocol on stdin and
stdout, for an MCP host that spawns it: tools memory_tier1, memory_recall_error,
memory_recall_domain, memory_context, memory_record_lesson, memory_learn,
memory_observe_fact, memory_record_selector, memory_find_trajectory and
memory_query, and resources engine://lessons/{domain}, engine://runs/{run_id}
and engine://runs/{run_id}/plan.

It goes through the memory server holding the data dir when there is one
(engine serve, a running engine run); otherwise it holds the data dir itself
and serves it on <data-dir>/engine.sock while it runs, so other engine
commands go through it. It stops when stdin closes. Set ENGINE_DATA_DIR (or
--data-dir) in the host's configuration; ENGINE_SERVER and ENGINE_TOKEN reach
a remote memory server instead.

With --browser (chromedp, static or a plugin's name) it serves a browser with
memory too: browser_navigate, browser_navigate_back, browser_snapshot,
browser_click, browser_type, browser_press_key, browser_select_option,
browser_hover, browser_wait_for, browser_take_screenshot and browser_close
(named and shaped like Playwright MCP's), browser_replay (a recorded run's
steps, without the model), and memory_task_start and memory_task_end,
which register each task as a run and learn from it as engine run does. Answers carry the page, the site's memory when a page
enters a site, and tips from earlier runs when an action fails. The browser
starts at the first browser tool and ends (its plugin process with it) when
stdin closes; a task not ended by then ends failed.
--trace-scoring (or ENGINE_TRACE_SCORING=1) and --trace-ttl-days pick the
recorded run memory_task_start answers with, as engine run's do.

--print-config HOST prints what makes the MCP host HOST (claude-desktop,
claude-code, cursor or vscode) start this command, with this binary's
absolute path (GUI hosts start servers with a minimal PATH), the flags
given with it and the data dir, and exits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if cmd.Flags().Changed("print-config") {
				if !slices.Contains(mcpHostNames(), printConfig) {
					return cli.Usagef("--print-config %q: not a host this prints a configuration for; the hosts are %s", printConfig, strings.Join(mcpHostNames(), ", "))
				}
				l, err := a.mcpLaunchOf(cmd.LocalNonPersistentFlags())
				if err != nil {
					return err
				}
				if err := printMCPConfig(a.Stdout, printConfig, asJSON, l); err != nil {
					return err
				}
				fmt.Fprintf(a.Stderr, "engine: %s\n", mcpWhere(printConfig, asJSON))
				return nil
			}
			if asJSON {
				return cli.Usagef("--json is for --print-config claude-code")
			}
			if err := browserTraceFlags(cmd.Flags(), &f); err != nil {
				return err
			}
			ctx := cmd.Context()
			opts, dir, err := a.AttachOptions("")
			if err != nil {
				return err
			}
			emit, closeEvents, err := a.Events()
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, closeEvents()) }()
			opts.Events, opts.Serve = emit, true
			opts.Logger = slog.New(slog.NewTextHandler(a.Stderr, nil))
			m, err := attach.Open(ctx, dir, opts)
			if err != nil {
				return err
			}
			defer cli.CloseInto(&err, m)
			fmt.Fprintf(a.Stderr, "engine: serving MCP on stdio, memory %s\n", m.Where())
			mo := mcp.Options{Version: cli.ReadBuildInfo().Version}
			if dir != "" {
				mo.RunsDir = cli.RunsDir(dir, opts.Namespace)
			}
			if f.browser == "" {
				return mcp.ServeStdio(ctx, m.Client, mo, a.Stdin, a.Stdout)
			}
			bo, err := a.browserMCP(f)
			if err != nil {
				return err
			}
			bo.Version, bo.RunsDir, bo.MemoryRunsDir = mo.Version, mo.RunsDir, mo.RunsDir
			return browsermcp.ServeStdio(ctx, m.Client, bo, a.Stdin, a.Stdout)
		},
	}
	fl := c.Flags()
	addBrowserMCPFlags(fl, &f)
	addPrintConfigFlags(c, &printConfig, &asJSON)
	return c
}

// addBrowserMCPFlags registers the flags of a browser served over MCP
// (engine mcp, engine serve).
func addBrowserMCPFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVar(&f.browser, "browser", "", "serve a browser with memory too: chromedp, static or a browser plugin's `NAME`")
	fl.BoolVar(&f.headed, "headed", false, "with --browser: show the browser window")
	fl.StringVar(&f.allowDomains, "allow-domains", "", "with --browser: navigate only to these `DOMAINS` (comma-separated) and their subdomains")
	fl.BoolVar(&f.allowPrivate, "allow-private", false, "with --browser: allow private, loopback and link-local addresses")
	fl.BoolVar(&f.keepContacts, "keep-contacts", os.Getenv("ENGINE_KEEP_CONTACTS") == "1", "with --browser: keep email addresses and phone numbers in what the tasks store (env ENGINE_KEEP_CONTACTS=1)")
	fl.BoolVar(&f.traceScoring, "trace-scoring", false, "with --browser: memory_task_start picks the recorded run by the weighted rank, as engine run --trace-scoring (env ENGINE_TRACE_SCORING=1)")
	cli.TraceTTLFlag(fl, &f.traceTTLDays)
}

// browserTraceFlags settles --trace-scoring (or ENGINE_TRACE_SCORING) and
// --trace-ttl-days of a browser served over MCP as engine run does; without
// --browser they do nothing and are not checked.
func browserTraceFlags(fs *pflag.FlagSet, f *runFlags) error {
	if f.browser == "" {
		return nil
	}
	// The browser starts at the first browser tool: a name no plugin has
	// is refused now, not at each tool call of a server that started.
	if err := loader.Find(shared.KindBrowser, f.browser, loader.Options{}); err != nil {
		return fmt.Errorf("browser %s: %w", f.browser, err)
	}
	return cli.TraceFlags(fs, "trace-scoring", &f.traceScoring, f.traceTTLDays)
}

// browserMCP is the browser tools' options from the flags: the plugin
// loaded per session, the navigation policy, redaction.
func (a *app) browserMCP(f runFlags) (browsermcp.Options, error) {
	nav, err := f.navigation()
	if err != nil {
		return browsermcp.Options{}, err
	}
	// The model picks every URL here: no start URL lifts the guard.
	nav.PrivateHint = "private addresses are allowed only with --allow-private"
	if f.browser == "" {
		return browsermcp.Options{}, cli.Usagef("--browser is empty")
	}
	name, headed := f.browser, f.headed
	logger := pluginLogger(a.Stderr)
	open := func(ctx context.Context) (engine.Browser, error) {
		b, err := loader.OpenBrowser(ctx, name, loader.BrowserOptions{Options: loader.Options{Logger: logger}, Headed: headed})
		if err != nil {
			return nil, fmt.Errorf("browser %s: %w", name, err)
		}
		return b, nil
	}
	return browsermcp.Options{Open: open, Navigation: nav, Redact: redact.Options{KeepContacts: f.keepContacts},
		TraceScoring: f.traceScoring, TraceTTLDays: f.traceTTLDays}, nil
}
