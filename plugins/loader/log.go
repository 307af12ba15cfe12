package loader

import (
	"context"
	"io"
	"log"
	"log/slog"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// hclogSlog adapts the host's slog.Logger to the hclog.Logger go-plugin
// wants. Every line, from go-plugin itself or parsed from the plugin's
// stderr, is logged with plugin=<name>; go-plugin's own sub-names (the
// binary's file name) are dropped so built-in plugins, which all run the
// engine binary, stay apart by their plugin name.
type hclogSlog struct {
	l     *slog.Logger
	name  string
	args  []any
	level hclog.Level
	// quiet is set once the host ends the plugin on purpose: go-plugin's
	// complaints about the exit are then expected, and logged at debug.
	quiet *atomic.Bool
}

func newPluginLogger(l *slog.Logger, name string) hclog.Logger {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return &hclogSlog{l: l.With("plugin", name), name: name, level: hclog.Trace, quiet: new(atomic.Bool)}
}

// expectExit marks the plugin's end as intended.
func expectExit(l hclog.Logger) {
	if h, ok := l.(*hclogSlog); ok {
		h.quiet.Store(true)
	}
}

func toSlog(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace, hclog.Debug:
		return slog.LevelDebug
	case hclog.Info, hclog.NoLevel, hclog.DefaultLevel:
		return slog.LevelInfo
	case hclog.Warn:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

func (h *hclogSlog) Log(level hclog.Level, msg string, args ...interface{}) {
	if level == hclog.Off || level < h.level && level != hclog.NoLevel {
		return
	}
	if h.quiet.Load() && level > hclog.Debug && (msg == "plugin failed to exit gracefully" || msg == "plugin process exited") {
		level = hclog.Debug
	}
	all := append(append([]any{}, h.args...), args...)
	// hclog's "@module" and timestamps from parsed plugin lines add noise.
	h.l.Log(context.Background(), toSlog(level), msg, all...)
}

func (h *hclogSlog) Trace(msg string, args ...interface{}) { h.Log(hclog.Trace, msg, args...) }
func (h *hclogSlog) Debug(msg string, args ...interface{}) { h.Log(hclog.Debug, msg, args...) }
func (h *hclogSlog) Info(msg string, args ...interface{})  { h.Log(hclog.Info, msg, args...) }
func (h *hclogSlog) Warn(msg string, args ...interface{})  { h.Log(hclog.Warn, msg, args...) }
func (h *hclogSlog) Error(msg string, args ...interface{}) { h.Log(hclog.Error, msg, args...) }

func (h *hclogSlog) enabled(level hclog.Level) bool {
	return level >= h.level && h.l.Enabled(context.Background(), toSlog(level))
}

func (h *hclogSlog) IsTrace() bool { return h.enabled(hclog.Trace) }
func (h *hclogSlog) IsDebug() bool { return h.enabled(hclog.Debug) }
func (h *hclogSlog) IsInfo() bool  { return h.enabled(hclog.Info) }
func (h *hclogSlog) IsWarn() bool  { return h.enabled(hclog.Warn) }
func (h *hclogSlog) IsError() bool { return h.enabled(hclog.Error) }

func (h *hclogSlog) ImpliedArgs() []interface{} { return h.args }

func (h *hclogSlog) With(args ...interface{}) hclog.Logger {
	c := *h
	c.args = append(append([]any{}, h.args...), args...)
	return &c
}

func (h *hclogSlog) Name() string                   { return h.name }
func (h *hclogSlog) Named(string) hclog.Logger      { return h }
func (h *hclogSlog) ResetNamed(string) hclog.Logger { return h }
func (h *hclogSlog) SetLevel(level hclog.Level)     { h.level = level }
func (h *hclogSlog) GetLevel() hclog.Level          { return h.level }
func (h *hclogSlog) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return slog.NewLogLogger(h.l.Handler(), slog.LevelInfo).Writer()
}
func (h *hclogSlog) StandardLogger(*hclog.StandardLoggerOptions) *log.Logger {
	return slog.NewLogLogger(h.l.Handler(), slog.LevelInfo)
}

var _ hclog.Logger = (*hclogSlog)(nil)
