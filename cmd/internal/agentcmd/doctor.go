package agentcmd

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/cmd/internal/cli"
	"github.com/engine-dev/engine/engine/server/doctor"
	chromedpbrowser "github.com/engine-dev/engine/plugins/chromedp"
	"github.com/engine-dev/engine/plugins/llm"
	"github.com/engine-dev/engine/plugins/loader"
)

func init() {
	commandSets = append(commandSets, func(a *app) []*cobra.Command {
		var (
			asJSON, repair bool
			timeout        time.Duration
		)
		c := &cobra.Command{
			Use:   "doctor [--json] [--repair]",
			Short: cli.AgentShort("doctor"),
			Long: `doctor reports, one check a line: the engine's version; the data dir (path,
size on disk, whether it exists), its schema version, the store backend and
whether another process holds it; whether chromium is found ($ENGINE_CHROMIUM,
else PATH) and starts headless (its version); the plugins, as engine plugins
list finds them; and which provider environment variables are set (names
only, never values).

It also reads every lesson and lesson index entry: a record that does not
decode, or an index entry that is wrong or missing, is reported (recall and
lists skip them meanwhile), and so is an import that stopped part way
(later imports are refused until it is rolled back). --repair first rolls
such an import back, then rebuilds the lesson indexes from the records,
moving a record that does not decode aside (under damaged/ in the store,
byte for byte); it needs the memory to itself: a data dir held by another
process is refused, and on a shared store (--store etcd://...) stop the
other writers first. With --namespace it checks and repairs that namespace.
The "private" check lists what in the data dir others may read (prompts,
screenshots, memory); --repair makes it the owner's alone (dirs 0700,
files 0600).

Without --repair it changes nothing: a missing data dir is reported, not
created, and the database is opened read-only, only while it is read.
Exit status 1 when a required check (data dir, schema, chromium, a built-in
plugin) fails.`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if repair {
					dir, err := a.ResolveDataDir()
					if err != nil {
						return err
					}
					st, err := a.doctorStore()
					if err != nil {
						return err
					}
					// Modes first: opening the store would tighten its own.
					n, err := doctor.MakePrivate(dir)
					if err != nil {
						return err
					}
					if n > 0 {
						fmt.Fprintf(a.Stderr, "engine: made %s of %s the owner's alone\n", cli.Plural(n, "file or folder", "files and folders"), dir)
					}
					r, err := doctor.Repair(cmd.Context(), dir, st)
					if err != nil {
						return err
					}
					if r.RolledBack {
						fmt.Fprintf(a.Stderr, "engine: rolled back an import that had stopped part way in %s\n", st.Where(dir))
					}
					fmt.Fprintf(a.Stderr, "engine: repaired the lesson indexes of %s: %s indexed, %d moved aside under damaged/\n", st.Where(dir), cli.Plural(r.Lessons.Records, "record", "records"), r.Lessons.MovedAside)
				}
				checks := a.doctorChecks(cmd.Context(), timeout)
				var broken []string
				for _, ch := range checks {
					if ch.Broken() {
						broken = append(broken, ch.Name)
					}
				}
				if asJSON {
					if err := cli.PrintJSON(a.Stdout, map[string]any{"ok": len(broken) == 0, "checks": checks}); err != nil {
						return err
					}
				} else {
					t := cli.NewTable(a.Stdout, "CHECK", "STATUS", "DETAIL")
					for _, ch := range checks {
						t.Row(ch.Name, ch.Status, ch.Detail)
					}
					if err := t.Flush(); err != nil {
						return err
					}
				}
				if len(broken) > 0 {
					return fmt.Errorf("doctor: required checks failed: %s", strings.Join(broken, ", "))
				}
				return nil
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		c.Flags().BoolVar(&repair, "repair", false, "rebuild the lesson indexes from the lesson records and make the data dir the owner's alone first (needs the data dir to itself)")
		c.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long chromium may take to start")
		return []*cobra.Command{c}
	})
}

// doctorStore is the memory doctor checks and repairs: --store's (or the
// data dir's own) in --namespace.
func (a *app) doctorStore() (doctor.Store, error) {
	ns, err := a.Namespace()
	return doctor.Store{Open: a.StoreOpener(), URL: a.StoreURL(), Namespace: ns}, err
}

// doctorChecks runs every check: the data dir's in engine/server/doctor, chromium's
// and the plugins' in plugins/.
func (a *app) doctorChecks(ctx context.Context, timeout time.Duration) []doctor.Check {
	b := cli.ReadBuildInfo()
	checks := []doctor.Check{{Name: "version", Status: doctor.OK, Detail: b.String(), Data: b}}

	if dir, err := a.ResolveDataDir(); err != nil {
		checks = append(checks, doctor.Check{Name: "data dir", Status: doctor.Fail, Required: true, Detail: err.Error()})
	} else {
		st, err := a.doctorStore()
		if err != nil {
			return append(checks, doctor.Check{Name: "namespace", Status: doctor.Fail, Required: true, Detail: err.Error()})
		}
		// Modes first: opening the store tightens its own files.
		checks = append(checks, doctor.Privacy(dir))
		dc, info := doctor.DataDir(ctx, dir)
		if st.Open != nil {
			dc, info = doctor.SharedStore(ctx, dir, st)
		}
		checks = append(checks, dc...)
		checks = append(checks, doctor.Lessons(ctx, dir, info, st)...)
	}

	chromium := doctor.Check{Name: "chromium", Required: true}
	res, err := chromedpbrowser.Probe(ctx, os.Getenv(loader.EnvChromium), timeout)
	chromium.Data = res
	switch {
	case err != nil:
		chromium.Status, chromium.Detail = doctor.Fail, err.Error()
	default:
		chromium.Status, chromium.Detail = doctor.OK, fmt.Sprintf("%s (%s, starts headless)", res.Path, res.Version)
	}
	checks = append(checks, chromium)

	checks = append(checks, a.pluginsCheck(ctx))

	var names []string
	seen := map[string]bool{}
	for _, p := range llm.Providers {
		for _, n := range append(append([]string{}, p.KeyEnv...), p.BaseURLEnv) {
			if n != "" && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	checks = append(checks, doctor.Keys(names, os.LookupEnv))
	return checks
}

// pluginsCheck lists the plugins as `engine plugins list` does: a built-in
// that does not answer fails the doctor, a broken external one warns.
func (a *app) pluginsCheck(ctx context.Context) doctor.Check {
	c := doctor.Check{Name: "plugins", Required: true, Status: doctor.OK}
	infos, err := loader.List(ctx, loader.ListOptions{Options: loader.Options{Logger: pluginLogger(a.Stderr)}})
	if err != nil {
		c.Status, c.Detail = doctor.Fail, err.Error()
		return c
	}
	if infos == nil {
		infos = []loader.Info{}
	}
	c.Data = infos
	byKind := map[string][]string{}
	var problems []string
	for _, i := range infos {
		name := i.Name
		if i.Source != loader.SourceBuiltin {
			name += " (" + i.Source + ")"
		}
		if i.NotStarted != "" {
			name += " (not pinned: not run)"
		}
		if i.Error != "" {
			problems = append(problems, fmt.Sprintf("%s: %s", i.Name, i.Error))
			if i.Source == loader.SourceBuiltin {
				c.Status = doctor.Fail
			} else if c.Status == doctor.OK {
				c.Status = doctor.Warn
			}
			continue
		}
		kind := i.Kind
		if kind == "" {
			kind = "?"
		}
		byKind[kind] = append(byKind[kind], name)
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, k+": "+strings.Join(byKind[k], ", "))
	}
	parts = append(parts, problems...)
	c.Detail = strings.Join(parts, "; ")
	return c
}
