package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrivacyReportsAndMakePrivateTightens: a data dir an older engine (or
// a umask) left readable by others is reported, entry by entry counted;
// MakePrivate takes the group and other bits away, never following a
// link out of the dir; then the check is clean.
func TestPrivacyReportsAndMakePrivateTightens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	run := filepath.Join(dir, "runs", "run_1")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Join(dir, "runs"), 0o700)
	os.WriteFile(filepath.Join(run, "llm.jsonl"), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(run, "final.png"), []byte("png"), 0o600)
	outside := filepath.Join(t.TempDir(), "outside.txt")
	os.WriteFile(outside, []byte("not ours"), 0o644)
	os.Symlink(outside, filepath.Join(run, "link"))

	c := Privacy(dir)
	if c.Status != Warn || !strings.Contains(c.Detail, "3 files or folders") || !strings.Contains(c.Detail, "0755") {
		t.Fatalf("loose dir: %s %q", c.Status, c.Detail)
	}
	n, err := MakePrivate(dir)
	if err != nil || n != 3 {
		t.Fatalf("MakePrivate: %d %v", n, err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, run: 0o700, filepath.Join(run, "llm.jsonl"): 0o600, filepath.Join(run, "final.png"): 0o600, outside: 0o644} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %04o", path, fi.Mode().Perm(), err, want)
		}
	}
	if c := Privacy(dir); c.Status != OK {
		t.Fatalf("after MakePrivate: %s %q", c.Status, c.Detail)
	}
	if c := Privacy(filepath.Join(dir, "nope")); c.Status != OK || c.Detail != "no data dir" {
		t.Fatalf("no data dir: %s %q", c.Status, c.Detail)
	}
}
