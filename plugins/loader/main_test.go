package loader

import (
	"os"
	"testing"

	"github.com/engine-dev/engine/plugins/builtin"
	"github.com/engine-dev/engine/plugins/internal/testplugin"
)

// TestMain lets this test binary be a plugin: the host starts built-ins as
// `SELF __plugin KIND NAME`, and the fault tests start it as an external
// plugin through a shell script that sets ENGINE_TESTPLUGIN.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == builtin.Command {
		os.Exit(builtin.Main(os.Args[2:]))
	}
	if mode := os.Getenv(testplugin.Env); mode != "" {
		os.Exit(testplugin.Main(mode))
	}
	// Plugins are this (maybe -race) binary; the race runtime sleeps 1s at
	// every exit unless told not to, which each plugin stop would pay.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}
