package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/lesson"
)

func init() {
	// One set a command: `engine recall` builds no lessons subcommand.
	register([]string{"lessons"}, func(a *App) []*cobra.Command { return []*cobra.Command{a.lessonsCommand()} })
	register([]string{"recall"}, func(a *App) []*cobra.Command { return []*cobra.Command{a.recallCommand()} })
	register([]string{"learn"}, func(a *App) []*cobra.Command { return []*cobra.Command{a.learnCommand()} })
	register([]string{"prune"}, func(a *App) []*cobra.Command { return []*cobra.Command{a.pruneCommand()} })
	querySubcommands = append(querySubcommands, (*App).queryLessonsCommand)
}

func (a *App) lessonsCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "lessons",
		Short: "Add, use, show, edit and remove lessons by hand; approve or reject quarantined ones",
	}
	c.AddCommand(a.lessonsAddCommand(), a.lessonsUseCommand(), a.lessonsShowCommand(), a.lessonsRmCommand(),
		a.lessonsApproveCommand(), a.lessonsRejectCommand(), a.lessonsEditCommand())
	return c
}

func (a *App) lessonsAddCommand() *cobra.Command {
	var (
		l        lesson.Lesson
		category string
		lastUsed string
		source   string
		asJSON   bool
	)
	c := &cobra.Command{
		Use:   "add --lesson TEXT --category CAT [flags]",
		Short: "Record a lesson (a lesson with the same failed command and error pattern gets one more use instead)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			cat, err := lesson.ParseCategory(category)
			if err != nil {
				return err
			}
			l.Category = cat
			switch source {
			case "", string(lesson.SourceManual):
			case string(lesson.SourceSeed):
				l.Source = lesson.SourceSeed
			default:
				return Usagef("--source must be seed or manual, not %q", source)
			}
			if lastUsed != "" {
				t, err := parseTime(lastUsed)
				if err != nil {
					return Usagef("--last-used: %v", err)
				}
				l.LastUsed = t.Format("2006-01-02")
				if l.CreatedAt == "" {
					l.CreatedAt = l.LastUsed
				}
			}
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				// A person writes it: manual, so trusted from the start.
				got, err := m.WithProvenance(manual).RecordLesson(cmd.Context(), l)
				if err != nil {
					return err
				}
				switch {
				case got.Lesson.Quarantine != "":
					fmt.Fprintf(a.Stderr, "engine: lesson %s quarantined (%s): no model is shown it until engine lessons approve %s\n",
						got.Lesson.ID, got.Lesson.Quarantine, got.Lesson.ID)
				case !got.Created:
					fmt.Fprintf(a.Stderr, "engine: same failed command and error pattern as %s: counted one more use\n", got.Lesson.ID)
				}
				return a.printLessons(asJSON, false, got.Lesson)
			})
		},
	}
	f := c.Flags()
	f.StringVar(&l.Lesson, "lesson", "", "the advice, as the agent should read it (required)")
	f.StringVar(&category, "category", "", "tool_fallback, best_practice, error_recovery or site_specific (required)")
	f.StringVar(&l.FailedCommand, "failed-command", "", "the command that failed, e.g. fill")
	f.StringVar(&l.ErrorPattern, "error-pattern", "", "a key phrase of the error, e.g. \"too many arguments\"")
	f.StringVar(&l.Domain, "domain", "", "bind the lesson to this site (and its subdomains)")
	f.StringVar(&lastUsed, "last-used", "", "the day it was last used (YYYY-MM-DD)")
	f.StringVar(&source, "source", "", "seed declares a seed (never pruned); default: manual (written by a person, trusted)")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	c.MarkFlagRequired("lesson")
	c.MarkFlagRequired("category")
	return c
}

func (a *App) lessonsUseCommand() *cobra.Command {
	var host string
	var asJSON bool
	c := &cobra.Command{
		Use:   "use ID --domain HOST",
		Short: "Count one use of a lesson on a domain (promotion applies)",
		Args:  exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				l, err := m.UseLesson(cmd.Context(), args[0], api.UseRequest{Domain: host})
				if err != nil {
					return err
				}
				return a.printLessons(asJSON, false, *l)
			})
		},
	}
	c.Flags().StringVar(&host, "domain", "", "the domain it was used on (required)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	c.MarkFlagRequired("domain")
	return c
}

func (a *App) lessonsEditCommand() *cobra.Command {
	var (
		text   string
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "edit ID --lesson TEXT",
		Short: "Change a lesson's text, keeping its id and counts (engine history shows the old text and the new)",
		Long: `Change a lesson's text. Its id, counts and trust stay; the previous version
is kept (engine history ID, engine revert ID). Text that fails the screen
(instructions aimed at the model, links to other sites, ...) is refused
with the reason, exit status 2.`,
		Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				l, err := m.WithProvenance(manual).EditLesson(cmd.Context(), args[0], text)
				if err != nil {
					return err
				}
				return a.printLessons(asJSON, false, *l)
			})
		},
	}
	c.Flags().StringVar(&text, "lesson", "", "the new text (required)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	c.MarkFlagRequired("lesson")
	return c
}

func (a *App) lessonsShowCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "show ID",
		Short: "Show one lesson",
		Args:  exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				l, err := m.Lesson(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return a.printLessons(asJSON, false, *l)
			})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func (a *App) lessonsRmCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "rm ID...",
		Short: "Remove lessons",
		Args:  minArgs(1, "one or more IDs"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.eachID(cmd.Context(), args, "removed", func(ctx context.Context, m *MemoryClient, id string) error {
				return m.RemoveLesson(ctx, id)
			})
		},
	}
}

func (a *App) lessonsApproveCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "approve ID...",
		Short: "Trust lessons: release quarantined ones, make candidates trusted",
		Long: `Trust lessons by an operator's word. A quarantined lesson (its text failed
the screen) is released: it joins the lessons, trusted, and is shown to the
agent from then on. A candidate (learned, imported or written over the API
and not yet seen working twice) becomes trusted: it may enter Tier 1 and is
no longer marked unverified. A trusted lesson stays as it is (the command
says so). An id no lesson has is exit status 3.`,
		Args: minArgs(1, "one or more IDs"),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := collect(cmd.Context(), a, args, func(ctx context.Context, m *MemoryClient, id string) (lesson.Lesson, error) {
				l, err := m.ApproveLesson(ctx, id)
				if err != nil {
					return lesson.Lesson{}, err
				}
				if l.Was == lesson.Trusted {
					fmt.Fprintf(a.Stderr, "engine: lesson %s was trusted already: nothing changed\n", id)
				}
				return l.Lesson, nil
			})
			if err != nil {
				return err
			}
			return a.printLessons(asJSON, true, out...)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func (a *App) lessonsRejectCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "reject ID...",
		Short: "Delete quarantined lessons",
		Args:  minArgs(1, "one or more IDs"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.eachID(cmd.Context(), args, "rejected", func(ctx context.Context, m *MemoryClient, id string) error {
				return m.RejectLesson(ctx, id)
			})
		},
	}
}

// eachID attaches to memory, runs do on each of ids in turn, and prints
// "DONE ID" for each that succeeded; it stops at the first failure.
func (a *App) eachID(ctx context.Context, ids []string, done string, do func(context.Context, *MemoryClient, string) error) (err error) {
	return a.withMemory(ctx, func(m *MemoryClient) error {
		for _, id := range ids {
			if err := do(ctx, m, id); err != nil {
				return err
			}
			fmt.Fprintf(a.Stdout, "%s %s\n", done, id)
		}
		return nil
	})
}

// collect attaches to memory and calls do on each of ids in turn,
// returning what each gave; it stops at the first failure.
func collect[T any](ctx context.Context, a *App, ids []string, do func(context.Context, *MemoryClient, string) (T, error)) (out []T, err error) {
	err = a.withMemory(ctx, func(m *MemoryClient) error {
		for _, id := range ids {
			v, err := do(ctx, m, id)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// printQuarantined prints the quarantined lessons with their reasons.
func (a *App) printQuarantined(asJSON bool, ls []lesson.Lesson) error {
	if asJSON {
		if ls == nil {
			ls = []lesson.Lesson{}
		}
		return PrintJSON(a.Stdout, ls)
	}
	t := NewTable(a.Stdout, "ID", "CATEGORY", "DOMAIN", "SOURCE", "REASON", "LESSON")
	for _, l := range ls {
		t.Row(l.ID, l.Category, Dash(l.Domain), sourceCell(l), l.Quarantine, l.Lesson)
	}
	return t.Flush()
}

func (a *App) queryLessonsCommand() *cobra.Command {
	var (
		f        api.LessonFilter
		category string
		trust    string
		max      int
		asJSON   bool
		stale    bool
	)
	c := &cobra.Command{
		Use:   "lessons",
		Short: "List lessons (Tier 1 first, then by use)",
		Long: `List lessons: Tier 1 first, then by use. With --max N, at most N, and when
more remain the cursor of the rest goes to stderr (give it to --cursor); with
--json a page (--max or --cursor) is {"items": [...], "next_cursor": ...}.
The list is read a page at a time; --json prints it as it comes.

--trust trusted lists the trusted lessons (seeds, a person's, approved, or
seen working twice: only they can be Tier 1), --trust candidate the others
(recalled in Tier 2 and shown as unverified advice); the default, shown,
lists both. --trust quarantined lists instead the lessons held out of every
prompt because their text failed the screen (instructions aimed at the
model, links to other sites, code, hidden characters, over-long text), each
with its reason, in full; engine lessons approve|reject ID decides on them.
--trust retracted lists the lessons a person withdrew (engine retract), each
with its reason; engine revert ID restores one.

--stale lists the site-bound lessons a run found stale (the action a lesson
recommends failed on the page it was learned on, whose structural
fingerprint had changed), with since when, the run and the reason; they are
left out of recall until a run learns them again. It takes --domain only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if stale {
				if category != "" || trust != "" || f.Tier != 0 || max != 0 || f.Cursor != "" {
					return Usagef("--stale lists every stale lesson: it takes only --domain")
				}
				return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
					list, err := m.StaleLessons(cmd.Context(), f.Domain)
					if err != nil {
						return err
					}
					if asJSON {
						return PrintJSON(a.Stdout, list.Lessons)
					}
					t := NewTable(a.Stdout, "ID", "DOMAIN", "LESSON", "STALE SINCE", "RUN", "REASON")
					for _, l := range list.Lessons {
						t.Row(l.ID, l.Domain, Truncate(l.Lesson, 50), l.Stale.At.Format(time.DateTime), Dash(l.Stale.Run), Truncate(l.Stale.Reason, 200))
					}
					return t.Flush()
				})
			}
			switch trust {
			case "", "shown":
			case string(lesson.Trusted), string(lesson.Candidate):
				f.Trust = lesson.Trust(trust)
			case "quarantined":
				if category != "" || f.Domain != "" || f.Tier != 0 || max != 0 || f.Cursor != "" {
					return Usagef("--trust quarantined lists every quarantined lesson: it takes no other filter")
				}
				return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
					ls, err := m.QuarantinedLessons(cmd.Context())
					if err != nil {
						return err
					}
					return a.printQuarantined(asJSON, ls)
				})
			case "retracted":
				if category != "" || f.Domain != "" || f.Tier != 0 || max != 0 || f.Cursor != "" {
					return Usagef("--trust retracted lists every retracted lesson: it takes no other filter")
				}
				return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
					rs, err := m.RetractedLessons(cmd.Context())
					if err != nil {
						return err
					}
					return a.printRetracted(asJSON, rs)
				})
			default:
				return Usagef("--trust must be shown, trusted, candidate, quarantined or retracted, not %q", trust)
			}
			if category != "" {
				cat, err := lesson.ParseCategory(category)
				if err != nil {
					return err
				}
				f.Category = cat
			}
			if f.Tier != 0 && f.Tier != 1 && f.Tier != 2 {
				return Usagef("--tier must be 1 or 2, not %d", f.Tier)
			}
			if max < 0 {
				return Usagef("--max must not be negative")
			}
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				var next string
				if asJSON {
					out := newJSONArray(a.Stdout)
					if max > 0 || f.Cursor != "" {
						out = newJSONPage(a.Stdout)
					}
					if next, err = m.EachLesson(cmd.Context(), f, max, func(l lesson.Lesson) error { return out.add(l) }); err != nil {
						return err
					}
					if out.paged {
						return out.closePage(next) // the cursor is in the output
					}
					err = out.close()
				} else {
					t := a.lessonTable()
					if next, err = m.EachLesson(cmd.Context(), f, max, func(l lesson.Lesson) error { t.add(l); return nil }); err != nil {
						return err
					}
					err = t.Flush()
				}
				if next != "" && err == nil {
					fmt.Fprintf(a.Stderr, "engine: more lessons: --cursor %s\n", next)
				}
				return err
			})
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.Domain, "domain", "", "only lessons bound to this domain (or a parent of it)")
	fl.StringVar(&category, "category", "", "only this category")
	fl.IntVar(&f.Tier, "tier", 0, "only Tier 1 or Tier 2 lessons")
	fl.IntVar(&max, "max", 0, "at most `N` lessons (0: all)")
	fl.StringVar(&f.Cursor, "cursor", "", "go on where a --max list stopped")
	fl.StringVar(&trust, "trust", "", "shown (the default: trusted and candidate, the lessons the agent may be shown), trusted, candidate, quarantined or retracted")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	fl.BoolVar(&stale, "stale", false, "only the stale site-bound lessons, with their marks (not paged)")
	return c
}

// printLessons prints lessons as a Table, or as JSON (an array when list is
// set, else the one lesson).
func (a *App) printLessons(asJSON, list bool, ls ...lesson.Lesson) error {
	if asJSON {
		if list {
			if ls == nil {
				ls = []lesson.Lesson{}
			}
			return PrintJSON(a.Stdout, ls)
		}
		return PrintJSON(a.Stdout, ls[0])
	}
	t := a.lessonTable()
	for _, l := range ls {
		t.add(l)
	}
	return t.Flush()
}

// lessonTable is the Table form of lessons.
type lessonTable struct{ *Table }

func (a *App) lessonTable() lessonTable {
	return lessonTable{NewTable(a.Stdout, "ID", "TIER", "TRUST", "CATEGORY", "USES", "SHOWN/USED/HELPED", "COMMAND", "PATTERN", "DOMAIN", "LAST USED", "SOURCE", "LESSON")}
}

func (t lessonTable) add(l lesson.Lesson) {
	t.Row(l.ID, l.Tier(), Dash(string(l.Trust)), l.Category, l.UseCount, counts(l.Shown, l.Used, l.Helped), Dash(l.FailedCommand), Dash(Truncate(l.ErrorPattern, 30)),
		Dash(l.Domain), l.LastUsed, sourceCell(l), Truncate(l.Lesson, 70))
}

// sourceCell is a lesson's SOURCE cell: its source (the rest of its
// provenance is in --json).
func sourceCell(l lesson.Lesson) string { return string(l.Source) }

func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a *App) recallCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "recall",
		Short: "Show exactly the lessons the agent would be shown",
	}
	var (
		command, errText, host string
		asJSON                 bool
	)
	onError := &cobra.Command{
		Use:   "error --command CMD --error TEXT [--domain HOST]",
		Short: "Trigger A: the tips appended to a failed command's error",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if strings.TrimSpace(command) == "" {
				return Usagef("--command is empty")
			}
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				ls, err := m.RecallError(cmd.Context(), command, errText, host)
				if err != nil {
					return err
				}
				return a.printRecall(asJSON, lesson.ErrorTipsHeading, ls)
			})
		},
	}
	onError.Flags().StringVar(&command, "command", "", "the command that failed, e.g. \"fill e37 padel rackets\" (required)")
	onError.Flags().StringVar(&errText, "error", "", "the error text it failed with (required)")
	onError.Flags().StringVar(&host, "domain", "", "the host the command ran on")
	onError.Flags().BoolVar(&asJSON, "json", false, "print the lessons as JSON")
	onError.MarkFlagRequired("command")
	onError.MarkFlagRequired("error")

	var domainJSON bool
	onDomain := &cobra.Command{
		Use:   "domain HOST",
		Short: "Trigger B: the tips added to the step message when the run enters a domain",
		Args:  exactArgs(1, "HOST"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				ls, err := m.RecallDomain(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return a.printRecall(domainJSON, lesson.DomainTipsHeading, ls)
			})
		},
	}
	onDomain.Flags().BoolVar(&domainJSON, "json", false, "print the lessons as JSON")

	var tier1JSON bool
	tier1 := &cobra.Command{
		Use:   "tier1",
		Short: "Tier 1: the lessons section of every system prompt",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				ls, err := m.Tier1(cmd.Context())
				if err != nil {
					return err
				}
				return a.printRecall(tier1JSON, lesson.Tier1Heading, ls)
			})
		},
	}
	tier1.Flags().BoolVar(&tier1JSON, "json", false, "print the lessons as JSON")
	c.AddCommand(onError, onDomain, tier1)
	return c
}

// printRecall prints recalled lessons as the agent would see them, or as
// JSON. Nothing recalled prints nothing on stdout.
func (a *App) printRecall(asJSON bool, heading string, ls []lesson.Lesson) error {
	if asJSON {
		if ls == nil {
			ls = []lesson.Lesson{}
		}
		return PrintJSON(a.Stdout, ls)
	}
	if len(ls) == 0 {
		fmt.Fprintln(a.Stderr, "engine: no lessons match")
		return nil
	}
	_, err := fmt.Fprintln(a.Stdout, lesson.Render(heading, ls))
	return err
}

func (a *App) learnCommand() *cobra.Command {
	var (
		host   string
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "learn ACTIONS.jsonl [--domain HOST]",
		Short: "Learn lessons from a run's action log (a browser-side failure at step N, a different command succeeding at N+1)",
		Long: `Learn lessons from a run's action log. Each JSON line is a step, either as the
two-tier design's agent writes it ({"step", "command", "execution_result": "ok"|"error",
"stderr", "stdout"}) or as the engine writes it ({"step", "action", "ref", "value", "ok",
"error", "url", "origin"}). Only a failure on the browser's side ("origin": "browser";
without it, any failure that is not one of the engine's argument checks) followed by
a different action that worked teaches a lesson. The whole log is read and checked
before anything is written. A log is learned once: the same log again learns nothing.
Stale lessons are pruned first, as on every load of memory for a run.`,
		Args: exactArgs(1, "ACTIONS.jsonl"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			log, err := engine.ReadInputFile(args[0], engine.MaxInputFile)
			if err != nil {
				return engine.MarkInvalid(err)
			}
			actions, err := lesson.ParseActionLog(bytes.NewReader(log), args[0])
			if err != nil {
				return err
			}
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				learned, err := m.Learn(cmd.Context(), host, log)
				if err != nil {
					return err
				}
				if asJSON {
					if learned == nil {
						learned = []lesson.Learned{}
					}
					return PrintJSON(a.Stdout, learned)
				}
				if len(learned) == 0 {
					fmt.Fprintf(a.Stdout, "%s read, no failure→recovery pattern found (or this log was learned before)\n", Plural(len(actions), "step", "steps"))
					return nil
				}
				t := NewTable(a.Stdout, "STEP", "RESULT", "ID", "USES", "TRUST", "CATEGORY", "DOMAIN", "LESSON")
				for _, l := range learned {
					what := "used"
					switch {
					case l.Lesson.Quarantine != "":
						what = "quarantined"
					case l.Created:
						what = "new"
					}
					t.Row(l.Step, what, l.Lesson.ID, l.Lesson.UseCount, Dash(string(l.Lesson.Trust)), l.Lesson.Category, Dash(l.Lesson.Domain), Truncate(l.Lesson.Lesson, 70))
				}
				return t.Flush()
			})
		},
	}
	c.Flags().StringVar(&host, "domain", "", "the host the run was on, for steps that carry no url")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func (a *App) pruneCommand() *cobra.Command {
	var days int
	c := &cobra.Command{
		Use:   "prune [--max-age-days N]",
		Short: "Remove learned lessons unused for N days (default 90) and used fewer than 5 times",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if days < 1 {
				return Usagef("--max-age-days must be at least 1, not %d", days)
			}
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				p, err := m.Prune(cmd.Context(), days)
				if err != nil {
					return err
				}
				fmt.Fprintf(a.Stdout, "pruned %s, %d remain\n", Plural(p.Pruned, "lesson", "lessons"), p.Remaining)
				return nil
			})
		},
	}
	c.Flags().IntVar(&days, "max-age-days", lesson.DefaultPruneAgeDays, "prune lessons last used more than N days ago")
	return c
}

// exactArgs is cobra.ExactArgs with a message that names the argument and
// exits with status 2.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return Usagef("%s takes %s (got %d arguments)", cmd.CommandPath(), names, len(args))
		}
		return nil
	}
}

// minArgs is cobra.MinimumNArgs with a message that names the arguments
// and exits with status 2.
func minArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return Usagef("%s takes %s (got %d arguments)", cmd.CommandPath(), names, len(args))
		}
		return nil
	}
}
