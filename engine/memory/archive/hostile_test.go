package archive

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

// Regression tests for what the fuzz targets found (see fuzz_test.go).

// IPv6 hosts (with ports in URLs) and internationalised names survive
// export → import → export unchanged, and their memory is recalled by the
// form a browser reports.
func TestIPv6AndIDNRoundTrip(t *testing.T) {
	ctx := context.Background()
	seed, err := os.ReadFile("testdata/seed-export.json")
	if err != nil {
		t.Fatal(err)
	}
	in := bytes.ReplaceAll(seed, []byte(`"other.org"`), []byte(`"[::1]:8080"`))
	in = bytes.ReplaceAll(in, []byte(`https://example.com/`), []byte(`http://[2001:db8::1]:8443/`))
	in = bytes.ReplaceAll(in, []byte(`"example.com"`), []byte(`"bücher.de"`))
	d, err := ParseFile(in, "in.json")
	if err != nil {
		t.Fatal(err)
	}
	a := newEnv(t)
	if _, err := a.mem.Import(ctx, d, "in.json"); err != nil {
		t.Fatal(err)
	}
	out := exportJSON(t, a.mem)
	for _, want := range []string{`"domain": "::1"`, `"domain": "xn--bcher-kva.de"`, `"start_url": "http://[2001:db8::1]:8443/"`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("export lacks %s", want)
		}
	}
	if bytes.Contains(out, []byte("bücher")) {
		t.Error("the export keeps the Unicode form of a host")
	}
	d2, err := ParseFile(out, "out.json")
	if err != nil {
		t.Fatal(err)
	}
	b := newEnv(t)
	if _, err := b.mem.Import(ctx, d2, "out.json"); err != nil {
		t.Fatalf("re-import: %v", err)
	}
	if back := exportJSON(t, b.mem); !bytes.Equal(out, back) {
		t.Fatalf("export → import → export differs:\n%s\n---\n%s", out, back)
	}
	ls, err := b.mem.Lessons.RecallError(ctx, "fill e1 x", "Element is not an input", "http://[::1]:9999/")
	if err != nil || len(ls) == 0 || ls[0].Domain != "::1" {
		t.Fatalf("recall on the IPv6 host = %+v, %v", ls, err)
	}
	facts, err := b.mem.Facts.List(ctx, "www.xn--bcher-kva.de")
	if err != nil || len(facts) == 0 {
		t.Fatalf("facts on the punycode host = %+v, %v", facts, err)
	}
}

// Control characters in fields that go into keys are refused at import,
// naming the record and field, and nothing is written.
func TestImportRefusesControlCharacters(t *testing.T) {
	ctx := context.Background()
	seed, err := os.ReadFile("testdata/seed-export.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"not an input"`, `"not an\u0000input"`, "lessons[3]: invalid lesson: error_pattern holds a control character (U+0000)"},
		{`"shadow-dom"`, `"shadow\u0000dom"`, "facts[0]: invalid fact: the key holds a control character (U+0000)"},
		{`"Search"`, `"Sea\u0007rch"`, "selectors[0]: invalid selector: the accessible name holds a control character (U+0007)"},
		{`"run_2"`, `"run\u0000_2"`, "run id holds a control character (U+0000)"},
		{`"other.org"`, `".."`, `is not a host name`},
		{`"other.org"`, `"-"`, `"-" is not a valid host name`},
	} {
		in := bytes.Replace(seed, []byte(c.from), []byte(c.to), 1)
		if bytes.Equal(in, seed) {
			t.Fatalf("%s is not in the seed export", c.from)
		}
		e := newEnv(t)
		d, err := ParseFile(in, "in.json")
		if err == nil {
			_, err = e.mem.Import(ctx, d, "in.json")
		}
		if !engine.IsInvalid(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: err = %v, want %q", c.from, c.to, err, c.want)
			continue
		}
		checkEmpty(t, e.mem)
	}
}

func checkEmpty(t *testing.T, m *Archive) {
	t.Helper()
	d, err := m.Export(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range d.Count() {
		if c.Count != 0 {
			t.Fatalf("bad input wrote %d %s", c.Count, c.Kind)
		}
	}
}

// An .agent-memory host directory named "-" (the global site's key) or
// "..."-like is refused with the directory named.
func TestAgentMemoryRefusesNonHostDirs(t *testing.T) {
	for _, name := range []string{"-", "...", "a..b"} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "domains", name), 0o755); err != nil {
			t.Fatal(err)
		}
		e := newEnv(t)
		_, _, err := e.mem.Read(dir)
		if !engine.IsInvalid(err) || !strings.Contains(err.Error(), "directory name is not a domain") || !strings.Contains(err.Error(), filepath.Join("domains", name)) {
			t.Errorf("dir %q: err = %v", name, err)
		}
	}
}
