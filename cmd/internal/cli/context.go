package cli

import (
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/memctx"
)

func init() {
	querySubcommands = append(querySubcommands, (*App).queryContextCommand)
}

func (a *App) queryContextCommand() *cobra.Command {
	var (
		req      memctx.Request
		weighted bool
		ttlDays  int
		asJSON   bool
		entered  bool
		sameSite bool
	)
	c := &cobra.Command{
		Use:   "context --url URL --goal TEXT [--step N] [--last-command C --last-error E] [--entered|--same-site] [--budget N]",
		Short: "Print exactly the memory context a run would get at this step",
		Long: `Print byte for byte what a run sends the model from memory at a step, built
by the same function: the memory block of the step's message (session
history, priority 50; a reference trajectory, 40; tips for the site, 35,
only on the step the run enters the site; app knowledge, 30; known
selectors, 25) and then, after a blank line, the tips for the last error
(45, with --last-error) that the run appends to the error. Everything is
fitted into the token budget by priority. The default is a run's step 1:
it has just entered the site (--entered); --same-site is a later step on
the same site. What was trimmed or dropped goes to stderr (and to --json's
"dropped"). --weighted (or ENGINE_TRACE_SCORING=1) and --trace-ttl-days
pick the reference trajectory as engine run --trace-scoring and
--trace-ttl-days do.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := TraceFlags(cmd.Flags(), "weighted", &weighted, ttlDays); err != nil {
				return err
			}
			if req.Budget <= 0 {
				return Usagef("--budget must be a positive number of tokens")
			}
			if req.LastCommand != "" && req.LastError == "" {
				return Usagef("--last-command needs --last-error")
			}
			if entered && sameSite {
				return Usagef("--entered and --same-site exclude each other")
			}
			req.SkipDomainTips = sameSite
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				r, err := k.Context(cmd.Context(), api.ContextRequest{Request: req, Weighted: weighted, TraceTTLDays: ttlDays})
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, r)
				}
				if p := r.Prompt(); p != "" {
					fmt.Fprintln(a.Stdout, p)
				}
				fmt.Fprintf(a.Stderr, "engine: %d of %s", r.Tokens, Plural(r.Budget, "token", "tokens"))
				if len(r.Sections) == 0 && len(r.Dropped) == 0 {
					fmt.Fprintf(a.Stderr, "; no memory for %s", r.Domain)
				}
				for _, d := range r.Dropped {
					if d.Reason == "trimmed" {
						fmt.Fprintf(a.Stderr, "; trimmed %s (priority %d): cut %s", d.Name, d.Priority, items(d.Items))
					} else {
						fmt.Fprintf(a.Stderr, "; dropped %s (priority %d, %s)", d.Name, d.Priority, Plural(d.Tokens, "token", "tokens"))
					}
				}
				fmt.Fprintln(a.Stderr)
				return nil
			})
		},
	}
	f := c.Flags()
	f.StringVar(&req.URL, "url", "", "the page the agent is on (required)")
	f.StringVar(&req.Goal, "goal", "", "the run's goal (required)")
	f.IntVar(&req.Budget, "budget", memctx.DefaultBudget, "token budget (a token is about 4 characters)")
	f.IntVar(&req.Step, "step", 1, "the step number")
	f.StringVar(&req.LastCommand, "last-command", "", "the previous command, when it failed")
	f.StringVar(&req.LastError, "last-error", "", "the previous command's error, when it failed on the page's side: adds tips for it")
	f.BoolVar(&entered, "entered", false, "the step enters the site: with its tips (the default)")
	f.BoolVar(&sameSite, "same-site", false, "a later step on the same site: without the site's tips")
	f.BoolVar(&weighted, "weighted", false, "rank reference trajectories by the weighted blend, as engine run --trace-scoring (env ENGINE_TRACE_SCORING=1)")
	TraceTTLFlag(f, &ttlDays)
	f.BoolVar(&asJSON, "json", false, "print JSON")
	c.MarkFlagRequired("url")
	c.MarkFlagRequired("goal")
	return c
}

func items(n int) string { return Plural(n, "item", "items") }

// TraceTTLFlag defines --trace-ttl-days, the same on engine run, engine
// query context and engine query trajectories.
func TraceTTLFlag(fs *pflag.FlagSet, days *int) {
	fs.IntVar(days, "trace-ttl-days", 0, "use only trajectories recorded at most `N` days ago (default: their 30-day expiry)")
}

// checkTraceTTL refuses a negative --trace-ttl-days.
func checkTraceTTL(ttlDays int) error {
	if ttlDays < 0 {
		return Usagef("--trace-ttl-days must be 0 (the 30-day expiry) or a positive number of days, not %d", ttlDays)
	}
	return nil
}

// TraceFlags settles the trace scoring flags of engine run, engine query
// context and engine query trajectories alike: the boolean flag name, when
// not given, takes ENGINE_TRACE_SCORING (1/true or 0/false), and
// --trace-ttl-days must not be negative.
func TraceFlags(fs *pflag.FlagSet, name string, on *bool, ttlDays int) error {
	if err := checkTraceTTL(ttlDays); err != nil {
		return err
	}
	if fs.Changed(name) {
		return nil
	}
	v := os.Getenv("ENGINE_TRACE_SCORING")
	if v == "" {
		return nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return Usagef("ENGINE_TRACE_SCORING=%q: want 1 or 0", v)
	}
	*on = b
	return nil
}
