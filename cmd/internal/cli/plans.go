package cli

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/plan"
)

func init() {
	register([]string{"plans"}, func(a *App) []*cobra.Command {
		return []*cobra.Command{a.plansCommand()}
	})
	querySubcommands = append(querySubcommands, (*App).queryPlanCommand)
}

func (a *App) plansCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "plans",
		Short: "Add planner iterations by hand (engine query plan shows a run's history)",
	}
	c.AddCommand(a.plansAddIterationCommand())
	return c
}

// readIteration decodes one iteration from a file ("-" for stdin), naming
// the file and the line of a problem.
func (a *App) readIteration(path string) (plan.Iteration, error) {
	var (
		b   []byte
		err error
	)
	if path == "-" {
		b, err = engine.ReadInput(a.Stdin, engine.MaxInputFile)
	} else {
		b, err = engine.ReadInputFile(path, engine.MaxInputFile)
	}
	if err != nil {
		return plan.Iteration{}, err
	}
	var it plan.Iteration
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&it); err != nil {
		return plan.Iteration{}, Usagef("%s: %s", path, engine.JSONProblem(b, err))
	}
	return it, nil
}

func (a *App) plansAddIterationCommand() *cobra.Command {
	var (
		file   string
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "add-iteration RUN_ID --file ITERATION.json",
		Short: "Append one iteration (planner output and tool executions) to a run's history",
		Long: `Append one iteration to a run's planner history. The file ("-" for stdin)
holds one JSON object:

  {"planner": {"user_task": "...", "execution_history": "...",
               "current_state": "...", "challenges_identified": "...",
               "step_by_step_reasoning": "...", "todo_markdown": "...",
               "proposed_actions": ["..."], "task_complete": false,
               "final_answer": ""},
   "tools": [{"tool": "navigate", "ok": true, "output": "..."},
             {"tool": "visual_click", "ok": false, "error": "..."}],
   "observations": 1, "started_at": "...", "ended_at": "..."}

The iteration is numbered next; an "iteration" field must be that number.`,
		Args: exactArgs(1, "RUN_ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			it, err := a.readIteration(file)
			if err != nil {
				return err
			}
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				got, err := k.AddIteration(cmd.Context(), args[0], it)
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, got)
				}
				fmt.Fprintf(a.Stdout, "run %s: iteration %d (%s, %d failed)\n", args[0], got.N, Plural(len(got.Tools), "tool call", "tool calls"), plan.ComputeMetrics([]plan.Iteration{*got}).Errors)
				return nil
			})
		},
	}
	c.Flags().StringVar(&file, "file", "", "the iteration as JSON (\"-\" for stdin; required)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the stored iteration as JSON")
	c.MarkFlagRequired("file")
	return c
}

func (a *App) queryPlanCommand() *cobra.Command {
	var (
		budget int
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "plan RUN_ID [--budget TOKENS] [--json]",
		Short: "Show a run's planner history as the planner sees it: task, execution metrics, iterations",
		Args:  exactArgs(1, "RUN_ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if budget < 0 {
				return Usagef("--budget %d is negative", budget)
			}
			ctx := cmd.Context()
			return a.withMemory(ctx, func(k *MemoryClient) error {
				h, err := k.Plan(ctx, args[0], budget)
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, map[string]any{
						"run_id": h.RunID, "task": h.Task, "metrics": h.Metrics,
						"iterations": h.Iterations, "rendered": h.Rendered, "render": h.Render,
					})
				}
				fmt.Fprint(a.Stdout, h.Prompt)
				return nil
			})
		},
	}
	c.Flags().IntVar(&budget, "budget", 0, "fit the iteration history in `TOKENS` by summarising old iterations (0: no limit)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
