// Package loader is the engine's side of the plugin layer: it finds plugins
// (built into the engine binary, or executables named engine-plugin-NAME in
// ENGINE_PLUGIN_DIR or on PATH), starts them as go-plugin subprocesses over
// gRPC, and hands back values that satisfy engine.Browser and engine.Model.
//
// The agent loop calls:
//
//	b, err := loader.OpenBrowser(ctx, "chromedp", loader.BrowserOptions{})
//	defer b.Close()               // kills the subprocess (and its chromium)
//	m, err := loader.OpenModel(ctx, "openai:gpt-4o-mini", loader.ModelOptions{})
//	defer m.Close()
//	infos, err := loader.List(ctx, loader.ListOptions{})
//
// Every call has a timeout; a call that times out kills the plugin. A
// plugin that dies mid-call makes that call fail with an error wrapping
// ErrPluginDied; later calls fail at once. Memory never reaches a plugin.
package loader

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/hashicorp/go-plugin"
)

// Errors a caller can test for with errors.Is.
var (
	// ErrNotFound: no plugin of that kind has that name. The name is the
	// caller's input, so it is also engine.ErrInvalid (bad input).
	ErrNotFound = engine.MarkInvalid(errors.New("plugin not found"))
	// ErrPluginDied: the plugin process exited or broke the connection
	// during a call (or before it).
	ErrPluginDied = errors.New("plugin died")
	// ErrTimeout: a call took longer than its timeout; the plugin was killed.
	ErrTimeout = errors.New("plugin call timed out")
	// ErrVersionMismatch: the plugin speaks another protocol version.
	ErrVersionMismatch = errors.New("plugin protocol version mismatch")
	// ErrChecksum: an external plugin's binary does not match its pinned
	// checksum, or is not pinned while a checksum file is in use.
	ErrChecksum = errors.New("plugin checksum mismatch")
)

// Environment variables the host reads when the options leave a field empty.
const (
	EnvSelf      = "ENGINE_SELF"             // the engine-agent binary that serves built-ins
	EnvPluginDir = "ENGINE_PLUGIN_DIR"       // where external plugins live
	EnvChecksums = "ENGINE_PLUGIN_CHECKSUMS" // sha256sum-style file pinning external plugins
	EnvRules     = "ENGINE_LLM_RULES"        // scripted provider's rules file
	EnvChromium  = "ENGINE_CHROMIUM"         // chromium binary for the chromedp browser
)

// ExternalPrefix is the file name prefix of external plugin executables.
const ExternalPrefix = "engine-plugin-"

// Sources, as `engine plugins list` shows them.
const (
	SourceBuiltin   = "builtin"
	SourcePluginDir = "plugin-dir"
	SourcePath      = "path"
)

// Options are shared by every host call.
type Options struct {
	// Self is the engine-agent binary that serves the built-in plugins
	// (`Self __plugin KIND NAME`, with argv[0] "engine-agent"). Default:
	// $ENGINE_SELF, then os.Executable() (the host runs in engine-agent).
	Self string
	// PluginDir is searched for engine-plugin-NAME first. Default:
	// $ENGINE_PLUGIN_DIR.
	PluginDir string
	// NoPath turns off the search of $PATH for external plugins.
	NoPath bool
	// Checksums names a file of "SHA256HEX  NAME-OR-PATH" lines (sha256sum's
	// output). When set, every external plugin must be listed in it and
	// match; built-ins are part of the engine binary and need no entry.
	// Default: $ENGINE_PLUGIN_CHECKSUMS.
	Checksums string
	// Logger receives the plugins' logs (their stderr, parsed) and the
	// host's own, each with plugin=NAME. Default: discarded.
	Logger *slog.Logger
	// StartTimeout bounds start-up and handshake. Default 10s.
	StartTimeout time.Duration
	// CallTimeout bounds every call. Default: 60s for browsers, 5m for LLMs.
	CallTimeout time.Duration
}

// self returns the binary that serves the built-ins and, when it is not
// this process's own binary (ENGINE_SELF names another file), the checksum
// that must pin it: a variable in the environment must not be able to swap
// every built-in plugin for an arbitrary program unnoticed.
func (o Options) self() (string, *plugin.SecureConfig, error) {
	if o.Self != "" {
		return o.Self, nil, nil // set by the program itself
	}
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	s := os.Getenv(EnvSelf)
	if s == "" || sameFile(s, exe) {
		return exe, nil, nil
	}
	f := o.checksums()
	if f == "" {
		return "", nil, fmt.Errorf("$%s=%s is not this binary (%s): refusing to run it as the built-in plugins unless it is pinned in $%s: %w",
			EnvSelf, s, exe, EnvChecksums, ErrChecksum)
	}
	sc, err := secureConfig(f, s)
	if err != nil {
		return "", nil, fmt.Errorf("$%s=%s: %w", EnvSelf, s, err)
	}
	return s, sc, nil
}

// sameFile reports whether paths a and b name the same file.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

func (o Options) pluginDir() string {
	if o.PluginDir != "" {
		return o.PluginDir
	}
	return os.Getenv(EnvPluginDir)
}

func (o Options) checksums() string {
	if o.Checksums != "" {
		return o.Checksums
	}
	return os.Getenv(EnvChecksums)
}

func (o Options) startTimeout() time.Duration {
	if o.StartTimeout > 0 {
		return o.StartTimeout
	}
	return 10 * time.Second
}

// absPath makes a user-given path absolute, since the plugin's working
// directory is the host's but its meaning should not depend on that.
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
