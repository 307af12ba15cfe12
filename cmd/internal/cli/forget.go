package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() {
	register([]string{"forget"}, func(a *App) []*cobra.Command {
		return []*cobra.Command{a.forgetCommand()}
	})
}

func (a *App) forgetCommand() *cobra.Command {
	var (
		host   string
		yes    bool
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "forget --domain D --yes",
		Short: "Drop everything memory holds about one site (every kind); without --yes, say what would go",
		Long: `Drop everything memory holds about one site: its lessons, facts, selectors,
trajectories, session history, runs and their planner histories. The site
is the domain's registrable domain: forgetting www.example.com forgets
example.com and every subdomain. Lessons bound to no site stay.

Without --yes nothing is dropped: the command lists what would be (a dry
run, exit status 0) and says to add --yes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			ctx := cmd.Context()
			return a.withMemory(ctx, func(m *MemoryClient) error {
				if !yes {
					s, err := m.Forget(ctx, host, true)
					if err != nil {
						return err
					}
					if asJSON {
						if err := PrintJSON(a.Stdout, s); err != nil {
							return err
						}
					} else {
						fmt.Fprintf(a.Stdout, "would forget %s (and its subdomains): %s\n", s.Site, s)
					}
					fmt.Fprintf(a.Stderr, "nothing forgotten: add --yes to forget %s\n", s.Site)
					return nil
				}
				s, err := m.Forget(ctx, host, false)
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, s)
				}
				fmt.Fprintf(a.Stdout, "forgot %s (and its subdomains): %s\n", s.Site, s)
				return nil
			})
		},
	}
	f := c.Flags()
	f.StringVar(&host, "domain", "", "the domain (or URL) whose site to forget (required)")
	f.BoolVar(&yes, "yes", false, "really forget it")
	f.BoolVar(&asJSON, "json", false, "print the counts as JSON")
	c.MarkFlagRequired("domain")
	return c
}
