package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/lesson"
)

// manual is who adds, edits, retracts and reverts lessons from the command
// line: a person.
var manual = engine.Provenance{Source: engine.SourceManual}

func init() {
	commandSets = append(commandSets, func(a *App) []*cobra.Command {
		return []*cobra.Command{a.historyCommand(), a.retractCommand(), a.revertCommand()}
	})
}

func (a *App) historyCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "history ID",
		Short: "Show a lesson's kept versions, newest first: what changed it, when, and who",
		Long: `Show the versions kept of a lesson, newest first. Each is the lesson as it
was before one change (OP: use, helped, dedup, approve, edit, retract,
revert, remove, import, prune), when, and who made it (the source,
and the run or import file when known). The last 20 are kept. engine revert
ID --to VERSION restores one.`,
		Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				h, err := m.LessonHistory(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, h.Versions)
				}
				t := NewTable(a.Stdout, "VERSION", "AT", "OP", "BY", "RUN", "TRUST", "USES", "LESSON")
				for _, v := range h.Versions {
					by := string(v.By.Source)
					if v.By.File != "" {
						by += " " + v.By.File
					}
					t.Row(v.Version, v.At.Format("2006-01-02 15:04:05"), v.Op, Dash(by), Dash(v.By.Run), Dash(string(v.Lesson.Trust)),
						v.Lesson.UseCount, Truncate(v.Lesson.Lesson, 60))
				}
				return t.Flush()
			})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func (a *App) retractCommand() *cobra.Command {
	var reason string
	c := &cobra.Command{
		Use:   "retract ID --reason TEXT",
		Short: "Withdraw a lesson from every prompt and list, kept with the reason until reverted",
		Long: `Withdraw a lesson: it leaves recall, Tier 1, the context and every list, and
is held apart with the reason (engine query lessons --trust retracted lists
them) until engine revert ID restores it.`,
		Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				if _, err := m.WithProvenance(manual).RetractLesson(cmd.Context(), args[0], reason); err != nil {
					return err
				}
				fmt.Fprintf(a.Stdout, "retracted %s\n", args[0])
				return nil
			})
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why it is withdrawn (required)")
	c.MarkFlagRequired("reason")
	return c
}

func (a *App) revertCommand() *cobra.Command {
	var (
		to     int64
		run    string
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "revert ID [--to VERSION] | revert --run RUN_ID",
		Short: "Restore a lesson's previous version (or a given one), undoing a retraction too; or undo a run's lesson changes",
		Long: `Restore a lesson's previous version (engine history ID lists them), or the
one --to names; a retracted lesson comes back. The state it replaces is
kept as a version too.

With --run, undo every lesson change that run made, as the history says:
each lesson it changed goes back to its version before the run's first
change, each lesson it created is removed.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if (run == "") == (len(args) == 0) {
				return Usagef("engine revert takes a lesson ID or --run RUN_ID")
			}
			if to < -1 || (run != "" && to != -1) {
				return Usagef("--to must be a version number from engine history, and goes with an ID")
			}
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				if run != "" {
					out, err := m.WithProvenance(manual).RevertRun(cmd.Context(), run)
					if err != nil {
						return err
					}
					if asJSON {
						return PrintJSON(a.Stdout, out)
					}
					for _, id := range out.Restored {
						fmt.Fprintf(a.Stdout, "restored %s\n", id)
					}
					for _, id := range out.Removed {
						fmt.Fprintf(a.Stdout, "removed %s\n", id)
					}
					fmt.Fprintf(a.Stderr, "engine: run %s: %d lessons restored, %d removed\n", run, len(out.Restored), len(out.Removed))
					return nil
				}
				l, err := m.WithProvenance(manual).RevertLesson(cmd.Context(), args[0], to)
				if err != nil {
					return err
				}
				return a.printLessons(asJSON, false, *l)
			})
		},
	}
	c.Flags().Int64Var(&to, "to", -1, "the version to restore (default: the newest kept)")
	c.Flags().StringVar(&run, "run", "", "undo every lesson change this run made")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// printRetracted prints the retracted lessons with their reasons.
func (a *App) printRetracted(asJSON bool, rs []lesson.Retraction) error {
	if asJSON {
		if rs == nil {
			rs = []lesson.Retraction{}
		}
		return PrintJSON(a.Stdout, rs)
	}
	t := NewTable(a.Stdout, "ID", "CATEGORY", "RETRACTED", "BY", "REASON", "LESSON")
	for _, r := range rs {
		t.Row(r.Lesson.ID, r.Lesson.Category, r.At.Format("2006-01-02"), r.By.Source, r.Reason, Truncate(r.Lesson.Lesson, 60))
	}
	return t.Flush()
}
