package cli

import "github.com/spf13/cobra"

// querySubcommands are the `engine query KIND` commands; each file that owns
// a kind of memory appends its own in an init.
var querySubcommands []func(*App) *cobra.Command

func init() {
	register([]string{"query"}, func(a *App) []*cobra.Command {
		q := &cobra.Command{
			Use:   "query",
			Short: "Show what memory holds (lessons, facts, selectors, trajectories, sessions, runs, plans, context)",
		}
		for _, sub := range querySubcommands {
			q.AddCommand(sub(a))
		}
		return []*cobra.Command{q}
	})
}
