//go:build !unix

package run

// signalAlive cannot tell here: a run is taken to be alive.
func signalAlive(int) bool { return true }
