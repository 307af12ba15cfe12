package agentcmd

import (
	"io"
	"os"
	"testing"

	"github.com/engine-dev/engine/cmd/internal/cli"
	"github.com/engine-dev/engine/plugins/builtin"
	chromedpbrowser "github.com/engine-dev/engine/plugins/chromedp"
	"github.com/engine-dev/engine/plugins/loader"
)

// TestMain lets this test binary be engine-agent serving its built-in
// plugins: the plugin host starts them as `SELF __plugin KIND NAME`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == builtin.Command {
		os.Exit(builtin.Main(os.Args[2:]))
	}
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}

// agentMain is engine-agent's main: the CLI with this package's commands.
func agentMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Main(args, stdin, stdout, stderr, Commands)
}

// haveChromium reports a chromium the chromedp plugin can use.
func haveChromium() bool {
	_, err := chromedpbrowser.FindChromium(os.Getenv(loader.EnvChromium))
	return err == nil
}
