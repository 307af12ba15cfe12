package loader

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/engine-dev/engine/plugins/builtin"
	"github.com/engine-dev/engine/plugins/shared"
)

// Info is one available plugin, as `engine plugins list` shows it.
type Info struct {
	shared.Info
	// Source is "builtin", "plugin-dir" or "path".
	Source string `json:"source"`
	// Path is the executable of an external plugin.
	Path string `json:"path,omitempty"`
	// Shadowed is set when a plugin of the same kind and name that comes
	// earlier in the search order hides this one.
	Shadowed bool `json:"shadowed,omitempty"`
	// Error is set when an external plugin could not be described.
	Error string `json:"error,omitempty"`
	// NotStarted says why an external plugin was listed by its file alone:
	// it is not pinned in the checksum file and the caller did not ask to
	// run it (ListOptions.Describe), so its kind and version are unknown.
	NotStarted string `json:"not_started,omitempty"`
}

// ListOptions configure List.
type ListOptions struct {
	Options
	// Describe starts every external plugin to ask what it is, pinned or
	// not. Without it only those the checksum file pins are started
	// (go-plugin checks the pin before running them): listing plugins must
	// not run whatever engine-plugin-* happens to lie on PATH.
	Describe bool
}

// candidate is a place a plugin may come from.
type candidate struct {
	name   string
	source string
	path   string // external only
	kind   string // built-ins only; externals tell by Describe
}

// externals lists engine-plugin-* executables: the plugin dir first, then
// PATH in order; the first of a name wins.
func (o Options) externals() []candidate {
	var dirs []struct{ dir, source string }
	if d := o.pluginDir(); d != "" {
		dirs = append(dirs, struct{ dir, source string }{d, SourcePluginDir})
	}
	if !o.NoPath {
		for _, d := range filepath.SplitList(os.Getenv("PATH")) {
			if d != "" {
				dirs = append(dirs, struct{ dir, source string }{d, SourcePath})
			}
		}
	}
	var out []candidate
	seen := map[string]bool{}
	for _, d := range dirs {
		ents, err := os.ReadDir(d.dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			n := e.Name()
			if !strings.HasPrefix(n, ExternalPrefix) || len(n) == len(ExternalPrefix) {
				continue
			}
			p := filepath.Join(d.dir, n)
			st, err := os.Stat(p)
			if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
				continue
			}
			if seen[p] {
				continue
			}
			seen[p] = true
			out = append(out, candidate{name: strings.TrimPrefix(n, ExternalPrefix), source: d.source, path: p})
		}
	}
	return out
}

// find returns where the plugin kind/name comes from: a built-in first,
// then the plugin dir, then PATH.
func (o Options) find(kind, name string) (candidate, error) {
	if _, ok := builtin.Lookup(kind, name); ok {
		return candidate{name: name, source: SourceBuiltin, kind: kind}, nil
	}
	for _, c := range o.externals() {
		if c.name == name {
			return c, nil
		}
	}
	return candidate{}, o.notFound(kind, name)
}

// Find checks that a plugin of kind named name is available (a built-in,
// or an external one in the plugin dir or on PATH) without starting it: a
// name none has is an error wrapping ErrNotFound that lists those there are.
func Find(kind, name string, o Options) error {
	_, err := o.find(kind, name)
	return err
}

// notFound is the error for a missing plugin: it lists those available of
// that kind (built-ins by name; externals by name, without starting them).
func (o Options) notFound(kind, name string) error {
	var names []string
	for _, p := range builtin.All() {
		if p.Kind == kind {
			names = append(names, p.Name)
		}
	}
	for _, c := range o.externals() {
		names = append(names, c.name+" ("+c.path+")")
	}
	avail := "none"
	if len(names) > 0 {
		avail = strings.Join(names, ", ")
	}
	return fmt.Errorf("no %s plugin named %q (available: %s; external plugins are executables named %sNAME in $%s or on PATH): %w",
		kind, name, avail, ExternalPrefix, EnvPluginDir, ErrNotFound)
}

// List returns every available plugin: the built-ins (described without
// starting them) and each external one — started and asked to Describe
// itself, then stopped, when it is pinned in the checksum file or
// o.Describe is set; else listed by its file with NotStarted set. A broken
// external plugin is listed with Error set.
func List(ctx context.Context, o ListOptions) ([]Info, error) {
	var out []Info
	type key struct{ kind, name string }
	seen := map[key]bool{}
	for _, p := range builtin.All() {
		out = append(out, Info{Info: p.Info(), Source: SourceBuiltin})
		seen[key{p.Kind, p.Name}] = true
	}
	for _, c := range o.externals() {
		info := Info{Info: shared.Info{Name: c.name}, Source: c.source, Path: c.path}
		if !o.Describe && !o.pinned(c.path) {
			info.NotStarted = fmt.Sprintf("not pinned in $%s: not run to ask what it is (plugins list --describe runs it)", EnvChecksums)
			out = append(out, info)
			continue
		}
		d, err := describeExternal(ctx, o.Options, c)
		if err != nil {
			info.Error = strings.TrimPrefix(err.Error(), c.label("")+": ")
		} else {
			info.Info = d
			info.Info.Name = c.name
		}
		k := key{info.Kind, info.Name}
		if info.Error == "" && seen[k] {
			info.Shadowed = true
		}
		seen[k] = true
		out = append(out, info)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// pinned reports whether the checksum file lists the plugin at path (a
// mismatch is found when it is started, by go-plugin, before it runs).
func (o Options) pinned(path string) bool {
	f := o.checksums()
	if f == "" {
		return false
	}
	_, err := secureConfig(f, path)
	return err == nil
}

// describeExternal starts an external plugin, asks what it is (a browser,
// else an LLM) and stops it.
func describeExternal(ctx context.Context, o Options, c candidate) (shared.Info, error) {
	p, err := start(ctx, o, c)
	if err != nil {
		return shared.Info{}, err
	}
	defer p.stop()
	return p.describeAny(ctx)
}
