// Package shared holds what both sides of the plugin protocol agree on: the
// go-plugin handshake, the versioned plugin sets, the interfaces a Go plugin
// implements, and the gRPC glue between those interfaces and the generated
// code in plugins/proto/v1.
//
// Host side: grpc_client_*.go. Plugin side: grpc_server_*.go and serve.go.
// It imports only the engine interfaces package, never the memory.
package shared

import (
	"github.com/hashicorp/go-plugin"
)

// ProtocolVersion is the plugin protocol version this engine speaks. A
// future version 2 is added to VersionedPlugins beside 1, so old plugins keep
// working.
const ProtocolVersion = 1

// The magic cookie: a plugin started by hand (not by the engine) sees it
// missing and says so instead of waiting for a handshake.
const (
	MagicCookieKey   = "ENGINE_PLUGIN_MAGIC_COOKIE"
	MagicCookieValue = "5b0b2a4c6f1e4e53a1f0d3c8e2b7a9d4-engine-plugin"
)

// Plugin kinds, also the names of the plugins in a go-plugin PluginSet.
const (
	KindBrowser = "browser"
	KindLLM     = "llm"
)

// Handshake is the go-plugin handshake: the protocol version here is the
// default; VersionedPlugins negotiates the real one.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   MagicCookieKey,
	MagicCookieValue: MagicCookieValue,
}

// HostPluginSets is what the host accepts: each protocol version it speaks,
// and the plugins of that version.
func HostPluginSets() map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		1: {
			KindBrowser: &BrowserPlugin{},
			KindLLM:     &ModelPlugin{},
		},
	}
}

// Info describes a plugin: what Describe returns.
type Info struct {
	Name            string   `json:"name"`
	Version         string   `json:"version"`
	Kind            string   `json:"kind"`
	Capabilities    []string `json:"capabilities,omitempty"`
	ProtocolVersion int      `json:"protocol_version"`
	Description     string   `json:"description,omitempty"`
}

// Option keys the host sends in OpenRequest.options.
const (
	// Browser options.
	OptChromiumPath = "chromium_path" // chromedp: the browser binary
	OptHeadless     = "headless"      // chromedp: "false" shows a window
	OptDebugURL     = "debug_url"     // attach to a running Chrome (chromedp)
	OptViewport     = "viewport"      // "1280x800"
	OptNavTimeout   = "nav_timeout"   // Go duration, bound on page loads

	// Model options.
	OptModel     = "model"      // provider model name
	OptBaseURL   = "base_url"   // OpenAI-compatible server, ollama server
	OptRulesFile = "rules_file" // scripted: absolute path of the rules file
	OptTimeout   = "timeout"    // Go duration bounding one provider request
	OptMaxTokens = "max_tokens" // cap on an answer's tokens
)
