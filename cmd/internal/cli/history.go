package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/archive"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/selector"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// manual is who adds, edits, retracts and reverts lessons from the command
// line: a person.
var manual = engine.Provenance{Source: engine.SourceManual}

func init() {
	register([]string{"history"}, func(a *App) []*cobra.Command { return []*cobra.Command{a.historyCommand()} })
	register([]string{"retract"}, func(a *App) []*cobra.Command { return []*cobra.Command{a.retractCommand()} })
	register([]string{"revert"}, func(a *App) []*cobra.Command { return []*cobra.Command{a.revertCommand()} })
	querySubcommands = append(querySubcommands, (*App).queryRetractedCommand)
}

func (a *App) historyCommand() *cobra.Command {
	var asJSON, diff bool
	c := &cobra.Command{
		Use:   "history ID [--diff]",
		Short: "Show a record's history (lesson, fact_…, sel_…, traj_…): the version in force, then the kept ones, newest first, each with the change that made it",
		Long: `Show the history of a lesson, fact, selector or trajectory (the id says
which: fact_… from engine query facts, sel_… from engine query selectors,
traj_… a trajectory, anything else a lesson). The first row is the
version in force (VERSION current; none when the record was removed or
retracted), then each kept version, newest first. Each row names the
change that made that version (OP: create for the first one; for lessons
use, helped, dedup, approve, edit, retract, revert, remove, import,
prune; for the others observe, contradict, use, record, set, import,
approve, attribute, edit, revert, remove, prune; - when that change is
no longer kept), when, and who made it (the source, and the run or
import file when known). The last 20 versions are kept.
engine revert ID --to VERSION restores one.

With --diff, show what each change changed instead: for each pair of
consecutive versions, newest first, the fields that differ, with their
words removed as [-…-] and added as {+…+}. With --json, print the whole
answer: {id, kind, current: {record, made}, versions: [{version, at, by,
op, record, made}]}, where op, at and by are the change that replaced
the version and made the one that made it.`,
		Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if asJSON && diff {
				return Usagef("--diff and --json go separately")
			}
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				h, err := m.History(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				switch {
				case asJSON:
					return PrintJSON(a.Stdout, h)
				case diff:
					return a.printHistoryDiff(h)
				}
				return a.printHistory(h)
			})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the whole answer as JSON (current and versions)")
	c.Flags().BoolVar(&diff, "diff", false, "show the word differences between consecutive versions")
	return c
}

// historyRow is one state of a record as the history table shows it: its
// version ("current" for the one in force), the change that made it and
// the record.
type historyRow struct {
	version string
	made    *history.Made
	record  json.RawMessage
}

// historyRows is the record in force, then each kept version, newest
// first.
func historyRows(h *api.RecordHistory) []historyRow {
	rows := []historyRow{{version: "current", made: h.Current.Made, record: h.Current.Record}}
	for _, v := range h.Versions {
		rows = append(rows, historyRow{version: fmt.Sprint(v.Version), made: v.Made, record: v.Record})
	}
	return rows
}

// summary is one line saying what the row's record holds; the version in
// force is none when the record was removed or retracted.
func (r historyRow) summary(kind string) string {
	if r.version == "current" && api.Absent(r.record) {
		if r.made != nil {
			return "(none: " + r.made.Op + ")"
		}
		return "(none)"
	}
	return summary(kind, r.record)
}

// madeCols are the AT, OP, BY and RUN columns of the change that made a
// version (dashes for one no longer kept, and for a time unknown).
func madeCols(m *history.Made) []any {
	if m == nil {
		return []any{"-", "-", "-", "-"}
	}
	at := "-"
	if !m.At.IsZero() {
		at = m.At.UTC().Format("2006-01-02 15:04:05")
	}
	return []any{at, m.Op, Dash(byOf(m.By)), Dash(m.By.Run)}
}

// printHistory prints a record's history as a table, the version in
// force first.
func (a *App) printHistory(h *api.RecordHistory) error {
	if h.Kind == api.KindLesson {
		t := NewTable(a.Stdout, "VERSION", "AT", "OP", "BY", "RUN", "TRUST", "USES", "LESSON")
		for _, r := range historyRows(h) {
			cols := append([]any{r.version}, madeCols(r.made)...)
			var l lesson.Lesson
			if api.Absent(r.record) || json.Unmarshal(r.record, &l) != nil {
				t.Row(append(cols, "-", "-", Truncate(r.summary(h.Kind), 60))...)
				continue
			}
			t.Row(append(cols, Dash(string(l.Trust)), l.UseCount, Truncate(l.Lesson, 60))...)
		}
		return t.Flush()
	}
	t := NewTable(a.Stdout, "VERSION", "AT", "OP", "BY", "RUN", strings.ToUpper(h.Kind))
	for _, r := range historyRows(h) {
		t.Row(append(append([]any{r.version}, madeCols(r.made)...), Truncate(r.summary(h.Kind), 70))...)
	}
	return t.Flush()
}

// printHistoryDiff prints, for each pair of consecutive versions (newest
// first), the change between them and the fields it changed, word by
// word (history.Diff).
func (a *App) printHistoryDiff(h *api.RecordHistory) error {
	rows := historyRows(h)
	for i := 0; i+1 < len(rows); i++ {
		newer, older := rows[i], rows[i+1]
		ds, err := history.Diff(older.record, newer.record)
		if err != nil {
			return fmt.Errorf("%s %s: version %s: %w", h.Kind, h.ID, newer.version, err)
		}
		c := madeCols(newer.made)
		fmt.Fprintf(a.Stdout, "%s -> %s: %s by %s at %s", older.version, newer.version, c[1], c[2], c[0])
		if run := c[3]; run != "-" {
			fmt.Fprintf(a.Stdout, ", run %s", run)
		}
		fmt.Fprintln(a.Stdout)
		switch {
		case api.Absent(newer.record) && !api.Absent(older.record):
			fmt.Fprintln(a.Stdout, "  (the record is gone)")
			continue
		case len(ds) == 0:
			fmt.Fprintln(a.Stdout, "  (no change)")
		}
		for _, d := range ds {
			fmt.Fprintf(a.Stdout, "  %s: %s\n", d.Field, d.Text)
		}
	}
	if last := rows[len(rows)-1]; last.made != nil {
		c := madeCols(last.made)
		fmt.Fprintf(a.Stdout, "%s: %s by %s at %s\n", last.version, c[1], c[2], c[0])
	} else if len(rows) == 1 {
		fmt.Fprintf(a.Stdout, "%s %s has no earlier version\n", h.Kind, h.ID)
	}
	return nil
}

func (a *App) retractCommand() *cobra.Command {
	var reason string
	c := &cobra.Command{
		Use:   "retract ID --reason TEXT",
		Short: "Withdraw a record (lesson, fact_…, sel_…, traj_…) from every prompt and list, kept with the reason until reverted",
		Long: `Withdraw a lesson, fact, selector or trajectory (the id says which, as
for engine history): it leaves recall, the context, the match index and
every list, and is held apart with the reason, the time and who (engine
query retracted lists them) until engine revert ID restores it. Its
version is kept (op retract).`,
		Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			// The memory's message names the request's field; this
			// command's input is the flag.
			if strings.TrimSpace(reason) == "" {
				return Usagef("--reason is blank: say why the record is withdrawn")
			}
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				if kind := api.KindOf(args[0]); kind != api.KindLesson {
					if _, err := m.WithProvenance(manual).Retract(cmd.Context(), args[0], reason); err != nil {
						return err
					}
					fmt.Fprintf(a.Stdout, "retracted %s %s\n", kind, args[0])
					return nil
				}
				if _, err := m.WithProvenance(manual).RetractLesson(cmd.Context(), args[0], reason); err != nil {
					return err
				}
				fmt.Fprintf(a.Stdout, "retracted %s\n", args[0])
				return nil
			})
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why it is withdrawn (required)")
	c.MarkFlagRequired("reason")
	return c
}

func (a *App) revertCommand() *cobra.Command {
	var (
		to     int64
		run    string
		imp    string
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "revert ID [--to VERSION] | revert --run RUN_ID | revert --import SHA256",
		Short: "Restore a record's previous version (or a given one); or undo everything one run or one import changed",
		Long: `Restore the previous version of a lesson, fact, selector or trajectory
(engine history ID lists them), or the one --to names; a retracted record
comes back. The state it replaces is kept as a version too.

With --run, undo everything that run changed, as the history says: each
lesson, fact, selector and trajectory it changed goes back to its version
before the run's first change (later changes by others are undone too,
and kept as versions), each one it created is removed.

With --import, undo everything the import of the file with that SHA-256
(engine import prints it) changed: every lesson, fact, selector and
trajectory it replaced goes back to its version before the import, every
one it created is removed.`,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			n := len(args)
			if run != "" {
				n++
			}
			if imp != "" {
				n++
			}
			if n != 1 {
				return Usagef("engine revert takes one of a record ID, --run RUN_ID or --import SHA256")
			}
			if to < -1 || (len(args) != 1 && to != -1) {
				return Usagef("--to must be a version number from engine history, and goes with an ID")
			}
			if imp != "" && !archive.IsSHA256(imp) {
				return Usagef("--import %q: not a file's SHA-256 (64 lowercase hex digits, as engine import prints it)", imp)
			}
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				if imp != "" {
					out, err := m.WithProvenance(manual).RevertImport(cmd.Context(), imp)
					if err != nil {
						return err
					}
					return a.printReverted(asJSON, out, "import "+imp, &out.Kinds)
				}
				if run != "" {
					out, err := m.WithProvenance(manual).RevertRun(cmd.Context(), run)
					if err != nil {
						return err
					}
					return a.printReverted(asJSON, out, "run "+run, &out.Kinds)
				}
				if kind := api.KindOf(args[0]); kind != api.KindLesson {
					r, err := m.WithProvenance(manual).Revert(cmd.Context(), args[0], to)
					if err != nil {
						return err
					}
					if asJSON {
						return PrintJSON(a.Stdout, r)
					}
					if api.Absent(r.Record) {
						fmt.Fprintf(a.Stdout, "removed %s %s\n", kind, args[0])
						return nil
					}
					fmt.Fprintf(a.Stdout, "restored %s %s: %s\n", kind, args[0], summary(kind, r.Record))
					return nil
				}
				l, err := m.WithProvenance(manual).RevertLesson(cmd.Context(), args[0], to)
				if err != nil {
					return err
				}
				return a.printLessons(asJSON, false, *l)
			})
		},
	}
	c.Flags().Int64Var(&to, "to", -1, "the version to restore (default: the newest kept)")
	c.Flags().Lookup("to").DefValue = "0" // not shown: the usage says the default (-1 stands for it)
	c.Flags().StringVar(&run, "run", "", "undo everything this run changed (every kind)")
	c.Flags().StringVar(&imp, "import", "", "undo everything the import of the file with this SHA-256 changed")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// printReverted prints what undoing what (an import, a run) did: the
// answer as JSON, or a line per record restored or removed and a count on
// stderr.
func (a *App) printReverted(asJSON bool, answer any, what string, k *api.RevertedKinds) error {
	if asJSON {
		return PrintJSON(a.Stdout, answer)
	}
	k.Each(func(kind string, r *api.Reverted) {
		for _, id := range r.Restored {
			fmt.Fprintf(a.Stdout, "restored %s %s\n", kind, id)
		}
		for _, id := range r.Removed {
			fmt.Fprintf(a.Stdout, "removed %s %s\n", kind, id)
		}
	})
	restored, removed := k.Total()
	fmt.Fprintf(a.Stderr, "engine: %s: %s restored, %d removed\n", what, Plural(restored, "record", "records"), removed)
	return nil
}

func (a *App) queryRetractedCommand() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "retracted",
		Short: "List the retracted records of every kind (engine retract), each with its reason",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withMemory(cmd.Context(), func(m *MemoryClient) error {
				rs, err := m.Retracted(cmd.Context())
				if err != nil {
					return err
				}
				if asJSON {
					return PrintJSON(a.Stdout, rs)
				}
				t := NewTable(a.Stdout, "KIND", "ID", "RETRACTED", "BY", "REASON", "RECORD")
				for _, r := range rs.Lessons {
					t.Row(api.KindLesson, r.Lesson.ID, r.At.Format("2006-01-02"), r.By.Source, r.Reason, Truncate(r.Lesson.Lesson, 60))
				}
				for _, k := range [][]api.Retraction{rs.Facts, rs.Selectors, rs.Trajectories} {
					for _, r := range k {
						t.Row(r.Kind, r.ID, r.At.Format("2006-01-02"), r.By.Source, r.Reason, Truncate(summary(r.Kind, r.Record), 60))
					}
				}
				return t.Flush()
			})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

// printRetracted prints the retracted lessons with their reasons.
func (a *App) printRetracted(asJSON bool, rs []lesson.Retraction) error {
	if asJSON {
		if rs == nil {
			rs = []lesson.Retraction{}
		}
		return PrintJSON(a.Stdout, rs)
	}
	t := NewTable(a.Stdout, "ID", "CATEGORY", "RETRACTED", "BY", "REASON", "LESSON")
	for _, r := range rs {
		t.Row(r.Lesson.ID, r.Lesson.Category, r.At.Format("2006-01-02"), r.By.Source, r.Reason, Truncate(r.Lesson.Lesson, 60))
	}
	return t.Flush()
}

// byOf says who made a change: the source, and the import file when known.
func byOf(p engine.Provenance) string {
	by := string(p.Source)
	if p.File != "" {
		by += " " + p.File
	}
	return by
}

// summary is one line saying what a version's record of kind held.
func summary(kind string, rec json.RawMessage) string {
	if api.Absent(rec) {
		return "(none: created by the change)"
	}
	switch kind {
	case api.KindFact:
		var f fact.Fact
		if json.Unmarshal(rec, &f) == nil {
			return fmt.Sprintf("%s = %q, confidence %.2f (%s)", f.Key, f.Value, f.Confidence, seen(f.Sources))
		}
	case api.KindSelector:
		var s selector.Selector
		if json.Unmarshal(rec, &s) == nil {
			return fmt.Sprintf("%s %q: %s, %d ok, %d failed", s.Role, s.Name, s.Selector, s.Successes, s.Failures)
		}
	case api.KindTrajectory:
		var t trajectory.Trajectory
		if json.Unmarshal(rec, &t) == nil {
			return fmt.Sprintf("%q: %s, %s", t.Goal, Plural(len(t.Steps), "step", "steps"), Plural(t.Runs, "run", "runs"))
		}
	}
	return string(rec)
}
