package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/run"
)

func init() {
	commandSets = append(commandSets, func(a *app) []*cobra.Command {
		return []*cobra.Command{a.runsCommand()}
	})
	querySubcommands = append(querySubcommands, (*app).queryRunsCommand)
}

// runFilterFlags are the list filters of `engine runs` and `engine query runs`.
type runFilterFlags struct {
	domain, status, session, cursor string
	limit                           int
	asJSON                          bool
}

func (f *runFilterFlags) add(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.domain, "domain", "", "runs on this domain and its subdomains")
	fl.StringVar(&f.status, "status", "", "running, completed, failed or crashed (running, but its process is gone)")
	fl.StringVar(&f.session, "session", "", "runs of this session id")
	fl.IntVar(&f.limit, "limit", 0, "at most `N` runs (newest first); the cursor of the rest goes to stderr")
	fl.StringVar(&f.cursor, "cursor", "", "go on where a --limit list stopped")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON")
}

func (a *app) listRuns(ctx context.Context, f runFilterFlags) (err error) {
	if f.limit < 0 {
		return usagef("--limit %d is negative", f.limit)
	}
	filter := run.Filter{Domain: f.domain, SessionID: f.session}
	if f.status != "" {
		st, err := run.ParseStatus(f.status)
		if err != nil {
			return err
		}
		filter.Status = st
	}
	k, err := a.client(ctx)
	if err != nil {
		return err
	}
	defer closeInto(&err, k)
	var next string
	if f.asJSON {
		out := newJSONArray(a.stdout)
		if next, err = k.EachRun(ctx, filter, f.cursor, f.limit, func(m run.Manifest) error { return out.add(m) }); err != nil {
			return err
		}
		err = out.close()
	} else {
		var t *table
		if next, err = k.EachRun(ctx, filter, f.cursor, f.limit, func(m run.Manifest) error {
			if t == nil {
				t = newTable(a.stdout, "RUN", "STATUS", "STARTED", "DOMAIN", "SESSION", "TURNS", "GOAL")
			}
			t.row(m.RunID, m.Status, m.StartedAt.Format(time.RFC3339), m.Domain, dash(m.SessionID), m.TurnCount, truncate(m.Goal, 50))
			return nil
		}); err != nil {
			return err
		}
		if t == nil {
			fmt.Fprintln(a.stdout, "no runs")
		} else {
			err = t.flush()
		}
	}
	if next != "" && err == nil {
		fmt.Fprintf(a.stderr, "engine: more runs: --cursor %s\n", next)
	}
	return err
}

func (a *app) queryRunsCommand() *cobra.Command {
	var f runFilterFlags
	c := &cobra.Command{
		Use:   "runs [--domain D] [--status S] [--session ID] [--limit N] [--json]",
		Short: "List registered runs, newest first",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.listRuns(cmd.Context(), f) },
	}
	f.add(c)
	return c
}

func (a *app) runsCommand() *cobra.Command {
	var f runFilterFlags
	c := &cobra.Command{
		Use:   "runs [--domain D] [--status S] [--session ID] [--limit N] [--json]",
		Short: "List runs (newest first); show, create, update, complete, resume and fork them",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.listRuns(cmd.Context(), f) },
	}
	f.add(c)
	c.AddCommand(a.runsShowCommand(), a.runsCreateCommand(), a.runsUpdateCommand(), a.runsCompleteCommand(),
		a.runsScenarioCommand("resume"), a.runsScenarioCommand("fork"))
	return c
}

func (a *app) printRun(asJSON bool, m *run.Manifest) error {
	if asJSON {
		return printJSON(a.stdout, m)
	}
	t := newTable(a.stdout, "FIELD", "VALUE")
	t.row("run_id", m.RunID)
	t.row("status", m.Status)
	t.row("goal", m.Goal)
	t.row("domain", m.Domain)
	t.row("session_id", dash(m.SessionID))
	t.row("parent_run_id", dash(m.ParentRunID))
	t.row("start_url", dash(m.StartURL))
	t.row("current_url", dash(m.CurrentURL))
	t.row("final_url", dash(m.FinalURL))
	t.row("started_at", m.StartedAt.Format(time.RFC3339))
	t.row("updated_at", m.UpdatedAt.Format(time.RFC3339))
	completed := "-"
	if !m.CompletedAt.IsZero() {
		completed = m.CompletedAt.Format(time.RFC3339)
	}
	t.row("completed_at", completed)
	success := "-"
	if m.Success != nil {
		success = fmt.Sprint(*m.Success)
	}
	t.row("success", success)
	t.row("turn_count", m.TurnCount)
	t.row("summary", dash(m.Summary))
	t.row("result", dash(m.Result))
	t.row("reason", dash(m.Reason))
	t.row("artifact_paths", dash(strings.Join(m.ArtifactPaths, ", ")))
	owner := "-"
	if m.Owner != nil {
		owner = fmt.Sprintf("pid %d on %s", m.Owner.PID, m.Owner.Host)
	}
	t.row("owner", owner)
	heartbeat := "-"
	if !m.HeartbeatAt.IsZero() {
		heartbeat = m.HeartbeatAt.Format(time.RFC3339)
	}
	t.row("heartbeat_at", heartbeat)
	return t.flush()
}

func (a *app) runsShowCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "show RUN_ID",
		Short: "Show one run's manifest",
		Args:  exactArgs(1, "RUN_ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			k, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			defer closeInto(&err, k)
			m, err := k.Run(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.printRun(asJSON, m)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func (a *app) runsCreateCommand() *cobra.Command {
	var (
		in     api.CreateRun
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "create --goal TEXT (--url URL | --domain D) [--id ID] [--session ID] [--parent RUN_ID]",
		Short: "Register a run as running; prints its id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			k, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			defer closeInto(&err, k)
			m, err := k.CreateRun(cmd.Context(), in)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, m)
			}
			fmt.Fprintln(a.stdout, m.RunID)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&in.Goal, "goal", "", "what the run is asked to do (required)")
	f.StringVar(&in.StartURL, "url", "", "the URL the run starts at")
	f.StringVar(&in.Domain, "domain", "", "the domain the run is on (default: the start URL's host)")
	f.StringVar(&in.RunID, "id", "", "the run id (default: run_<unix ms>_<random>)")
	f.StringVar(&in.SessionID, "session", "", "a session id grouping related runs")
	f.StringVar(&in.ParentRunID, "parent", "", "the run this one resumes or forks")
	f.BoolVar(&asJSON, "json", false, "print the manifest as JSON")
	c.MarkFlagRequired("goal")
	return c
}

func (a *app) runsUpdateCommand() *cobra.Command {
	var (
		p      api.RunProgress
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "update RUN_ID [--url URL] [--turns N] [--artifact PATH]... [--summary TEXT]",
		Short: "Record a running run's progress",
		Args:  exactArgs(1, "RUN_ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			k, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			defer closeInto(&err, k)
			m, err := k.UpdateRun(cmd.Context(), args[0], p)
			if err != nil {
				return err
			}
			return a.printRun(asJSON, m)
		},
	}
	f := c.Flags()
	f.StringVar(&p.CurrentURL, "url", "", "the URL the run is at now")
	f.IntVar(&p.TurnCount, "turns", 0, "turns taken so far")
	f.StringArrayVar(&p.ArtifactPaths, "artifact", nil, "an artifact path to add (repeatable)")
	f.StringVar(&p.Summary, "summary", "", "a summary so far")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func (a *app) runsCompleteCommand() *cobra.Command {
	var (
		c                 api.RunCompletion
		success, failed   bool
		noSession, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "complete RUN_ID (--success | --failed) [--final-url URL] [--summary TEXT] [--result TEXT] [--reason TEXT] [--turns N]",
		Short: "Finish a running run and add it to its site's session history",
		Long: `Finish a running run: completed with --success, failed with --failed.
The run is also recorded in its site's session history (what the next run
on the site sees), unless --no-session is given.`,
		Args: exactArgs(1, "RUN_ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if success == failed {
				return usagef("give exactly one of --success and --failed")
			}
			c.Success, c.NoSession = &success, noSession
			k, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			defer closeInto(&err, k)
			out, err := k.CompleteRun(cmd.Context(), args[0], c)
			if err != nil {
				return err
			}
			return a.printRun(asJSON, &out.Run)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&success, "success", false, "the run reached its goal")
	f.BoolVar(&failed, "failed", false, "the run did not reach its goal")
	f.StringVar(&c.FinalURL, "final-url", "", "where the browser ended up (default: the last current URL)")
	f.StringVar(&c.Summary, "summary", "", "what the run accomplished, in the agent's words")
	f.StringVar(&c.Result, "result", "", "the run's result")
	f.StringVar(&c.Reason, "reason", "", "why it ended (e.g. why it failed)")
	f.IntVar(&c.TurnCount, "turns", 0, "turns taken")
	f.StringArrayVar(&c.ArtifactPaths, "artifact", nil, "an artifact path to add (repeatable)")
	f.BoolVar(&noSession, "no-session", false, "do not add the run to the session history")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) runsScenarioCommand(kind string) *cobra.Command {
	var (
		goal   string
		asJSON bool
	)
	short := "Print the scenario that continues a run at its final URL, in the same session"
	if kind == "fork" {
		short = "Print the scenario that branches off a run at its final URL, in a new session"
	}
	c := &cobra.Command{
		Use:   kind + " RUN_ID [--goal TEXT]",
		Short: short,
		Args:  exactArgs(1, "RUN_ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			k, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			defer closeInto(&err, k)
			var sc *run.Scenario
			if kind == "fork" {
				sc, err = k.ForkRun(cmd.Context(), args[0], goal)
			} else {
				sc, err = k.ResumeRun(cmd.Context(), args[0], goal)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, sc)
			}
			t := newTable(a.stdout, "FIELD", "VALUE")
			t.row("goal", sc.Goal)
			t.row("start_url", sc.StartURL)
			t.row("session_id", dash(sc.SessionID))
			t.row("parent_run_id", sc.ParentRunID)
			return t.flush()
		},
	}
	c.Flags().StringVar(&goal, "goal", "", "the new run's goal (default: the run's goal)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
