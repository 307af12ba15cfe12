package cli

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/run"
)

// completionWait bounds what a completion may spend reading memory: a
// shell waits on it at every Tab.
const completionWait = 2 * time.Second

// completionMax bounds the candidates a completion reads of each kind.
const completionMax = 500

// idArgs names, by command path, the commands whose arguments are ids of
// one kind, so the shell completes them from memory.
var idArgs = map[string]string{
	"engine lessons use": "lesson", "engine lessons edit": "lesson", "engine lessons show": "lesson",
	"engine lessons rm": "lesson", "engine lessons approve": "lesson", "engine lessons reject": "lesson",
	"engine history": "lesson", "engine retract": "lesson", "engine revert": "lesson",
	"engine runs show": "run", "engine runs update": "run", "engine runs complete": "run",
	"engine plans add-iteration": "run", "engine plans plan": "run", "engine query plan": "run",
	"engine recall domain": "domain",
}

// addCompletions makes the shell complete, from memory, the ids of the
// commands in idArgs, every --domain and --namespace. A completion reads
// memory only when the data dir exists (it never makes one) or a server
// is named, gives up after completionWait, and says nothing on failure:
// the shell then offers files, as without completion.
func (a *App) addCompletions(root *cobra.Command) {
	_ = root.RegisterFlagCompletionFunc("namespace", a.complete(func(ctx context.Context, m *MemoryClient) []string {
		ns, err := m.Namespaces(ctx)
		if err != nil {
			return nil
		}
		out := make([]string, 0, len(ns))
		for _, n := range ns {
			out = append(out, n.Name)
		}
		return out
	}))
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("domain") != nil {
			_ = c.RegisterFlagCompletionFunc("domain", a.complete(domains))
		}
		switch idArgs[c.CommandPath()] {
		case "lesson":
			c.ValidArgsFunction = a.completeArgs(lessonIDs)
		case "run":
			c.ValidArgsFunction = a.completeArgs(runIDs)
		case "domain":
			c.ValidArgsFunction = a.completeArgs(domains)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// complete is a flag completion from list.
func (a *App) complete(list func(context.Context, *MemoryClient) []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return a.candidates(list, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeArgs completes arguments from list, each id once.
func (a *App) completeArgs(list func(context.Context, *MemoryClient) []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, c := range a.candidates(list, toComplete) {
			if !slices.Contains(args, c) {
				out = append(out, c)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// candidates are list's answers that start with prefix, sorted, or none
// when memory cannot be read quickly.
func (a *App) candidates(list func(context.Context, *MemoryClient) []string, prefix string) []string {
	if os.Getenv("ENGINE_SERVER") == "" && a.StoreURL() == "" {
		dir, err := a.ResolveDataDir()
		if err != nil {
			return nil
		}
		if _, err := os.Stat(dir); err != nil {
			return nil // no memory yet: nothing to offer, and nothing made
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionWait)
	defer cancel()
	var out []string
	_ = a.withMemory(ctx, func(m *MemoryClient) error {
		for _, c := range list(ctx, m) {
			if strings.HasPrefix(c, prefix) && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func lessonIDs(ctx context.Context, m *MemoryClient) []string {
	var out []string
	_, _ = m.EachLesson(ctx, api.LessonFilter{}, completionMax, func(l lesson.Lesson) error {
		out = append(out, l.ID)
		return nil
	})
	return out
}

func runIDs(ctx context.Context, m *MemoryClient) []string {
	var out []string
	_, _ = m.EachRun(ctx, run.Filter{}, "", completionMax, func(r run.Manifest) error {
		out = append(out, r.RunID)
		return nil
	})
	return out
}

// domains are the domains lessons are bound to and runs ran on.
func domains(ctx context.Context, m *MemoryClient) []string {
	var out []string
	_, _ = m.EachLesson(ctx, api.LessonFilter{}, completionMax, func(l lesson.Lesson) error {
		if l.Domain != "" {
			out = append(out, l.Domain)
		}
		return nil
	})
	_, _ = m.EachRun(ctx, run.Filter{}, "", completionMax, func(r run.Manifest) error {
		if r.Domain != "" {
			out = append(out, r.Domain)
		}
		return nil
	})
	return out
}
