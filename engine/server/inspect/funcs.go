package inspect

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/run"
)

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	},
	"dur": func(d time.Duration) string {
		if d <= 0 {
			return "—"
		}
		if d < time.Second {
			return d.Round(time.Millisecond).String()
		}
		return d.Round(100 * time.Millisecond).String()
	},
	"ms": func(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() },
	"dash": func(s string) string {
		if s == "" {
			return "—"
		}
		return s
	},
	"join": strings.Join,
	"add":  func(a, b int) int { return a + b },
	// bar is the width in pixels (of 100) of a confidence in [0, 1].
	"bar": func(c float64) int { return int(max(0, min(1, c))*100 + 0.5) },
	"pct": func(c float64) string { return fmt.Sprintf("%.2f", c) },
	"tokens": func(u *engine.Usage) string {
		if u == nil {
			return "—"
		}
		return fmt.Sprintf("%d in, %d out", u.PromptTokens, u.CompletionTokens)
	},
	// plural is "1 <one>" or "<n> <many>".
	"plural": func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", n, many)
	},
	"statusClass": func(s run.Status) string { return "st-" + string(s) },
	"kb": func(n int) string {
		if n < 1024 {
			return fmt.Sprintf("%d bytes", n)
		}
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	},
}

// navEntry is one link of the header.
type navEntry struct{ Key, Name, Href string }

var nav = []navEntry{
	{"runs", "Runs", "/runs"}, {"lessons", "Lessons", "/lessons"}, {"facts", "Facts", "/facts"},
	{"selectors", "Selectors", "/selectors"}, {"trajectories", "Trajectories", "/trajectories"}, {"sessions", "Sessions", "/sessions"},
}

func init() { funcs["navEntries"] = func() []navEntry { return nav } }
