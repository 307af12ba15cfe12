package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/run"
	"github.com/engine-dev/engine/engine/memory/session"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// fuzzMem is two memories reused by every iteration of a fuzz target
// (opening badger costs ~100 ms, wiping a few keys does not).
type fuzzMem struct {
	a, b   kv.Store
	ma, mb *Archive
}

func newFuzzMem(tb testing.TB) *fuzzMem {
	fm := &fuzzMem{a: badgertest.Open(tb), b: badgertest.Open(tb)}
	now := func() time.Time { return t0 }
	fm.ma, fm.mb = newTest(fm.a, testOptions{Now: now}), newTest(fm.b, testOptions{Now: now})
	return fm
}

func (fm *fuzzMem) wipe(t *testing.T) {
	kvtest.Wipe(t, fm.a)
	kvtest.Wipe(t, fm.b)
}

func exportBytes(t *testing.T, m *Archive) []byte {
	t.Helper()
	d, err := m.Export(context.Background())
	if err != nil {
		t.Fatalf("export after import: %v", err)
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatalf("encode export: %v", err)
	}
	return b
}

// checkImported asserts the properties of a memory an import accepted: the
// memory reads back through every store's read path, exports, and the
// export imports into an empty memory without error and exports the same.
func checkImported(t *testing.T, fm *fuzzMem) {
	t.Helper()
	ctx := context.Background()
	m := fm.ma
	out := exportBytes(t, m)
	d, err := ParseFile(out, "export.json")
	if err != nil {
		t.Fatalf("the export does not parse: %v\n%s", err, out)
	}
	for _, l := range d.Lessons {
		if _, err := m.Lessons.RecallError(ctx, l.FailedCommand+" e1", "Error: "+l.ErrorPattern, l.Domain); err != nil {
			t.Fatalf("recall on error for %+v: %v", l, err)
		}
		if _, err := m.Lessons.RecallError(ctx, "fill e1 x", "too many arguments: x", l.Domain); err != nil {
			t.Fatalf("recall on a fill error: %v", err)
		}
		if l.Domain != "" {
			if _, err := m.Lessons.RecallDomain(ctx, l.Domain); err != nil {
				t.Fatalf("recall on domain: %v", err)
			}
		}
	}
	for _, f := range d.Facts {
		if _, err := m.Facts.Confident(ctx, f.Domain); err != nil {
			t.Fatalf("facts for %q: %v", f.Domain, err)
		}
	}
	for _, s := range d.Selectors {
		if _, err := m.Selectors.Known(ctx, "https://"+hostPart(s.Domain)+s.Path, 20); err != nil {
			t.Fatalf("selectors for %q: %v", s.Domain, err)
		}
		if _, err := m.Selectors.Lookup(ctx, "https://"+hostPart(s.Domain)+"/", s.Role, s.Name); err != nil {
			t.Fatalf("selector lookup for %+v: %v", s, err)
		}
	}
	for _, tr := range d.Trajectories {
		if _, err := m.Trajectories.Match(ctx, tr.Domain, tr.Goal); err != nil {
			t.Fatalf("trajectory match for %q on %q: %v", tr.Goal, tr.Domain, err)
		}
		if _, err := m.Trajectories.Get(ctx, tr.Domain, tr.ID); err != nil {
			t.Fatalf("trajectory %s: %v", tr.ID, err)
		}
	}
	for _, s := range d.Sessions {
		if _, err := m.Sessions.Recent(ctx, s.Domain, 5); err != nil {
			t.Fatalf("sessions for %q: %v", s.Domain, err)
		}
		if _, err := m.Sessions.List(ctx, session.Filter{Domain: s.Domain}); err != nil {
			t.Fatalf("sessions list for %q: %v", s.Domain, err)
		}
	}
	for _, r := range d.Runs {
		if _, err := m.Runs.Get(ctx, r.RunID); err != nil {
			t.Fatalf("run %s: %v", r.RunID, err)
		}
		if r.Domain != "" {
			if _, err := m.Runs.List(ctx, run.Filter{Domain: r.Domain}); err != nil {
				t.Fatalf("runs on %q: %v", r.Domain, err)
			}
		}
	}
	for _, p := range d.Plans {
		if _, err := m.Plans.Get(ctx, p.RunID); err != nil {
			t.Fatalf("plan of %s: %v", p.RunID, err)
		}
	}
	if _, err := fm.mb.Import(ctx, d, "export.json"); err != nil {
		t.Fatalf("the export does not import into an empty memory: %v\n%s", err, out)
	}
	if back := exportBytes(t, fm.mb); !bytes.Equal(out, back) {
		t.Fatalf("export → import → export differs:\n%s\n--- vs\n%s", out, back)
	}
}

// hostPart puts an IPv6 host in brackets for a URL.
func hostPart(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// checkNothingWritten asserts a refused import left the memory empty.
func checkNothingWritten(t *testing.T, m *Archive, err error) {
	t.Helper()
	if !engine.IsInvalid(err) {
		t.Fatalf("bad input refused with an error that is not an InvalidError: %v", err)
	}
	d, xerr := m.Export(context.Background())
	if xerr != nil {
		t.Fatal(xerr)
	}
	for _, c := range d.Count() {
		if c.Count != 0 {
			t.Fatalf("a refused import (%v) wrote %d %s", err, c.Count, c.Kind)
		}
	}
}

// FuzzArchiveImport feeds export documents and memory.json files to
// `engine import`: what it accepts must be readable through every store,
// export, and re-import into an empty memory giving the same export; what
// it refuses must write nothing.
func FuzzArchiveImport(f *testing.F) {
	seed, err := os.ReadFile("testdata/seed-export.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(bytes.ReplaceAll(seed, []byte(`"other.org"`), []byte(`"[::1]:8080"`)))
	f.Add(bytes.ReplaceAll(seed, []byte(`"example.com"`), []byte(`"bücher.de"`)))
	f.Add(bytes.ReplaceAll(seed, []byte(`"not an input"`), []byte(`"not an\u0000input"`)))
	f.Add(bytes.ReplaceAll(seed, []byte(`https://example.com/`), []byte(`http://[2001:db8::1]:8443/`)))
	f.Add([]byte(`{"version":1,"lessons":[{"lesson":"x","category":"error_recovery","failed_command":"fill","error_pattern":"a\u0000b"}]}`))
	f.Add([]byte(`{"format":"engine-export","version":1,"lessons":[],"facts":[{"domain":"..","type":"quirk","key":"k","value":"v","confidence":0.5}]}`))
	fm := newFuzzMem(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fm.wipe(t)
		d, err := ParseFile(data, "in.json")
		if err != nil {
			if !engine.IsInvalid(err) || !strings.Contains(err.Error(), "in.json") {
				t.Fatalf("parse error is not an InvalidError naming the file: %v", err)
			}
			return
		}
		if _, err := fm.ma.Import(context.Background(), d, "in.json"); err != nil {
			checkNothingWritten(t, fm.ma, err)
			return
		}
		checkImported(t, fm)
	})
}

// FuzzAgentMemory feeds .agent-memory directories (a host directory with
// knowledge.json, selectors.json, one trajectory, and one run manifest) to
// `engine import`, with the same properties as FuzzArchiveImport.
func FuzzAgentMemory(f *testing.F) {
	root := "testdata/agentmemory-seed/.agent-memory"
	read := func(p string) []byte {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	k, s, tr, r := read("domains/shop.example.com/knowledge.json"), read("domains/shop.example.com/selectors.json"),
		read("domains/shop.example.com/trajectories/t1.json"), read("agent-runs/run_1.json")
	f.Add("shop.example.com", k, s, tr, r)
	f.Add("bücher.de", k, s, tr, r)
	f.Add("..", k, s, tr, r)
	f.Add("-", k, s, tr, r)
	f.Add("[::1]", k, s, tr, bytes.ReplaceAll(r, []byte("https://shop.example.com/"), []byte("http://[::1]:8080/")))
	f.Add("shop.example.com", bytes.ReplaceAll(k, []byte(`"cookie-banner"`), []byte(`"cookie\u0000banner"`)), s, tr, r)
	f.Add("shop.example.com", k, bytes.ReplaceAll(s, []byte(`Search`), []byte(`Sea\u0000rch`)), tr, r)
	f.Add("shop.example.com", []byte(""), []byte("{"), []byte(`{"success":false}`), []byte(`{"runId":"x/y"}`))
	fm := newFuzzMem(f)
	f.Fuzz(func(t *testing.T, host string, knowledge, selectors, traj, manifest []byte) {
		if host == "" || host == "." || host == ".." || strings.ContainsAny(host, "/\x00") || len(host) > 200 {
			return // not a directory name
		}
		fm.wipe(t)
		dir := t.TempDir()
		hd := filepath.Join(dir, "domains", host)
		for p, b := range map[string][]byte{
			filepath.Join(hd, "knowledge.json"):       knowledge,
			filepath.Join(hd, "selectors.json"):       selectors,
			filepath.Join(hd, "trajectories/t1.json"): traj,
			filepath.Join(dir, "agent-runs/run.json"): manifest,
		} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Skip(err) // a host the file system will not take as a name
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Skip(err)
			}
		}
		d, _, err := fm.ma.Read(dir)
		if err != nil {
			if !engine.IsInvalid(err) {
				t.Fatalf("read error is not an InvalidError: %v", err)
			}
			return
		}
		if _, err := fm.ma.Import(context.Background(), d, dir); err != nil {
			checkNothingWritten(t, fm.ma, err)
			return
		}
		checkImported(t, fm)
	})
}
