package agentcmd

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/cmd/internal/cli"
	"github.com/engine-dev/engine/engine/server/attach"
	"github.com/engine-dev/engine/engine/server/mcp"
)

func init() {
	commandSets = append(commandSets, func(a *app) []*cobra.Command {
		return []*cobra.Command{a.mcpCommand()}
	})
}

func (a *app) mcpCommand() *cobra.Command {
	return &cobra.Command{
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
a remote memory server instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
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
			return mcp.ServeStdio(ctx, m.Client, mo, a.Stdin, a.Stdout)
		},
	}
}
