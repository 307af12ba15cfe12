package cli

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/fact"
)

func init() {
	register([]string{"facts"}, func(a *App) []*cobra.Command {
		return []*cobra.Command{a.factsCommand()}
	})
	querySubcommands = append(querySubcommands, (*App).queryFactsCommand)
}

func seen(n int) string {
	if n == 1 {
		return "seen once"
	}
	return fmt.Sprintf("seen %d times", n)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// from summarises a record's provenance for a table's FROM column: its
// source ("-" for a record stored before provenance).
func from(p engine.Provenance) string { return orDash(string(p.Source)) }

func (a *App) factsCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "facts",
		Short: "Observe or set app-knowledge facts by hand",
		Long: `Facts are what the agent knows about a site: timing, selector, pattern and
quirk facts, each with a confidence. Observing the same (type, key, value)
again confirms it: c <- c + 0.2*(1-c), from 0.6 for a new fact. A different
value for the same (type, key) contradicts it: c <- c*0.5 while the new
value starts at 0.6; below 0.1 it is pruned. Facts at 0.5 or more reach the
prompt.

A fact whose key or value fails the screen (instructions aimed at the
model, links to other sites, code, hidden characters, over-long text) is
held in quarantine instead: engine query facts --trust quarantined lists
them, engine facts approve|reject ID decides on them.`,
	}
	c.AddCommand(a.factsObserveCommand(), a.factsSetCommand(), a.factsEditCommand(), a.factsApproveCommand(), a.factsRejectCommand())
	return c
}

func (a *App) factsApproveCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "approve ID...",
		Short: "Release quarantined facts: they join the facts (or confirm the same fact)",
		Args:  minArgs(1, "one or more IDs"),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := collect(cmd.Context(), a, args, func(ctx context.Context, m *MemoryClient, id string) (fact.Fact, error) {
				f, err := m.ApproveFact(ctx, id)
				if err != nil {
					return fact.Fact{}, err
				}
				return *f, nil
			})
			if err != nil {
				return err
			}
			if asJSON {
				return PrintJSON(a.Stdout, out)
			}
			for i, f := range out {
				fmt.Fprintf(a.Stdout, "approved %s: %s fact on %s: %s = %q, confidence %.2f (%s)\n",
					args[i], f.Type, f.Domain, f.Key, f.Value, f.Confidence, seen(f.Sources))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func (a *App) factsRejectCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "reject ID...",
		Short: "Delete quarantined facts",
		Args:  minArgs(1, "one or more IDs"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.eachID(cmd.Context(), args, "rejected", func(ctx context.Context, m *MemoryClient, id string) error {
				return m.RejectFact(ctx, id)
			})
		},
	}
}

func (a *App) factsObserveCommand() *cobra.Command {
	var o fact.Observation
	var typ string
	var asJSON bool
	c := &cobra.Command{
		Use:   "observe --domain D --type T --key K --value V",
		Short: "Record one sighting of a fact (confirms it, or contradicts rival values)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			o.Type = fact.Type(typ)
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				out, err := k.ObserveFact(cmd.Context(), api.ObserveFact{Domain: o.Domain, Type: o.Type, Key: o.Key, Value: o.Value})
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, out)
				}
				f := out.Fact
				if f.Quarantine != "" {
					fmt.Fprintf(a.Stdout, "quarantined %s fact on %s as %s: %s\n", f.Type, f.Domain, f.ID, f.Quarantine)
					return nil
				}
				fmt.Fprintf(a.Stdout, "%s %s fact on %s: %s = %q, confidence %.2f (%s)\n",
					out.Result, f.Type, f.Domain, f.Key, f.Value, f.Confidence, seen(f.Sources))
				for _, r := range out.Contradicted {
					fmt.Fprintf(a.Stdout, "contradicted %q: confidence %.2f\n", r.Value, r.Confidence)
				}
				for _, r := range out.Pruned {
					fmt.Fprintf(a.Stdout, "pruned %q: confidence %.2f is below %.1f\n", r.Value, r.Confidence, fact.Floor)
				}
				return nil
			})
		},
	}
	f := c.Flags()
	f.StringVar(&o.Domain, "domain", "", "host (or URL) the fact was seen on (required)")
	f.StringVar(&typ, "type", "", "timing, selector, pattern or quirk (required)")
	f.StringVar(&o.Key, "key", "", "what the fact is about, e.g. search-box (required)")
	f.StringVar(&o.Value, "value", "", "the fact, e.g. \"[data-testid='search']\" (required)")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	for _, n := range []string{"domain", "type", "key", "value"} {
		c.MarkFlagRequired(n)
	}
	return c
}

func (a *App) factsEditCommand() *cobra.Command {
	var value string
	var asJSON bool
	c := &cobra.Command{
		Use:   "edit ID --value V",
		Short: "Change a fact's value (screened), keeping the previous version",
		Long: `Change the value of fact ID (engine query facts lists the ids), keeping its
type, key, confidence and counts. The value is the fact's identity, so the
fact takes the new value's id (printed); both ids keep the previous
version, so engine history and engine revert work from either. A value the
screen refuses is refused with the reason. The change is written as manual.`,
		Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				f, err := k.WithProvenance(manual).EditFact(cmd.Context(), args[0], value)
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, f)
				}
				fmt.Fprintf(a.Stdout, "edited %s: %s fact on %s: %s = %q, confidence %.2f (%s), now %s\n",
					args[0], f.Type, f.Domain, f.Key, f.Value, f.Confidence, seen(f.Sources), fact.IDOf(*f))
				return nil
			})
		},
	}
	c.Flags().StringVar(&value, "value", "", "the new value (required)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	c.MarkFlagRequired("value")
	return c
}

func (a *App) factsSetCommand() *cobra.Command {
	var f fact.Fact
	var typ string
	var asJSON bool
	c := &cobra.Command{
		Use:   "set --domain D --type T --key K --value V --confidence C",
		Short: "Store a fact with a given confidence (for fixing memory by hand)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			f.Type = fact.Type(typ)
			if math.IsNaN(f.Confidence) || math.IsInf(f.Confidence, 0) {
				// JSON has no NaN or infinity: the request could not carry it.
				return engine.Invalid("fact", fmt.Sprintf("confidence %v is outside [0, 1]", f.Confidence))
			}
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				res, err := k.SetFact(cmd.Context(), f)
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, res)
				}
				got := res.Fact
				if got.Quarantine != "" {
					fmt.Fprintf(a.Stdout, "quarantined %s fact on %s as %s: %s\n", got.Type, got.Domain, got.ID, got.Quarantine)
					return nil
				}
				if !res.Kept {
					fmt.Fprintf(a.Stdout, "not kept: confidence %.2f is below %.1f; %s %s on %s forgotten\n", got.Confidence, fact.Floor, got.Type, got.Key, got.Domain)
					return nil
				}
				fmt.Fprintf(a.Stdout, "set %s fact on %s: %s = %q, confidence %.2f (%s)\n",
					got.Type, got.Domain, got.Key, got.Value, got.Confidence, seen(got.Sources))
				return nil
			})
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.Domain, "domain", "", "host (or URL) the fact is about (required)")
	fl.StringVar(&typ, "type", "", "timing, selector, pattern or quirk (required)")
	fl.StringVar(&f.Key, "key", "", "what the fact is about (required)")
	fl.StringVar(&f.Value, "value", "", "the fact (required)")
	fl.Float64Var(&f.Confidence, "confidence", 0, "confidence in [0, 1] (required)")
	fl.IntVar(&f.Sources, "sources", 1, "how many observations back it")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	for _, n := range []string{"domain", "type", "key", "value", "confidence"} {
		c.MarkFlagRequired(n)
	}
	return c
}

func (a *App) queryFactsCommand() *cobra.Command {
	var host, trust string
	var confident, asJSON, ids bool
	c := &cobra.Command{
		Use:   "facts [--domain D] [--confident] [--trust shown|quarantined]",
		Short: "List facts, most confident first (PROMPT says which reach the prompt)",
		Long: `List facts, most confident first; PROMPT says which reach the prompt, FROM
how each was first written (learned, manual, api, imported; --json has the
run, model and time).

--trust quarantined lists instead the facts held out of every prompt because
their key or value failed the screen, each with its id and reason; engine
facts approve|reject ID decides on them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			switch trust {
			case "", "shown":
			case "quarantined":
				if host != "" || confident {
					return Usagef("--trust quarantined lists every quarantined fact: it takes no other filter")
				}
				return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
					fs, err := m.QuarantinedFacts(cmd.Context())
					if err != nil {
						return err
					}
					if asJSON {
						return PrintJSON(a.Stdout, fs)
					}
					t := NewTable(a.Stdout, "ID", "DOMAIN", "TYPE", "FROM", "REASON", "KEY", "VALUE")
					for _, f := range fs {
						t.Row(f.ID, f.Domain, f.Type, from(f.Provenance), f.Quarantine, f.Key, f.Value)
					}
					return t.Flush()
				})
			default:
				return Usagef("--trust must be shown or quarantined, not %q", trust)
			}
			if confident && host == "" {
				return Usagef("--confident needs --domain: which facts reach the prompt depends on the host")
			}
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				list, err := k.Facts(cmd.Context(), host, confident)
				if err != nil {
					return err
				}
				fs := list.Facts
				if asJSON {
					return PrintJSON(a.Stdout, fs)
				}
				if ids {
					t := NewTable(a.Stdout, "ID", "DOMAIN", "TYPE", "KEY", "VALUE", "CONFIDENCE")
					for _, f := range fs {
						t.Row(fact.IDOf(f), f.Domain, f.Type, Truncate(f.Key, 30), Truncate(f.Value, 60), fmt.Sprintf("%.2f", f.Confidence))
					}
					return t.Flush()
				}
				t := NewTable(a.Stdout, "DOMAIN", "TYPE", "KEY", "VALUE", "CONFIDENCE", "SOURCES", "LAST SEEN", "SHOWN/USED/HELPED", "FROM", "PROMPT")
				for _, f := range fs {
					prompt := "no"
					if f.Confidence >= list.MinConfidence {
						prompt = "yes"
					}
					t.Row(f.Domain, f.Type, Truncate(f.Key, 30), Truncate(f.Value, 60), fmt.Sprintf("%.2f", f.Confidence),
						f.Sources, f.LastSeen.Format(time.DateOnly), counts(f.Shown, f.Used, f.Helped), from(f.Provenance), prompt)
				}
				return t.Flush()
			})
		},
	}
	c.Flags().StringVar(&host, "domain", "", "only facts of this host, its parent domains and its subdomains")
	c.Flags().BoolVar(&ids, "ids", false, "list the facts' ids (for engine facts edit, history and revert)")
	c.Flags().BoolVar(&confident, "confident", false, "only the facts that reach the prompt on --domain")
	c.Flags().StringVar(&trust, "trust", "", "shown (the default: the facts memory keeps) or quarantined")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
