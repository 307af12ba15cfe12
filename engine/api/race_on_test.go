//go:build race

package api_test

// raceEnabled: the race detector slows every request about tenfold, so the
// load test sends fewer (the races it looks for need concurrency, not volume).
const raceEnabled = true
