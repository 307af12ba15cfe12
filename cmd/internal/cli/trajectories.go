package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

func init() {
	register([]string{"trajectories"}, func(a *App) []*cobra.Command {
		return []*cobra.Command{a.trajectoriesCommand()}
	})
	querySubcommands = append(querySubcommands, (*App).queryTrajectoriesCommand)
}

func (a *App) trajectoriesCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "trajectories",
		Short: "Add, show and remove recorded trajectories by hand",
		Long: `A trajectory is the steps of a successful run. A new goal on the same site
is matched against recorded goals by word overlap (Jaccard, more than 0.5),
reading numbers, quoted values and the words a step typed in as parameters:
"search padel rackets" serves "search tennis balls" with the value swapped.
Trajectories expire 30 days after they were recorded.

A trajectory whose goal or a step's element name, value or selector fails
the screen (instructions aimed at the model, links to other sites, code,
hidden characters, over-long text) is held in quarantine instead, never
matched: engine query trajectories --trust quarantined lists them, engine
trajectories approve|reject ID decides on them.`,
	}
	c.AddCommand(a.trajectoriesAddCommand(), a.trajectoriesShowCommand(), a.trajectoriesRmCommand(),
		a.trajectoriesApproveCommand(), a.trajectoriesRejectCommand())
	return c
}

func (a *App) trajectoriesApproveCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "approve ID...",
		Short: "Release quarantined trajectories: they are stored and matched from then on",
		Args:  minArgs(1, "one or more IDs"),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := collect(cmd.Context(), a, args, func(ctx context.Context, m *MemoryClient, id string) (trajectory.Trajectory, error) {
				t, err := m.ApproveTrajectory(ctx, id)
				if err != nil {
					return trajectory.Trajectory{}, err
				}
				return *t, nil
			})
			if err != nil {
				return err
			}
			if asJSON {
				return PrintJSON(a.Stdout, out)
			}
			for _, t := range out {
				fmt.Fprintf(a.Stdout, "approved %s on %s: %q as %q, %s, expires %s\n",
					t.ID, t.Domain, t.Goal, t.Template, Plural(len(t.Steps), "step", "steps"), t.ExpiresAt.Format(time.DateOnly))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func (a *App) trajectoriesRejectCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "reject ID...",
		Short: "Delete quarantined trajectories",
		Args:  minArgs(1, "one or more IDs"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.eachID(cmd.Context(), args, "rejected", func(ctx context.Context, m *MemoryClient, id string) error {
				return m.RejectTrajectory(ctx, id)
			})
		},
	}
}

// readSteps reads a steps file: a JSON array of steps, or an object with a
// "steps" array (and optionally goal, duration_ms, run_id). "-" is stdin.
func (a *App) readSteps(path string) (trajectory.Trajectory, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = engine.ReadInput(a.Stdin, engine.MaxInputFile)
	} else {
		b, err = engine.ReadInputFile(path, engine.MaxInputFile)
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return trajectory.Trajectory{}, Usagef("%s: no such file", path)
		}
		return trajectory.Trajectory{}, fmt.Errorf("%s: %w", path, err)
	}
	var t trajectory.Trajectory
	trimmed := bytes.TrimSpace(b)
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	switch {
	case len(trimmed) == 0:
		return t, Usagef("%s: empty file (want a JSON array of steps)", path)
	case trimmed[0] == '[':
		err = dec.Decode(&t.Steps)
	case trimmed[0] == '{':
		var f struct {
			Goal       string            `json:"goal"`
			Steps      []trajectory.Step `json:"steps"`
			DurationMs int64             `json:"duration_ms"`
			RunID      string            `json:"run_id"`
		}
		err = dec.Decode(&f)
		t.Goal, t.Steps, t.DurationMs, t.RunID = f.Goal, f.Steps, f.DurationMs, f.RunID
	default:
		return t, Usagef("%s: not JSON (want an array of steps, or an object with \"steps\")", path)
	}
	if err != nil {
		return t, Usagef("%s: %s", path, jsonErr(trimmed, err))
	}
	if dec.More() {
		return t, Usagef("%s: unexpected data after the JSON value", path)
	}
	return t, nil
}

// jsonErr words a JSON decoding error with the line it happened on.
func jsonErr(b []byte, err error) string {
	if line, ok := engine.JSONLine(b, err); ok {
		return fmt.Sprintf("line %d: %s", line, engine.JSONError(err))
	}
	return engine.JSONError(err)
}

func (a *App) trajectoriesAddCommand() *cobra.Command {
	var (
		t         trajectory.Trajectory
		stepsPath string
		duration  time.Duration
		asJSON    bool
	)
	c := &cobra.Command{
		Use:   "add --domain D --goal G --steps FILE.json",
		Short: "Record a successful run's steps (a run of the same goal template replaces it)",
		Long: `Record a successful run's steps. FILE.json ("-" for stdin) holds an array
of steps:

  [{"action": "type", "role": "searchbox", "name": "Search", "selector": "#q",
    "value": "padel rackets", "url": "https://shop.example/", "verified": true}]

or an object {"goal": ..., "steps": [...], "duration_ms": ..., "run_id": ...}.
A step's value is stored as {{secret}} when the step says "secret": true,
its "input_type" is password, or its name or selector names a password,
PIN, CVV or one-time code.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			f, err := a.readSteps(stepsPath)
			if err != nil {
				return err
			}
			t.Steps = f.Steps
			if t.Goal == "" {
				t.Goal = f.Goal
			}
			if duration > 0 {
				t.DurationMs = duration.Milliseconds()
			} else {
				t.DurationMs = f.DurationMs
			}
			if t.RunID == "" {
				t.RunID = f.RunID
			}
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				got, err := k.RecordTrajectory(cmd.Context(), t)
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, got)
				}
				if got.Quarantine != "" {
					fmt.Fprintf(a.Stdout, "quarantined %s on %s: %q, %s\n", got.ID, got.Domain, got.Goal, got.Quarantine)
					return nil
				}
				fmt.Fprintf(a.Stdout, "recorded %s on %s: %q as %q, %s, expires %s\n",
					got.ID, got.Domain, got.Goal, got.Template, Plural(len(got.Steps), "step", "steps"), got.ExpiresAt.Format(time.DateOnly))
				for i, p := range got.Params {
					fmt.Fprintf(a.Stdout, "  {%d} %s: %q\n", i+1, p.Kind, p.Value)
				}
				if got.Runs > 1 {
					fmt.Fprintf(a.Stdout, "  replaces the earlier run of the same goal template (%s)\n", Plural(got.Runs, "run", "runs"))
				}
				return nil
			})
		},
	}
	f := c.Flags()
	f.StringVar(&t.Domain, "domain", "", "host (or URL) the run was on (required)")
	f.StringVar(&t.Goal, "goal", "", "the run's goal (required unless FILE.json has one)")
	f.StringVar(&stepsPath, "steps", "", "JSON file of the steps, - for stdin (required)")
	f.DurationVar(&duration, "duration", 0, "how long the run took, e.g. 45s")
	f.StringVar(&t.RunID, "run-id", "", "the run registry's id of the run")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	c.MarkFlagRequired("domain")
	c.MarkFlagRequired("steps")
	return c
}

func (a *App) trajectoriesShowCommand() *cobra.Command {
	var host string
	var asJSON bool
	c := &cobra.Command{
		Use:   "show ID [--domain D]",
		Short: "Show one trajectory with its steps",
		Args:  exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				t, err := k.Trajectory(cmd.Context(), host, args[0])
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, t)
				}
				fmt.Fprintf(a.Stdout, "%s on %s: %q\ntemplate: %s\nrecorded %s, expires %s, %s\n",
					t.ID, t.Domain, t.Goal, t.Template, t.RecordedAt.Format(time.DateOnly), t.ExpiresAt.Format(time.DateOnly), Plural(t.Runs, "run", "runs"))
				a.printSteps(t.Steps)
				return nil
			})
		},
	}
	c.Flags().StringVar(&host, "domain", "", "host it was recorded on (optional: the id names it)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func (a *App) trajectoriesRmCommand() *cobra.Command {
	var host string
	c := &cobra.Command{
		Use:   "rm ID... [--domain D]",
		Short: "Remove trajectories",
		Args:  minArgs(1, "one or more IDs"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.eachID(cmd.Context(), args, "removed", func(ctx context.Context, m *MemoryClient, id string) error {
				return m.RemoveTrajectory(ctx, host, id)
			})
		},
	}
	c.Flags().StringVar(&host, "domain", "", "host they were recorded on (optional: each id names it)")
	return c
}

// printSteps prints steps as a Table.
func (a *App) printSteps(steps []trajectory.Step) {
	t := NewTable(a.Stdout, "#", "ACTION", "TARGET", "SELECTOR", "VALUE", "URL", "VERIFIED")
	for i, s := range steps {
		target := strings.TrimSpace(s.Role + " " + quoteIf(s.Name))
		v := "no"
		if s.Verified {
			v = "yes"
		}
		t.Row(i+1, s.Action, orDash(target), orDash(Truncate(s.Selector, 40)), orDash(Truncate(s.Value, 40)), orDash(Truncate(s.URL, 60)), v)
	}
	t.Flush()
}

func quoteIf(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("%q", s)
}

func (a *App) queryTrajectoriesCommand() *cobra.Command {
	var host, goal, trust string
	var weighted, asJSON, stale bool
	var ttlDays int
	c := &cobra.Command{
		Use:   "trajectories [--domain D] [--goal G [--weighted] [--trace-ttl-days N]] [--trust shown|quarantined] [--stale]",
		Short: "List trajectories, newest first (--goal: the best match, with the steps as they would be replayed)",
		Long: `List trajectories, newest first; FROM says how each was recorded (learned by
a run, manual, api, imported; --json has the run, model and time). --goal
shows the best match, with the steps as they would be replayed; --weighted
(or ENGINE_TRACE_SCORING=1) and --trace-ttl-days pick it as engine run
--trace-scoring and --trace-ttl-days do.

--trust quarantined lists instead the trajectories held out of matching
because their goal or a step's text failed the screen, each with its
reason; engine trajectories approve|reject ID decides on them.

--stale lists only the trajectories a run found the site diverging from
(a replay that fell back, a reference step that failed), with when, the
run, the step and the reason. They are not matched until a newer
successful run of their goal template replaces them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := checkTraceTTL(ttlDays); err != nil {
				return err
			}
			ranked := weighted || ttlDays != 0
			if stale {
				if goal != "" || ranked || trust != "" {
					return Usagef("--stale lists the stale trajectories: it takes only --domain")
				}
				return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
					list, err := k.StaleTrajectoryList(cmd.Context(), host)
					if err != nil {
						return err
					}
					if asJSON {
						return PrintJSON(a.Stdout, list.Trajectories)
					}
					t := NewTable(a.Stdout, "ID", "DOMAIN", "GOAL", "STALE SINCE", "RUN", "STEP", "REASON")
					for _, tr := range list.Trajectories {
						t.Row(tr.ID, tr.Domain, Truncate(tr.Goal, 40), tr.Stale.At.Format(time.DateTime), orDash(tr.Stale.Run), tr.Stale.Step, Truncate(tr.Stale.Reason, 200))
					}
					return t.Flush()
				})
			}
			switch trust {
			case "", "shown":
			case "quarantined":
				if host != "" || goal != "" || ranked {
					return Usagef("--trust quarantined lists every quarantined trajectory: it takes no other filter")
				}
				return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
					ts, err := m.QuarantinedTrajectories(cmd.Context())
					if err != nil {
						return err
					}
					if asJSON {
						return PrintJSON(a.Stdout, ts)
					}
					t := NewTable(a.Stdout, "ID", "DOMAIN", "GOAL", "STEPS", "FROM", "REASON")
					for _, tr := range ts {
						t.Row(tr.ID, tr.Domain, Truncate(tr.Goal, 40), len(tr.Steps), from(tr.Provenance), tr.Quarantine)
					}
					return t.Flush()
				})
			default:
				return Usagef("--trust must be shown or quarantined, not %q", trust)
			}
			if goal != "" && host == "" {
				return Usagef("--goal needs --domain: trajectories are matched within one site")
			}
			if weighted && goal == "" {
				return Usagef("--weighted ranks matches: it needs --goal")
			}
			if ttlDays != 0 && goal == "" {
				return Usagef("--trace-ttl-days limits which trajectories match: it needs --goal")
			}
			if goal != "" {
				if err := TraceFlags(cmd.Flags(), "weighted", &weighted, ttlDays); err != nil {
					return err
				}
			}
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				if goal != "" {
					res, err := k.MatchTrajectory(cmd.Context(), api.MatchRequest{Domain: host, Goal: goal, Weighted: weighted, TraceTTLDays: ttlDays})
					if err != nil {
						return err
					}
					m := res.Match
					if asJSON {
						return PrintJSON(a.Stdout, m)
					}
					if m == nil {
						within := "" // an older one, left out, may have matched
						if ttlDays == 1 {
							within = " recorded in the last day"
						} else if ttlDays > 1 {
							within = fmt.Sprintf(" recorded in the last %d days", ttlDays)
						}
						fmt.Fprintf(a.Stdout, "no trajectory on %s%s matches %q (a match needs more than %.2f)\n", host, within, goal, res.Threshold)
						return nil
					}
					fmt.Fprintf(a.Stdout, "%s: %q (template %q), similarity %.2f", m.Trajectory.ID, m.Trajectory.Goal, m.Trajectory.Template, m.Similarity)
					if weighted {
						fmt.Fprintf(a.Stdout, ", score %.2f", m.Score)
					}
					fmt.Fprintln(a.Stdout)
					for _, b := range m.Bindings {
						if b.Bound {
							fmt.Fprintf(a.Stdout, "  {%d} %s: %q → %q\n", b.Param, b.Kind, b.Recorded, b.Value)
						} else {
							fmt.Fprintf(a.Stdout, "  {%d} %s: %q (not in the goal: kept)\n", b.Param, b.Kind, b.Recorded)
						}
					}
					a.printSteps(m.Steps)
					return nil
				}
				list, err := k.Trajectories(cmd.Context(), host)
				if err != nil {
					return err
				}
				ts := list.Trajectories
				if asJSON {
					return PrintJSON(a.Stdout, ts)
				}
				t := NewTable(a.Stdout, "ID", "DOMAIN", "GOAL", "TEMPLATE", "STEPS", "VERIFIED", "RUNS", "RECORDED", "EXPIRES", "SHOWN/USED/HELPED", "FROM")
				for _, tr := range ts {
					t.Row(tr.ID, tr.Domain, Truncate(tr.Goal, 40), Truncate(tr.Template, 40), len(tr.Steps),
						fmt.Sprintf("%.0f%%", 100*tr.VerifiedShare()), tr.Runs, tr.RecordedAt.Format(time.DateOnly), tr.ExpiresAt.Format(time.DateOnly), counts(tr.Shown, tr.Used, tr.Helped), from(tr.Provenance))
				}
				return t.Flush()
			})
		},
	}
	c.Flags().StringVar(&host, "domain", "", "only trajectories of this host, its parent domains and its subdomains")
	c.Flags().StringVar(&goal, "goal", "", "show the best match for this goal on --domain")
	c.Flags().BoolVar(&weighted, "weighted", false, "rank by similarity 60%, recency 20%, speed 10%, verification 10%, as engine run --trace-scoring (env ENGINE_TRACE_SCORING=1)")
	TraceTTLFlag(c.Flags(), &ttlDays)
	c.Flags().StringVar(&trust, "trust", "", "shown (the default: the trajectories that are matched) or quarantined")
	c.Flags().BoolVar(&stale, "stale", false, "only the stale trajectories (a run found the site changed), with their reasons")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
