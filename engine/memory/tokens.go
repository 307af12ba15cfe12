package memory

import "github.com/engine-dev/engine/engine/memory/token"

// Tokens is the store's bearer tokens (engine/memory/token): one set for
// the whole store, whichever namespace this memory is in.
func (m *Memory) Tokens() *token.Store { return token.New(m.root, m.opts.Now) }
