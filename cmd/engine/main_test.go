package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as the engine binary: scripts run
// `engine ...` as a real subprocess.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"engine": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs testdata/script/*.txtar: each reads like a user's
// terminal session. Set ENGINE_UPDATE_SCRIPTS=1 to rewrite expected output.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "../../testdata/script",
		UpdateScripts: os.Getenv("ENGINE_UPDATE_SCRIPTS") == "1",
		Cmds:          map[string]func(ts *testscript.TestScript, neg bool, args []string){"serve": serveSite, "waitfor": waitFor, "exits": exitsCmd},
		Condition:     scriptCondition,
		Setup: func(env *testscript.Env) error {
			env.Setenv("ENGINE_DATA_DIR", env.WorkDir+"/data")
			env.Setenv("HOME", env.WorkDir+"/home")
			return nil
		},
	})
}
