package host

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
	os.Exit(m.Run())
}
