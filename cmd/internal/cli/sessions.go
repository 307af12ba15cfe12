package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine/memory/session"
)

func init() {
	register([]string{"sessions"}, func(a *App) []*cobra.Command {
		return []*cobra.Command{a.sessionsCommand()}
	})
	querySubcommands = append(querySubcommands, (*App).querySessionsCommand)
}

func (a *App) sessionsCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "sessions",
		Short: "Add to the session history by hand (engine query sessions shows it)",
	}
	c.AddCommand(a.sessionsAddCommand())
	return c
}

func (a *App) sessionsAddCommand() *cobra.Command {
	var (
		s        session.Session
		when     string
		duration time.Duration
		asJSON   bool
	)
	c := &cobra.Command{
		Use:   "add --goal TEXT (--domain D | --final-url URL) [flags]",
		Short: "Record a finished run in its site's session history (the site keeps its newest 5)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if when != "" {
				t, err := parseTime(when)
				if err != nil {
					return Usagef("--time: %v", err)
				}
				s.Timestamp = t
			}
			if duration < 0 {
				return Usagef("--duration %s is negative", duration)
			}
			s.DurationMS = duration.Milliseconds()
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				got, err := k.RecordSession(cmd.Context(), s)
				if err != nil {
					return err
				}
				return a.printSessions(asJSON, []session.Session{*got})
			})
		},
	}
	f := c.Flags()
	f.StringVar(&s.Goal, "goal", "", "the task the run was given (required)")
	f.StringVar(&s.Domain, "domain", "", "the host the run ended on (default: the final URL's host)")
	f.StringVar(&s.ID, "id", "", "the session id grouping related runs (default: derived)")
	f.StringVar(&s.RunID, "run", "", "the run id")
	f.StringVar(&s.Outcome, "outcome", "", "what the run accomplished, in the agent's words")
	f.BoolVar(&s.Success, "success", false, "the run reached its goal")
	f.StringVar(&s.FinalURL, "final-url", "", "where the browser ended up")
	f.StringVar(&when, "time", "", "when the run ended: a date or RFC 3339 time (default: now)")
	f.IntVar(&s.TurnsUsed, "turns", 0, "turns the run used")
	f.DurationVar(&duration, "duration", 0, "how long the run took, e.g. 45s")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	c.MarkFlagRequired("goal")
	return c
}

func (a *App) printSessions(asJSON bool, ss []session.Session) error {
	if asJSON {
		if ss == nil {
			ss = []session.Session{}
		}
		return PrintJSON(a.Stdout, ss)
	}
	if len(ss) == 0 {
		fmt.Fprintln(a.Stdout, "no sessions")
		return nil
	}
	t := NewTable(a.Stdout, "TIME", "DOMAIN", "SESSION", "OK", "TURNS", "DURATION", "GOAL", "OUTCOME", "FINAL URL", "FROM")
	for _, s := range ss {
		ok := "no"
		if s.Success {
			ok = "yes"
		}
		t.Row(s.Timestamp.Format(time.RFC3339), s.Domain, s.ID, ok, s.TurnsUsed,
			(time.Duration(s.DurationMS) * time.Millisecond).String(), Truncate(s.Goal, 40), Dash(Truncate(s.Outcome, 40)), Dash(s.FinalURL), from(s.Provenance))
	}
	return t.Flush()
}

func (a *App) querySessionsCommand() *cobra.Command {
	var (
		f      session.Filter
		status string
		render bool
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "sessions [--domain D] [--status completed|failed] [--session ID] [--limit N] [--render] [--json]",
		Short: "Show the session history, newest first (--render: as the agent reads it)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if f.Limit < 0 {
				return Usagef("--limit %d is negative", f.Limit)
			}
			success, ok := session.ParseOutcome(status)
			if !ok {
				return Usagef("--status %q: want completed or failed", status)
			}
			f.Success = success
			if render && f.Domain == "" {
				return Usagef("--render needs --domain: the history is rendered for one site")
			}
			return a.withMemory(cmd.Context(), func(k *MemoryClient) error {
				if render {
					text, err := k.RenderSessions(cmd.Context(), f)
					if err != nil {
						return err
					}
					if text == "" {
						text = "no sessions\n"
					}
					fmt.Fprint(a.Stdout, text)
					return nil
				}
				ss, err := k.Sessions(cmd.Context(), f)
				if err != nil {
					return err
				}
				return a.printSessions(asJSON, ss)
			})
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.Domain, "domain", "", "sessions on this domain's site")
	fl.StringVar(&status, "status", "", "completed (succeeded) or failed")
	fl.StringVar(&f.SessionID, "session", "", "sessions with this id")
	fl.IntVar(&f.Limit, "limit", 0, "at most `N` sessions (0: all)")
	fl.BoolVar(&render, "render", false, "print the history as the agent's context gets it")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	return c
}
