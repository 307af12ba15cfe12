package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// memoryJSON is a two-tier memory.json with a seed (its exact text), a
// site lesson and a global lesson with its triggering domains.
const memoryJSON = `{
  "version": 1,
  "lessons": [
    {"lesson": "If fill fails, click(ref) to focus the input, then type(text) to enter text.", "category": "tool_fallback",
     "failed_command": "fill", "error_pattern": "too many arguments", "domain": null, "use_count": 3,
     "created_at": "2026-03-01", "last_used": "2026-03-10", "source": "seed", "triggered_domains": ["google.com", "amazon.com"]},
    {"lesson": "Click the cookie acceptance banner before interacting with product elements.", "category": "site_specific",
     "failed_command": null, "error_pattern": null, "domain": "amazon.com", "use_count": 4,
     "created_at": "2026-03-02", "last_used": "2026-03-09", "source": "learned", "triggered_domains": ["amazon.com"]},
    {"lesson": "When click fails with 'intercepts pointer events', try press(key='Escape') first.", "category": "error_recovery",
     "failed_command": "click", "error_pattern": "intercepts pointer events", "domain": null, "use_count": 2,
     "created_at": "2026-03-03", "last_used": "2026-03-08", "source": "learned", "triggered_domains": ["google.com", "bing.com"]}
  ]
}`

// importExport imports in into a fresh memory and writes it back with
// write.
func importExport(t *testing.T, in *Document, src string, write func(*Document) []byte) []byte {
	t.Helper()
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.mem.Import(ctx, in, src); err != nil {
		t.Fatal(err)
	}
	d, err := e.mem.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return write(d)
}

func memoryJSONOf(t *testing.T) func(*Document) []byte {
	return func(d *Document) []byte {
		var b bytes.Buffer
		if _, err := WriteMemoryJSON(&b, d); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
}

// TestMemoryJSONRoundTrip: import → export → import → export gives the
// same memory.json, and every field of every lesson of the original file
// survives (the ten fields the format holds).
func TestMemoryJSONRoundTrip(t *testing.T) {
	a, err := ParseFile([]byte(memoryJSON), "memory.json")
	if err != nil {
		t.Fatal(err)
	}
	b := importExport(t, a, "memory.json", memoryJSONOf(t))
	db, err := ParseFile(b, "export.json")
	if err != nil {
		t.Fatalf("the export does not read back: %v\n%s", err, b)
	}
	c := importExport(t, db, "export.json", memoryJSONOf(t))
	if !bytes.Equal(b, c) {
		t.Fatalf("second export differs:\n%s\nfirst:\n%s", c, b)
	}
	norm := func(raw []byte) map[string]map[string]any {
		var f struct {
			Version int              `json:"version"`
			Lessons []map[string]any `json:"lessons"`
		}
		if err := json.Unmarshal(raw, &f); err != nil || f.Version != 1 {
			t.Fatalf("version %d, %v", f.Version, err)
		}
		out := map[string]map[string]any{}
		for _, l := range f.Lessons {
			out[l["lesson"].(string)] = l
		}
		return out
	}
	want, got := norm([]byte(memoryJSON)), norm(b)
	if len(got) != len(want) {
		t.Fatalf("exported %d lessons, want %d:\n%s", len(got), len(want), b)
	}
	for text, w := range want {
		if g := got[text]; !reflect.DeepEqual(g, w) {
			t.Errorf("lesson %q:\n got %v\nwant %v", text, g, w)
		}
	}
}

// TestAgentMemoryRoundTrip: an .agent-memory directory imported, exported
// as .agent-memory, imported again and exported again gives the same
// files; and what the first import read, the second reads too.
func TestAgentMemoryRoundTrip(t *testing.T) {
	root := t.TempDir()
	writeTree(t, filepath.Join(root, "a"), agentMemory)
	e := newEnv(t)
	a, _, err := e.mem.Read(filepath.Join(root, "a"))
	if err != nil {
		t.Fatal(err)
	}
	dirOf := func(name string) func(*Document) []byte {
		return func(d *Document) []byte {
			w, err := WriteAgentMemory(filepath.Join(root, name), d, t0)
			if err != nil || w.Files == 0 {
				t.Fatalf("write %s: %+v %v", name, w, err)
			}
			return nil
		}
	}
	importExport(t, a, "a", dirOf("b"))
	b, notes, err := e.mem.Read(filepath.Join(root, "b"))
	if err != nil || len(notes) != 0 {
		t.Fatalf("read back: %v %q", err, notes)
	}
	importExport(t, b, "b", dirOf("c"))
	fb, fc := tree(t, filepath.Join(root, "b")), tree(t, filepath.Join(root, "c"))
	if !reflect.DeepEqual(fb, fc) {
		t.Fatalf("second export differs:\n%v\nfirst:\n%v", fc, fb)
	}
	want := []string{
		"agent-runs/run_1710543210_abc.json",
		"domains/www.example.com/knowledge.json",
		"domains/www.example.com/selectors.json",
	}
	var names []string
	for n := range fb {
		if !strings.Contains(n, "/trajectories/") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, want) || len(fb) != 4 {
		t.Fatalf("files %v", fb)
	}
	// What the first import read of the original, the export holds: the
	// same facts, selectors, sessions and runs, and the unexpired
	// trajectory's goal and steps.
	a.Trajectories = a.Trajectories[:1] // the other one expired: the import skips it
	for i := range b.Trajectories {
		b.Trajectories[i].Domain = a.Trajectories[i].Domain
	}
	if !reflect.DeepEqual(a.Facts, b.Facts) || !reflect.DeepEqual(a.Selectors, b.Selectors) ||
		!reflect.DeepEqual(a.Sessions, b.Sessions) || !reflect.DeepEqual(a.Runs, b.Runs) {
		t.Errorf("read back differs:\nfacts %+v\n   vs %+v\nselectors %+v\n   vs %+v\nsessions %+v\n   vs %+v\nruns %+v\n   vs %+v",
			a.Facts, b.Facts, a.Selectors, b.Selectors, a.Sessions, b.Sessions, a.Runs, b.Runs)
	}
	if !reflect.DeepEqual(a.Trajectories, b.Trajectories) {
		t.Errorf("trajectories:\n%+v\nvs\n%+v", a.Trajectories, b.Trajectories)
	}
}

// tree reads every file under dir, by slash path.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
