package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() {
	register([]string{"namespaces"}, func(a *App) []*cobra.Command {
		return []*cobra.Command{a.namespacesCommand()}
	})
}

func (a *App) namespacesCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "namespaces",
		Short: "The namespaces of the store (--namespace NAME keeps memory apart)",
		Long: `Memory can be kept in namespaces of one store: --namespace NAME (or
ENGINE_NAMESPACE) makes a command read and write only that namespace's
memory; without it, commands use the default namespace (shown as -), which
holds a data dir's memory from before namespaces and always exists. A named
namespace is made with engine namespaces create NAME; naming one that does
not exist is an error (exit 2) that lists those that do. forget, export and
import act within the one namespace given.`,
		Args: cobra.NoArgs,
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List every namespace (the default as -) with how many keys and sites it holds",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			ctx := cmd.Context()
			return a.withMemory(ctx, func(m *MemoryClient) error {
				ns, err := m.Namespaces(ctx)
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, ns)
				}
				t := NewTable(a.Stdout, "NAMESPACE", "KEYS", "SITES")
				for _, n := range ns {
					t.Row(n.Name, n.Keys, n.Sites)
				}
				return t.Flush()
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the namespaces as JSON")
	create := &cobra.Command{
		Use:   "create NAME",
		Short: "Make a namespace (its seed lessons written); naming one that does not exist is an error",
		Args:  exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withMemory(ctx, func(m *MemoryClient) error {
				ns, err := m.CreateNamespace(ctx, args[0])
				if err != nil {
					return err
				}
				if ns.Created {
					fmt.Fprintf(a.Stdout, "created namespace %s\n", ns.Name)
				} else {
					fmt.Fprintf(a.Stdout, "namespace %s exists already\n", ns.Name)
				}
				return nil
			})
		},
	}
	c.AddCommand(list, create)
	return c
}
