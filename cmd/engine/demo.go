package main

import (
	"embed"
	"fmt"
	"os"
	"path"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine/lesson"
)

// demoLogs are action logs of five runs on five sites, as the agent loop
// writes them.
//
//go:embed demodata/*.jsonl
var demoLogs embed.FS

func init() {
	commandSets = append(commandSets, func(a *app) []*cobra.Command { return []*cobra.Command{a.demoCommand()} })
}

// demoCommand shows the lesson memory learning from five runs' action logs
// and what the agent would be told before and after.
func (a *app) demoCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Show memory learning from bundled runs, and what the agent is told before and after",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if a.dataDir == "" {
				dir, err := os.MkdirTemp("", "engine-demo-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				a.dataDir = dir
			}
			m, err := a.openLessons(ctx)
			if err != nil {
				return err
			}
			defer m.Close()
			out := a.stdout
			say := func(f string, args ...any) { fmt.Fprintf(out, f+"\n", args...) }

			say("== A fresh memory: the system prompt every run starts with ==\n")
			t1, err := m.Tier1(ctx)
			if err != nil {
				return err
			}
			say("%s\n", lesson.Render(lesson.Tier1Heading, t1))

			say("== Run 1 on www.google.com, step 2: fill fails ==\n")
			tips, err := m.RecallError(ctx, "fill e37 padel rackets", "too many arguments: expected 2, received 3", "www.google.com")
			if err != nil {
				return err
			}
			say("IMPORTANT - Last action failed:\ntoo many arguments: expected 2, received 3\n\n%s\n", lesson.Render(lesson.ErrorTipsHeading, tips))

			for _, site := range []string{"google", "bing", "amazon", "yahoo", "reddit"} {
				name := path.Join("demodata", site+".jsonl")
				f, err := demoLogs.Open(name)
				if err != nil {
					return err
				}
				actions, err := lesson.ParseActionLog(f, name)
				f.Close()
				if err != nil {
					return err
				}
				learned, err := m.Learn(ctx, actions, "")
				if err != nil {
					return err
				}
				say("== After the run on www.%s.com: post-run learning ==", site)
				for _, l := range learned {
					what := "one more use of"
					if l.Created {
						what = "new lesson"
					}
					where := "every site"
					if l.Lesson.Domain != "" {
						where = l.Lesson.Domain
					}
					say("  step %d failed, %q recovered: %s %s (%s, %d uses on %d sites, for %s)",
						l.Step, l.Recovery, what, l.Lesson.ID, l.Lesson.Category, l.Lesson.UseCount, len(l.Lesson.TriggeredDomains), where)
				}
				say("")
			}

			say("== The system prompt now: the lesson proven on five sites is Tier 1 ==\n")
			if t1, err = m.Tier1(ctx); err != nil {
				return err
			}
			say("%s", lesson.Render(lesson.Tier1Heading, t1))
			return nil
		},
	}
}
