package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/selector"
)

func init() {
	register([]string{"selectors"}, func(a *App) []*cobra.Command {
		return []*cobra.Command{a.selectorsCommand()}
	})
	querySubcommands = append(querySubcommands, (*App).querySelectorsCommand)
}

func (a *App) selectorsCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "selectors",
		Short: "Record selector successes and failures by hand",
		Long: `Known selectors map an element (ARIA role + accessible name, optionally
scoped to a page path) to the selectors that found it. They are ranked by
score = successes - 2*failures; only those with a positive score reach the
prompt.`,
	}
	c.AddCommand(a.selectorsRecordCommand())
	return c
}

func (a *App) selectorsRecordCommand() *cobra.Command {
	var o selector.Observation
	var asJSON bool
	c := &cobra.Command{
		Use:   "record --domain D --role R --name N --selector S [--path P] [--failed [--reason WHY]]",
		Short: "Record that a selector found an element (or, with --failed, did not)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if o.Reason != "" && !o.Failed {
				return Usagef("--reason says why a selector failed: it needs --failed")
			}
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				got, err := k.RecordSelector(cmd.Context(), api.SelectorObservation{Domain: o.Domain, Path: o.Path,
					Role: o.Role, Name: o.Name, Selector: o.Selector, Failed: o.Failed, Reason: o.Reason})
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, got)
				}
				if got.Refused != "" {
					fmt.Fprintf(a.Stdout, "not stored: %s %q on %s: %s\n", got.Role, got.Name, got.Domain, got.Refused)
					return nil
				}
				what := "success"
				if o.Failed {
					what = "failure"
				}
				fmt.Fprintf(a.Stdout, "%s %q → %s on %s%s: %s recorded, score %d (%d ok, %d failed)\n",
					got.Role, got.Name, got.Selector, got.Domain, pathNote(got.Path), what, got.Score(), got.Successes, got.Failures)
				return nil
			})
		},
	}
	f := c.Flags()
	f.StringVar(&o.Domain, "domain", "", "host (or URL) of the page (required)")
	f.StringVar(&o.Path, "path", "", "scope the selector to this page path (ids in it become *); default: every page")
	f.StringVar(&o.Role, "role", "", "the element's ARIA role: button, link, textbox, ... (required)")
	f.StringVar(&o.Name, "name", "", "the element's accessible name (required)")
	f.StringVar(&o.Selector, "selector", "", "the selector (required)")
	f.BoolVar(&o.Failed, "failed", false, "the selector failed to find the element")
	f.StringVar(&o.Reason, "reason", "", "with --failed: why (the element is gone); a selector that had worked goes stale")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	for _, n := range []string{"domain", "role", "name", "selector"} {
		c.MarkFlagRequired(n)
	}
	return c
}

func pathNote(p string) string {
	if p == "" {
		return ""
	}
	return " (path " + p + ")"
}

func (a *App) querySelectorsCommand() *cobra.Command {
	var host, pageURL string
	var asJSON, stale, ids bool
	c := &cobra.Command{
		Use:   "selectors [--domain D | --url URL] [--stale]",
		Short: "List known selectors, best first (--url: exactly those offered on that page; --stale: those that stopped holding)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if host != "" && pageURL != "" {
				return Usagef("give --domain or --url, not both")
			}
			if stale && pageURL != "" {
				return Usagef("give --stale or --url, not both: stale selectors are never offered on a page")
			}
			if stale {
				return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
					list, err := k.Selectors(cmd.Context(), api.SelectorFilter{Domain: host, Stale: true})
					if err != nil {
						return err
					}
					if asJSON {
						return PrintJSON(a.Stdout, list.Selectors)
					}
					t := NewTable(a.Stdout, "DOMAIN", "PATH", "ROLE", "NAME", "SELECTOR", "OK", "FAILED", "STALE SINCE", "RUN", "REASON")
					for _, s := range list.Selectors {
						t.Row(s.Domain, orDash(s.Path), s.Role, Truncate(s.Name, 30), Truncate(s.Selector, 50), s.Successes, s.Failures,
							s.Stale.At.Format(time.DateTime), orDash(s.Stale.Run), Truncate(s.Stale.Reason, 200))
					}
					return t.Flush()
				})
			}
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				list, err := k.Selectors(cmd.Context(), api.SelectorFilter{Domain: host, URL: pageURL})
				if err != nil {
					return err
				}
				ss := list.Selectors
				if asJSON {
					return PrintJSON(a.Stdout, ss)
				}
				if ids {
					t := NewTable(a.Stdout, "ID", "DOMAIN", "PATH", "ROLE", "NAME", "SELECTOR")
					for _, s := range ss {
						t.Row(selector.IDOf(s), s.Domain, orDash(s.Path), s.Role, Truncate(s.Name, 30), Truncate(s.Selector, 50))
					}
					return t.Flush()
				}
				t := NewTable(a.Stdout, "DOMAIN", "PATH", "ROLE", "NAME", "SELECTOR", "SCORE", "OK", "FAILED", "LAST OK", "SHOWN/USED/HELPED", "FROM")
				for _, s := range ss {
					last := "-"
					if !s.LastSuccess.IsZero() {
						last = s.LastSuccess.Format(time.DateOnly)
					}
					t.Row(s.Domain, orDash(s.Path), s.Role, Truncate(s.Name, 30), Truncate(s.Selector, 50), s.Score(), s.Successes, s.Failures, last, counts(s.Shown, s.Used, s.Helped), from(s.Provenance))
				}
				return t.Flush()
			})
		},
	}
	c.Flags().StringVar(&host, "domain", "", "only selectors of this host, its parent domains and its subdomains")
	c.Flags().BoolVar(&ids, "ids", false, "list the selectors' ids (for engine history and revert)")
	c.Flags().StringVar(&pageURL, "url", "", "only the selectors the prompt gets on this page")
	c.Flags().BoolVar(&stale, "stale", false, "only the stale selectors (failed where they had worked), with their reasons")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// counts renders a record's attribution counters as shown/used/helped.
func counts(shown, used, helped int) string { return fmt.Sprintf("%d/%d/%d", shown, used, helped) }
