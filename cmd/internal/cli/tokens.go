package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/token"
)

func init() {
	register([]string{"tokens"}, func(a *App) []*cobra.Command {
		return []*cobra.Command{a.tokensCommand()}
	})
}

func (a *App) tokensCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "tokens",
		Short: "Bearer tokens that open one namespace (or all) of a memory server with a role",
		Long: `A memory server (engine serve --listen) accepts the token in the data dir's
serve.token, which opens everything, and the tokens made here, each opening
one namespace (--namespace NAME) or every one (--all) with a role:

  read   read memory (lists, recall, context, export)
  write  also record and change it (lessons, facts, runs, learning, deletes)
  admin  also forget, import, prune, revert, approve or reject held records,
         and manage tokens (of its own namespace unless it opens all)

The store keeps the SHA-256 of each token, never the token: create prints it
once. A token is refused (401) once revoked or expired. Tokens are the
store's (badger or etcd), shared by every namespace.`,
		Args: cobra.NoArgs,
	}
	var (
		all     bool
		role    string
		name    string
		expires time.Duration
		asJSON  bool
	)
	create := &cobra.Command{
		Use:   "create --namespace NAME|--all --role read|write|admin [--name LABEL] [--expires DURATION]",
		Short: "Make a token and print it (shown this once)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ns := a.namespace // the flag alone: ENGINE_NAMESPACE does not pick a token's scope
			switch {
			case all && ns != "":
				return Usagef("tokens create: give --namespace NAME or --all, not both")
			case all:
				ns = token.AllNamespaces
			case ns == "":
				return Usagef("tokens create: give --namespace NAME (- the default) or --all")
			}
			if _, err := token.ParseRole(role); err != nil {
				return Usagef("tokens create: --role %q: want read, write or admin", role)
			}
			req := api.TokenRequest{Namespace: ns, Role: role, Name: name}
			if cmd.Flags().Changed("expires") {
				if expires <= 0 {
					return Usagef("tokens create: --expires %s: want a duration over 0 (720h, 30m)", expires)
				}
				req.ExpiresIn = expires.String()
			}
			ctx := cmd.Context()
			return a.withMemory(ctx, func(m *MemoryClient) error {
				t, err := m.CreateToken(ctx, req)
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, t)
				}
				fmt.Fprintf(a.Stderr, "engine: token %s (%s, %s); it is shown this once:\n", t.ID, t.Role, scopeText(t.Token))
				fmt.Fprintln(a.Stdout, t.Secret)
				return nil
			})
		},
	}
	f := create.Flags()
	f.BoolVar(&all, "all", false, "the token opens every namespace")
	f.StringVar(&role, "role", "", "what the token may do: `read`, write or admin (required)")
	f.StringVar(&name, "name", "", "a `LABEL` to tell the token apart in engine tokens list")
	f.DurationVar(&expires, "expires", 0, "the token stops working after this `long` (720h, 30m); default never")
	f.BoolVar(&asJSON, "json", false, "print the token and its scope as JSON")
	create.MarkFlagRequired("role")

	var listJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the tokens (never the tokens themselves): id, namespace, role, name, created, expires",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			return a.withMemory(ctx, func(m *MemoryClient) error {
				ts, err := m.Tokens(ctx)
				if err != nil {
					return err
				}
				if listJSON {
					return PrintJSON(a.Stdout, ts)
				}
				t := NewTable(a.Stdout, "ID", "NAMESPACE", "ROLE", "NAME", "CREATED", "EXPIRES")
				for _, tk := range ts {
					exp := "never"
					if tk.ExpiresAt != nil {
						exp = tk.ExpiresAt.Format(time.RFC3339)
					}
					t.Row(tk.ID, tk.Namespace, tk.Role, tk.Name, tk.CreatedAt.Format(time.RFC3339), exp)
				}
				return t.Flush()
			})
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print the tokens as JSON")

	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token: the server refuses it from then on",
		Args:  exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withMemory(ctx, func(m *MemoryClient) error {
				t, err := m.RevokeToken(ctx, args[0])
				if err != nil {
					return err
				}
				fmt.Fprintf(a.Stdout, "revoked %s (%s, %s)\n", t.ID, t.Role, scopeText(*t))
				return nil
			})
		},
	}
	c.AddCommand(create, list, revoke)
	return c
}

// scopeText names what a token opens.
func scopeText(t token.Token) string {
	if t.All() {
		return "every namespace"
	}
	return "namespace " + t.Namespace
}
