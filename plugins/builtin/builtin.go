// Package builtin lists the plugins that ship inside the engine binary and
// serves one of them when the engine runs as its own plugin subprocess
// (`engine __plugin KIND NAME`, started by plugins/loader).
package builtin

import (
	"fmt"
	"os"
	"sort"

	chromedpbrowser "github.com/engine-dev/engine/plugins/chromedp"
	"github.com/engine-dev/engine/plugins/llm"
	"github.com/engine-dev/engine/plugins/scripted"
	"github.com/engine-dev/engine/plugins/shared"
	"github.com/engine-dev/engine/plugins/static"
)

// Command is the hidden engine subcommand that serves a built-in plugin.
const Command = "__plugin"

// Plugin is one built-in plugin.
type Plugin struct {
	Kind string
	Name string
	// NewBrowser or NewModel makes a fresh, unopened instance.
	NewBrowser func() shared.Browser
	NewModel   func() shared.Model
}

// Info is the plugin's Describe answer, without starting anything.
func (p Plugin) Info() shared.Info {
	if p.NewBrowser != nil {
		return p.NewBrowser().Describe()
	}
	return p.NewModel().Describe()
}

var registry = append([]Plugin{
	{Kind: shared.KindBrowser, Name: "chromedp", NewBrowser: func() shared.Browser { return chromedpbrowser.New() }},
	{Kind: shared.KindBrowser, Name: "static", NewBrowser: func() shared.Browser { return static.New() }},
	{Kind: shared.KindLLM, Name: "scripted", NewModel: func() shared.Model { return scripted.New(nil) }},
}, llmProviders()...)

// llmProviders lists the langchaingo providers, one plugin each.
func llmProviders() []Plugin {
	var out []Plugin
	for _, p := range llm.Providers {
		name := p.Name
		out = append(out, Plugin{Kind: shared.KindLLM, Name: name, NewModel: func() shared.Model { return llm.New(name) }})
	}
	return out
}

// All returns the built-in plugins, browsers first, each kind by name.
func All() []Plugin {
	out := append([]Plugin(nil), registry...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Lookup finds a built-in plugin by kind and name.
func Lookup(kind, name string) (Plugin, bool) {
	for _, p := range registry {
		if p.Kind == kind && p.Name == name {
			return p, true
		}
	}
	return Plugin{}, false
}

// Main serves the built-in plugin args name ([KIND, NAME]) on this process's
// stdio, as go-plugin expects, and returns the exit status once the host is
// done with it. Started by hand (without the host's magic cookie) it says
// so and returns 1.
func Main(args []string) int {
	if len(args) != 2 {
		fmt.Fprintf(os.Stderr, "usage: engine %s KIND NAME (started by the engine, not by hand)\n", Command)
		return 2
	}
	p, ok := Lookup(args[0], args[1])
	if !ok {
		fmt.Fprintf(os.Stderr, "engine %s: no built-in %s plugin %q\n", Command, args[0], args[1])
		return 2
	}
	if os.Getenv(shared.MagicCookieKey) != shared.MagicCookieValue {
		fmt.Fprintf(os.Stderr, "engine %s %s %s: this is a plugin process; the engine starts it (--browser/--llm)\n", Command, args[0], args[1])
		return 1
	}
	logger := shared.Logger(p.Name)
	if p.NewBrowser != nil {
		b := p.NewBrowser()
		shared.ServeBrowser(b, logger)
		// The host is gone or done: make sure the browser goes too.
		_ = b.Close()
		return 0
	}
	shared.ServeModel(p.NewModel(), logger)
	return 0
}
