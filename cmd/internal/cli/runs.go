package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/run"
)

func init() {
	register([]string{"runs"}, func(a *App) []*cobra.Command {
		return []*cobra.Command{a.runsCommand()}
	})
	querySubcommands = append(querySubcommands, (*App).queryRunsCommand)
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
	fl.IntVar(&f.limit, "limit", 0, "at most `N` runs (newest first; 0: all); the cursor of the rest goes to stderr (with --json: {\"items\", \"next_cursor\"})")
	fl.StringVar(&f.cursor, "cursor", "", "go on where a --limit list stopped")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON")
}

func (a *App) listRuns(ctx context.Context, f runFilterFlags) (err error) {
	if f.limit < 0 {
		return Usagef("--limit %d is negative", f.limit)
	}
	filter := run.Filter{Domain: f.domain, SessionID: f.session}
	if f.status != "" {
		st, err := run.ParseStatus(f.status)
		if err != nil {
			return err
		}
		filter.Status = st
	}
	return a.withMemory(ctx, func(k *MemoryClient) error {
		var next string
		if f.asJSON {
			out := newJSONArray(a.Stdout)
			if f.limit > 0 || f.cursor != "" {
				out = newJSONPage(a.Stdout)
			}
			if next, err = k.EachRun(ctx, filter, f.cursor, f.limit, func(m run.Manifest) error { return out.add(m) }); err != nil {
				return err
			}
			if out.paged {
				return out.closePage(next) // the cursor is in the output
			}
			err = out.close()
		} else {
			var t *Table
			if next, err = k.EachRun(ctx, filter, f.cursor, f.limit, func(m run.Manifest) error {
				if t == nil {
					t = NewTable(a.Stdout, "RUN", "STATUS", "STARTED", "DOMAIN", "SESSION", "TURNS", "GOAL")
				}
				t.Row(m.RunID, m.Status, m.StartedAt.Format(time.RFC3339), m.Domain, Dash(m.SessionID), m.TurnCount, Truncate(m.Goal, 50))
				return nil
			}); err != nil {
				return err
			}
			if t == nil {
				fmt.Fprintln(a.Stdout, "no runs")
			} else {
				err = t.Flush()
			}
		}
		if next != "" && err == nil {
			fmt.Fprintf(a.Stderr, "engine: more runs: --cursor %s\n", next)
		}
		return err
	})
}

func (a *App) queryRunsCommand() *cobra.Command {
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

func (a *App) runsCommand() *cobra.Command {
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

func (a *App) printRun(asJSON bool, m *run.Manifest) error {
	if asJSON {
		return PrintJSON(a.Stdout, m)
	}
	t := NewTable(a.Stdout, "FIELD", "VALUE")
	t.Row("run_id", m.RunID)
	t.Row("status", m.Status)
	t.Row("goal", m.Goal)
	t.Row("domain", m.Domain)
	t.Row("session_id", Dash(m.SessionID))
	t.Row("parent_run_id", Dash(m.ParentRunID))
	t.Row("start_url", Dash(m.StartURL))
	t.Row("current_url", Dash(m.CurrentURL))
	t.Row("final_url", Dash(m.FinalURL))
	t.Row("started_at", m.StartedAt.Format(time.RFC3339))
	t.Row("updated_at", m.UpdatedAt.Format(time.RFC3339))
	completed := "-"
	if !m.CompletedAt.IsZero() {
		completed = m.CompletedAt.Format(time.RFC3339)
	}
	t.Row("completed_at", completed)
	success := "-"
	if m.Success != nil {
		success = fmt.Sprint(*m.Success)
	}
	t.Row("success", success)
	t.Row("turn_count", m.TurnCount)
	t.Row("summary", Dash(m.Summary))
	t.Row("result", Dash(m.Result))
	t.Row("reason", Dash(m.Reason))
	t.Row("artifact_paths", Dash(strings.Join(m.ArtifactPaths, ", ")))
	owner := "-"
	if m.Owner != nil {
		owner = fmt.Sprintf("pid %d on %s", m.Owner.PID, m.Owner.Host)
	}
	t.Row("owner", owner)
	heartbeat := "-"
	if !m.HeartbeatAt.IsZero() {
		heartbeat = m.HeartbeatAt.Format(time.RFC3339)
	}
	t.Row("heartbeat_at", heartbeat)
	return t.Flush()
}

func (a *App) runsShowCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "show RUN_ID",
		Short: "Show one run's manifest",
		Args:  exactArgs(1, "RUN_ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				m, err := k.Run(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return a.printRun(asJSON, m)
			})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func (a *App) runsCreateCommand() *cobra.Command {
	var (
		in     api.CreateRun
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "create --goal TEXT (--url URL | --domain D) [--id ID] [--session ID] [--parent RUN_ID]",
		Short: "Register a run as running; prints its id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				m, err := k.CreateRun(cmd.Context(), in)
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, m)
				}
				fmt.Fprintln(a.Stdout, m.RunID)
				return nil
			})
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

func (a *App) runsUpdateCommand() *cobra.Command {
	var (
		p      api.RunProgress
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "update RUN_ID [--url URL] [--turns N] [--artifact PATH]... [--summary TEXT]",
		Short: "Record a running run's progress",
		Args:  exactArgs(1, "RUN_ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				m, err := k.UpdateRun(cmd.Context(), args[0], p)
				if err != nil {
					return err
				}
				return a.printRun(asJSON, m)
			})
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

func (a *App) runsCompleteCommand() *cobra.Command {
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
				return Usagef("give exactly one of --success and --failed")
			}
			c.Success, c.NoSession = &success, noSession
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				out, err := k.CompleteRun(cmd.Context(), args[0], c)
				if err != nil {
					return err
				}
				return a.printRun(asJSON, &out.Run)
			})
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

func (a *App) runsScenarioCommand(kind string) *cobra.Command {
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
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
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
					return PrintJSON(a.Stdout, sc)
				}
				t := NewTable(a.Stdout, "FIELD", "VALUE")
				t.Row("goal", sc.Goal)
				t.Row("start_url", sc.StartURL)
				t.Row("session_id", Dash(sc.SessionID))
				t.Row("parent_run_id", sc.ParentRunID)
				return t.Flush()
			})
		},
	}
	c.Flags().StringVar(&goal, "goal", "", "the new run's goal (default: the run's goal)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
