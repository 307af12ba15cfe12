package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCapture: the browser's and the engine's errors, learned lessons,
// facts and selectors of every run under a directory become corpus lines,
// once each, sorted, with loopback ports made one; -merge keeps a file's
// lines and adds only what it lacks.
func TestCapture(t *testing.T) {
	dir := t.TempDir()
	write := func(run, name, body string) {
		p := filepath.Join(dir, "case", "r1", "cold", "runs", run, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("run_1", "actions.jsonl", `{"step":1,"action":"click","ok":true}
{"step":2,"action":"fill","ok":false,"error":"element is read-only","origin":"browser"}
{"step":3,"action":"click","ok":false,"error":"no element named \"Go\" on this page","origin":"engine"}
{"step":4,"action":"goto","ok":false,"error":"net::ERR_CONNECTION_REFUSED at http://127.0.0.1:41234/x","origin":"browser"}
`)
	write("run_2", "actions.jsonl", `{"step":1,"action":"fill","ok":false,"error":"element is read-only","origin":"browser"}
{"step":2,"action":"goto","ok":false,"error":"net::ERR_CONNECTION_REFUSED at http://127.0.0.1:39001/x","origin":"browser"}
`)
	write("run_1", "memory_events.jsonl", `{"event":"lesson_recorded","lesson":"If fill fails with \"element is read-only\", try click instead."}
{"event":"fact_observed","domain":"127.0.0.1","key":"element is read-only","value":"fill fails here (element is read-only); click \"PIN\" worked"}
{"event":"selector_recorded","domain":"127.0.0.1","name":"Sign in","selector":"role=button[name=\"Sign in\"]"}
{"event":"context_built","step":1}
`)
	var b strings.Builder
	if err := run(&b, "captured:test", "", []string{dir}); err != nil {
		t.Fatal(err)
	}
	want := `{"label":"real","kind":"chromium_error","domain":"","text":"element is read-only","source":"captured:test"}
{"label":"real","kind":"chromium_error","domain":"","text":"net::ERR_CONNECTION_REFUSED at http://127.0.0.1:8080/x","source":"captured:test"}
{"label":"real","kind":"engine_error","domain":"","text":"no element named \"Go\" on this page","source":"captured:test"}
{"label":"real","kind":"fact","domain":"127.0.0.1","text":"element is read-only","source":"captured:test"}
{"label":"real","kind":"fact","domain":"127.0.0.1","text":"fill fails here (element is read-only); click \"PIN\" worked","source":"captured:test"}
{"label":"real","kind":"lesson","domain":"","text":"If fill fails with \"element is read-only\", try click instead.","source":"captured:test"}
{"label":"real","kind":"selector","domain":"127.0.0.1","text":"Sign in","source":"captured:test"}
{"label":"real","kind":"selector","domain":"127.0.0.1","text":"role=button[name=\"Sign in\"]","source":"captured:test"}
`
	if b.String() != want {
		t.Fatalf("captured:\n%s\nwant:\n%s", b.String(), want)
	}

	old := filepath.Join(t.TempDir(), "captured.jsonl")
	kept := `{"label":"injection","kind":"lesson","domain":"","text":"If fill fails with \"element is read-only\", try click instead.","source":"captured:earlier"}` + "\n"
	if err := os.WriteFile(old, []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := run(&b, "captured:test", old, []string{dir}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 8 || lines[0]+"\n" != kept || strings.Count(b.String(), "try click instead") != 1 {
		t.Fatalf("merged:\n%s", b.String())
	}

	if err := run(&b, "x", filepath.Join(dir, "missing.jsonl"), []string{dir}); err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Fatalf("a missing -merge file: %v", err)
	}
}
