package agentcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/cmd/internal/cli"
	"github.com/engine-dev/engine/engine/agent"
	"github.com/engine-dev/engine/engine/agent/demosite"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	chromedpbrowser "github.com/engine-dev/engine/plugins/chromedp"
	"github.com/engine-dev/engine/plugins/loader"
)

func init() {
	commandSets = append(commandSets, func(a *app) []*cobra.Command { return []*cobra.Command{a.demoCommand()} })
}

// demoCommand runs the demo task on the bundled site three times (cold,
// warm, replay) and shows what memory changed.
func (a *app) demoCommand() *cobra.Command {
	var (
		llm     string
		browser string
		quiet   bool
		serve   bool
		lf      runFlags // the LLM call flags
	)
	c := &cobra.Command{
		Use:   "demo",
		Short: cli.AgentShort("demo"),
		Long: `engine demo serves the bundled demo shop on 127.0.0.1 (a cookie banner,
a search box where fill fails, an autocomplete dropdown over the submit
button, a newsletter overlay) and runs the task "` + demosite.Goal + `"
three times with the chromedp browser: cold (fresh memory), warm (with
what the first run taught), and with --replay. The scripted LLM answers
by default (no key, no network); --llm openai:gpt-4o-mini uses a real one.

It uses a fresh temporary data dir unless --data-dir is given. With
--serve it then keeps the demo shop up and serves the demo's memory with
the web inspector on 127.0.0.1 (it prints the URL) until Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			kept := a.DataDir != ""
			if !kept {
				dir, err := os.MkdirTemp("", "engine-demo-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				a.DataDir = dir
			}
			if browser == "chromedp" {
				if _, err := chromedpbrowser.FindChromium(os.Getenv(loader.EnvChromium)); err != nil {
					return fmt.Errorf("the demo drives chromium, and none was found (%v): install it with scripts/install-deps.sh (make demo does), or set %s", err, loader.EnvChromium)
				}
			}
			site, err := demosite.Start(demosite.Options{})
			if err != nil {
				return err
			}
			defer site.Close()
			f := lf
			f.goal, f.url, f.browser, f.llm = demosite.Goal, site.URL, browser, llm
			f.maxSteps, f.maxErrors = agent.DefaultMaxSteps, agent.DefaultMaxErrors
			f.approve, f.mode, f.quiet = string(agent.ApproveNever), string(agent.StepMode), quiet
			if err := f.check(); err != nil {
				return err
			}
			if llm == "" || llm == "scripted" {
				f.llm = "scripted"
				rf, err := os.CreateTemp("", "engine-demo-rules-*.json")
				if err != nil {
					return err
				}
				defer os.Remove(rf.Name())
				_, werr := rf.Write(demosite.Rules)
				if err := errors.Join(werr, rf.Close()); err != nil {
					return err
				}
				f.rules = rf.Name()
			}
			fmt.Fprintf(a.Stdout, "Demo shop at %s\nTask: %s\nLLM: %s   memory: %s\n\n", site.URL, demosite.Goal, f.llm, a.DataDir)
			type row struct {
				name string
				res  *agent.Result
			}
			var rows []row
			for _, r := range []struct {
				name   string
				replay bool
			}{{"cold", false}, {"warm", false}, {"replay", true}} {
				fmt.Fprintf(a.Stderr, "== %s run ==\n", r.name)
				rf := f
				rf.replay = r.replay
				res, err := a.runOnce(ctx, rf, "")
				if err != nil {
					return fmt.Errorf("%s run: %w", r.name, err)
				}
				rows = append(rows, row{r.name, res})
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
			t := cli.NewTable(a.Stdout, "RUN", "STATUS", "STEPS", "ERRORS", "LLM CALLS", "TOKENS", "REPLAYED", "REASON")
			for _, r := range rows {
				t.Row(r.name, r.res.Status, r.res.Steps, r.res.Errors, r.res.LLMCalls, r.res.Usage.Total(), r.res.Replayed, r.res.Reason)
			}
			if err := t.Flush(); err != nil {
				return err
			}
			if last := rows[len(rows)-1].res; last.Replayed > 0 {
				fmt.Fprintf(a.Stdout, "\nReplay saved %s (~%s).\n", cli.Plural(last.LLMCallsSaved, "LLM call", "LLM calls"), cli.Plural(last.TokensSaved, "token", "tokens"))
			}
			if err := a.printLearned(ctx, site.URL, kept); err != nil {
				return err
			}
			var failed []string
			for _, r := range rows {
				if !r.res.Success {
					failed = append(failed, r.name)
				}
			}
			if len(failed) > 0 {
				return fmt.Errorf("%d of %d demo runs failed: %s (see REASON above)", len(failed), len(rows), strings.Join(failed, ", "))
			}
			if !serve {
				fmt.Fprintf(a.Stdout, "\nSee each step, its screenshot and the memory it was shown in the web inspector:\n"+
					"  engine demo --serve   (runs the demo again, then serves the inspector until Ctrl-C)\n"+
					"  or keep the data with --data-dir DIR and run: engine serve --data-dir DIR --listen 127.0.0.1:8080\n")
				return nil
			}
			fmt.Fprintf(a.Stdout, "\nServing the demo shop at %s and the demo's memory; Ctrl-C stops both.\n", site.URL)
			return a.serve(ctx, a.DataDir, "127.0.0.1:0", false, "", defaultServeLimits)
		},
	}
	c.Flags().StringVar(&llm, "llm", "", "LLM as PROVIDER[:MODEL] (default: the scripted provider with the bundled rules)")
	c.Flags().StringVar(&browser, "browser", "chromedp", "browser plugin")
	c.Flags().BoolVar(&quiet, "quiet", false, "do not print each step")
	c.Flags().BoolVar(&serve, "serve", false, "then serve the demo's memory with the web inspector (and keep the shop up) until Ctrl-C")
	addLLMFlags(c.Flags(), &lf)
	return c
}

// printLearned shows what memory holds for the demo site after the runs,
// and how to look at it all: in the data dir when it is kept, else how to
// keep it (a temporary one is removed when the demo ends).
func (a *app) printLearned(ctx context.Context, siteURL string, kept bool) (err error) {
	host, err := domain.Host(siteURL)
	if err != nil {
		return err
	}
	m, err := a.Client(ctx)
	if err != nil {
		return err
	}
	defer cli.CloseInto(&err, m)
	out := a.Stdout
	page, err := m.Lessons(ctx, api.LessonFilter{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nWhat memory learned:\n\nLessons (USES: the pattern recurred; SHOWN/USED/HELPED: steps shown it, whose next action followed it, and of those the ones that worked in a successful run):\n")
	t := cli.NewTable(out, "TIER", "USES", "SHOWN/USED/HELPED", "SOURCE", "DOMAIN", "LESSON")
	for _, l := range page.Lessons {
		t.Row(l.Tier(), l.UseCount, fmt.Sprintf("%d/%d/%d", l.Shown, l.Used, l.Helped), l.Source, cli.Dash(l.Domain), cli.Truncate(l.Lesson, 90))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	ts, err := m.Trajectories(ctx, host)
	if err != nil {
		return err
	}
	for _, tr := range ts.Trajectories {
		fmt.Fprintf(out, "\nTrajectory %s (template %q, %s):\n", tr.ID, tr.Template, cli.Plural(tr.Runs, "run", "runs"))
		for i, s := range tr.Steps {
			fmt.Fprintf(out, "  %d. %s\n", i+1, describeStep(s))
		}
	}
	fs, err := m.Facts(ctx, host, false)
	if err != nil {
		return err
	}
	if len(fs.Facts) > 0 {
		fmt.Fprintf(out, "\nFacts:\n")
		for _, f := range fs.Facts {
			fmt.Fprintf(out, "  [%s] %s: %s (confidence %.2f)\n", f.Type, cli.Truncate(f.Key, 50), cli.Truncate(f.Value, 90), f.Confidence)
		}
	}
	ss, err := m.Selectors(ctx, api.SelectorFilter{Domain: host})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nSelectors: %d known on %s.", len(ss.Selectors), host)
	if kept {
		fmt.Fprintf(out, " Inspect everything with: engine --data-dir %s query lessons|facts|selectors|trajectories|runs\n", a.DataDir)
	} else {
		fmt.Fprintf(out, " This memory is in a temporary data dir, removed when the demo ends: run the demo with --data-dir DIR to keep it, then engine --data-dir DIR query lessons|facts|selectors|trajectories|runs\n")
	}
	return nil
}

func describeStep(s trajectory.Step) string {
	d := s.Action
	if s.Name != "" {
		d += fmt.Sprintf(" %s %q", s.Role, s.Name)
	}
	if s.Value != "" {
		d += fmt.Sprintf(" %q", s.Value)
	}
	return d
}
