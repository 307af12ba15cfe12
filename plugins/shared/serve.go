package shared

import (
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// Logger returns the logger a plugin should use: hclog JSON on stderr,
// which the host parses and re-logs under the plugin's name.
func Logger(name string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      hclog.Debug,
		Output:     os.Stderr,
		JSONFormat: true,
	})
}

// ServeBrowser serves a browser plugin and returns when the host is done
// with it. Call it from main; it does not return on a handshake error
// without a host (it exits with status 1).
func ServeBrowser(impl Browser, logger hclog.Logger) {
	serve(KindBrowser, &BrowserPlugin{Impl: impl}, logger)
}

// ServeModel serves an LLM plugin.
func ServeModel(impl Model, logger hclog.Logger) {
	serve(KindLLM, &ModelPlugin{Impl: impl}, logger)
}

func serve(kind string, p plugin.Plugin, logger hclog.Logger) {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{ProtocolVersion: {kind: p}},
		GRPCServer:       GRPCServer,
		Logger:           logger,
	})
}
