// Package testplugin is a plugin that misbehaves on purpose, for the
// subprocess fault tests of plugins/loader and cmd/engine. Test binaries serve
// it when ENGINE_TESTPLUGIN names a mode (see Main); a tiny shell script
// named engine-plugin-NAME that sets the variable and execs the test binary
// makes it an external plugin.
package testplugin

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/plugins/shared"
)

// Env names the mode.
const Env = "ENGINE_TESTPLUGIN"

// Modes:
//
//	echo        an LLM that answers with the last message; logs each call
//	crash       an LLM whose Complete exits the process (status 7)
//	hang        an LLM whose Complete never returns, ignoring cancellation
//	browser     a browser with one page whose Act("crash") exits the process
//	            and whose Act("hang") never returns
//	version2    an LLM served only at protocol version 2
//	garbage     prints a line that is not a handshake, then sleeps
//	badkind     says it is a browser while serving the Model service
func Main(mode string) int {
	logger := shared.Logger("testplugin-" + mode)
	switch mode {
	case "echo", "crash", "hang", "badkind":
		shared.ServeModel(&model{mode: mode, log: logger}, logger)
	case "browser":
		shared.ServeBrowser(&browser{}, logger)
	case "version2":
		plugin.Serve(&plugin.ServeConfig{
			HandshakeConfig:  shared.Handshake,
			VersionedPlugins: map[int]plugin.PluginSet{2: {shared.KindLLM: &shared.ModelPlugin{Impl: &model{mode: "echo", log: logger}}}},
			GRPCServer:       plugin.DefaultGRPCServer,
			Logger:           logger,
		})
	case "garbage":
		fmt.Println("hello, I am not a plugin")
		time.Sleep(time.Minute)
	default:
		fmt.Fprintf(os.Stderr, "testplugin: unknown mode %q\n", mode)
		return 2
	}
	return 0
}

type model struct {
	mode string
	log  interface{ Info(string, ...any) }
}

func (m *model) Describe() shared.Info {
	kind := shared.KindLLM
	if m.mode == "badkind" {
		kind = shared.KindBrowser
	}
	return shared.Info{Name: "test-" + m.mode, Version: "0.0.1", Kind: kind, ProtocolVersion: shared.ProtocolVersion,
		Capabilities: []string{"tools", "usage"}, Description: "misbehaves on purpose: " + m.mode}
}

func (m *model) Open(context.Context, map[string]string) error { return nil }

func (m *model) Complete(ctx context.Context, req engine.ModelRequest) (*engine.ModelResponse, error) {
	last := ""
	if n := len(req.Messages); n > 0 {
		last = req.Messages[n-1].Content
	}
	m.log.Info("complete called", "last", last)
	switch m.mode {
	case "crash":
		os.Exit(7)
	case "hang":
		select {}
	}
	return &engine.ModelResponse{Text: "echo: " + last, Usage: engine.Usage{PromptTokens: len(last), CompletionTokens: 1}}, nil
}

type browser struct{ url string }

func (b *browser) Describe() shared.Info {
	return shared.Info{Name: "test-browser", Version: "0.0.1", Kind: shared.KindBrowser, ProtocolVersion: shared.ProtocolVersion}
}
func (b *browser) Open(context.Context, map[string]string) error { return nil }
func (b *browser) Navigate(_ context.Context, url string) error {
	if !strings.HasPrefix(url, "http") {
		return &engine.ActionError{Code: engine.CodeNavigation, Message: "cannot load " + url}
	}
	b.url = url
	return nil
}
func (b *browser) Snapshot(context.Context) (*engine.Snapshot, error) {
	return &engine.Snapshot{URL: b.url, Title: "Test", Elements: []engine.Element{{Ref: "e1", Role: "button", Name: "OK"}}, Tree: `- button "OK" [ref=e1]`}, nil
}
func (b *browser) Act(_ context.Context, a engine.Action) error {
	switch a.Value {
	case "crash":
		os.Exit(7)
	case "hang":
		select {}
	}
	if a.Ref != "e1" {
		return &engine.ActionError{Code: engine.CodeStaleRef, Message: "stale ref " + a.Ref}
	}
	return nil
}
func (b *browser) Screenshot(context.Context) ([]byte, error) { return []byte("\x89PNG"), nil }
func (b *browser) Close() error                               { return nil }
