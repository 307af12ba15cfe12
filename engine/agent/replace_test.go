package agent

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Each write leaves the file holding that version, whole (a shorter one
// after a longer one included); close leaves the file alone in its
// folder, as a rename per version does.
func TestReplacerVersions(t *testing.T) {
	for _, noSwap := range []bool{false, true} {
		dir := t.TempDir()
		r := replacer{path: filepath.Join(dir, ManifestFile), noSwap: noSwap}
		for i, v := range []string{"first version\n", strings.Repeat("long ", 500), "short\n", "", "last\n"} {
			if err := r.write([]byte(v)); err != nil {
				t.Fatalf("noSwap %v, version %d: %v", noSwap, i, err)
			}
			if b, err := os.ReadFile(r.path); err != nil || string(b) != v {
				t.Fatalf("noSwap %v, version %d: read %q, %v; want %q", noSwap, i, b, err, v)
			}
		}
		r.close()
		if got := names(t, dir); !slices.Equal(got, []string{ManifestFile}) {
			t.Fatalf("noSwap %v: the folder holds %v", noSwap, got)
		}
	}
}

// On Linux the versions alternate between two files: none is created per
// version.
func TestReplacerSwapsTwoFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("swapping two names is Linux's renameat2")
	}
	dir := t.TempDir()
	r := replacer{path: filepath.Join(dir, ManifestFile)}
	var files []os.FileInfo
	for i := range 5 {
		if err := r.write([]byte(strings.Repeat("v", i+1))); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(r.path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fi)
	}
	if r.noSwap {
		t.Skip("this file system cannot swap two names")
	}
	for i := 2; i < len(files); i++ {
		if !os.SameFile(files[i], files[i-2]) || os.SameFile(files[i], files[i-1]) {
			t.Fatalf("version %d is not written over version %d's file", i, i-2)
		}
	}
	r.close()
	if got := names(t, dir); !slices.Equal(got, []string{ManifestFile}) {
		t.Fatalf("the folder holds %v", got)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
