// Package engine runs a browser agent whose every step is informed by memory.
//
// It defines the small interfaces the loop needs (Browser, Model); the
// memory itself lives in the subpackages (lesson, ...) over the kv layer.
// engine imports neither plugins/ nor cmd/: plugins implement these
// interfaces, and cmd/engine wires the two together.
package engine
