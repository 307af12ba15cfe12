package shared

import (
	"context"

	"github.com/engine-dev/engine/engine"
)

// Browser is what a browser plugin written in Go implements. Describe and
// Open come first; then the engine.Browser calls.
type Browser interface {
	Describe() Info
	// Open starts the browser with the host's options.
	Open(ctx context.Context, options map[string]string) error
	engine.Browser
}

// Model is what an LLM plugin written in Go implements.
type Model interface {
	Describe() Info
	// Open selects the model and checks the configuration, such as the
	// API key's environment variable.
	Open(ctx context.Context, options map[string]string) error
	engine.Model
}
