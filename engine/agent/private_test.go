package agent

import (
	"io/fs"
	"path/filepath"
	"testing"
)

// A run's folder admits no other user: its directories (runs/ included)
// are 0700 and every file in it — the action and model logs, events,
// manifest, screenshots — 0600, whatever the process's umask.
func TestRunFolderIsPrivate(t *testing.T) {
	db := openDisk(t)
	cfg := config(t, db, newShop(), &fakeModel{p: naive})
	cfg.RunsDir = filepath.Join(t.TempDir(), "runs")
	res := mustRun(t, cfg)
	seen := map[string]bool{}
	err := filepath.WalkDir(cfg.RunsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		if !d.IsDir() {
			seen[filepath.Ext(p)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Dir == "" || !seen[".jsonl"] || !seen[".json"] || !seen[".png"] {
		t.Fatalf("run folder %q holds file kinds %v; want the logs, the manifest and screenshots", res.Dir, seen)
	}
}
