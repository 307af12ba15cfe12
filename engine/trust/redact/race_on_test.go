//go:build race

package redact

// raceEnabled: under the race detector sync.Pool drops items at random, so
// regexp allocates where it otherwise would not.
const raceEnabled = true
