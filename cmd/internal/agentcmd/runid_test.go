package agentcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bad run id is called wrongly: exit status 2, one line naming the
// problem, nothing written in the data dir.
func TestBadRunIDExitStatus(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--goal", "x", "--url", "http://127.0.0.1:1/", "--run-id", ".."},
		{"run", "--goal", "x", "--url", "http://127.0.0.1:1/", "--run-id", strings.Repeat("a", 300)},
		{"run", "--resume-run", "../x"},
		{"run", "--fork-run", "a/b"},
		{"runs", "create", "--goal", "x", "--domain", "a.com", "--id", "../x"},
	} {
		dir := t.TempDir()
		var out, errb bytes.Buffer
		code := agentMain(append(args, "--data-dir", filepath.Join(dir, "data")), strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "invalid run: run id") || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
		if ents, _ := os.ReadDir(filepath.Join(dir, "data", "runs")); len(ents) != 0 {
			t.Errorf("%v wrote %v", args, ents)
		}
	}
}
