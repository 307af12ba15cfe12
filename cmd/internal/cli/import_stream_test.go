package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/api"
)

// writeExport writes an export document of n lessons to a file; bad, if
// not negative, is the index of a lesson with an unknown category.
func writeExport(t *testing.T, n, bad int) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`{"format":"engine-export","version":1,"exported_at":"2026-03-01T00:00:00Z","lessons":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		category := "error_recovery"
		if i == bad {
			category = "folklore"
		}
		fmt.Fprintf(&b, `{"lesson":"scroll the element into view and wait for the overlay to close before clicking it again (%d)","category":%q,"failed_command":"click","error_pattern":"not visible %d","domain":"site%d.example","use_count":1,"created_at":"2026-03-01","last_used":"2026-03-01","source":"learned","triggered_domains":[]}`, i, category, i, i%50)
	}
	b.WriteString(`]}`)
	if b.Len() <= api.StreamImport {
		t.Fatalf("the export is %d bytes, not over %d: it would not stream", b.Len(), api.StreamImport)
	}
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A large file is imported as it streams: every lesson lands; a bad lesson
// past the first chunk is exit 2 naming the file and its index in the
// file, and the data dir is as it was.
func TestImportStreams(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"--data-dir", dir}, args...), strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	bad := writeExport(t, 5000, 4321)
	code, _, stderr := run("import", bad)
	if code != 2 || !strings.Contains(stderr, bad+": lessons[4321]: ") {
		t.Fatalf("a bad lesson: exit %d, stderr %q; want exit 2 naming %s: lessons[4321]", code, stderr, bad)
	}
	if code, out, _ := run("query", "lessons", "--domain", "site7.example"); code != 0 || strings.Contains(out, "scroll the element") {
		t.Fatalf("after a refused import: exit %d, %s; want none of its lessons", code, out)
	}
	good := writeExport(t, 5000, -1)
	if code, out, stderr := run("import", good); code != 0 || out != "imported 5000 lessons\n" {
		t.Fatalf("import: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// A large two-tier memory.json (no "format") is read whole.
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`{"format":"engine-export","version":1,"exported_at":"2026-03-01T00:00:00Z",`), []byte(`{"version":1,`), 1)
	b = bytes.ReplaceAll(b, []byte(`(`), []byte(`[`))
	mj := filepath.Join(t.TempDir(), "memory.json")
	if err := os.WriteFile(mj, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := run("import", mj); code != 0 || out != "imported 5000 lessons\n" {
		t.Fatalf("import of a memory.json: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}
