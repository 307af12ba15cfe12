package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/archive"
	"github.com/engine-dev/engine/engine/memory/fact"
	"github.com/engine-dev/engine/engine/memory/forget"
	"github.com/engine-dev/engine/engine/memory/trajectory"
)

// seedNow is the clock of the archive tests: the seed export's own day, so
// none of its trajectories has expired.
var seedNow = time.Date(2026, 3, 12, 12, 0, 0, 0, time.UTC)

func seedExport(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../memory/archive/testdata/seed-export.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// local is a client of a fresh memory at seedNow whose events go to *events.
func archiveClient(t *testing.T, events *[]string) *api.LocalClient {
	t.Helper()
	opts := api.ClientOptions{Now: seedNow}
	if events != nil {
		opts.Events = func(e event.Event) { *events = append(*events, e.Name) }
	}
	c := api.Local(api.Handler(open(t), api.Options{AllowClock: true}), opts)
	t.Cleanup(func() { c.Close() })
	return c
}

func exportJSON(t *testing.T, c *api.LocalClient) []byte {
	t.Helper()
	d, err := c.Export(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestExportImportRoundTrip imports the seed export, exports it, imports
// that into an empty memory and exports again: the same document. The
// import's events come back in the trailer, after the commit.
func TestExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	var events []string
	a := archiveClient(t, &events)
	res, err := a.Import(ctx, seedExport(t), "seed-export.json", true)
	if err != nil {
		t.Fatal(err)
	}
	want, err := archive.ParseFile(seedExport(t), "seed-export.json")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Imported.String(), want.Count().String(); got != want {
		t.Fatalf("imported %s, want %s", got, want)
	}
	if !slices.Contains(events, trajectory.EventRecorded) {
		t.Fatalf("events of the import: %v; want %s among them", events, trajectory.EventRecorded)
	}
	first := exportJSON(t, a)

	b := archiveClient(t, nil)
	if _, err := b.Import(ctx, first, "first.json", true); err != nil {
		t.Fatal(err)
	}
	if second := exportJSON(t, b); !bytes.Equal(first, second) {
		t.Fatalf("export → import → export differs:\n%s\n---\n%s", first, second)
	}
	// Importing the same export again changes nothing.
	if _, err := b.Import(ctx, first, "first.json", true); err != nil {
		t.Fatal(err)
	}
	if again := exportJSON(t, b); !bytes.Equal(first, again) {
		t.Fatalf("a second import changed memory:\n%s", again)
	}
}

// TestExportStreamsTheSameBytes: GET /v1/export writes record by record,
// and the bytes are the ones the one-value JSON answer would be (no HTML
// escaping, one line).
func TestExportStreamsTheSameBytes(t *testing.T) {
	m := open(t)
	h := api.Handler(m, api.Options{})
	if _, err := archive.New(m, archive.Options{}).Import(context.Background(), mustParse(t, seedExport(t)), "seed"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Facts.Put(context.Background(), fact.Fact{Domain: "example.com", Type: fact.Quirk, Key: "a<b>&c",
		Value: "<script> & \u2028", Confidence: 0.9, Sources: 1}); err != nil {
		t.Fatal(err)
	}
	resp := do(t, h, "GET", "/v1/export", "", "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /v1/export: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	got := body(t, resp)
	var d archive.Document
	if err := json.Unmarshal([]byte(got), &d); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&d); err != nil {
		t.Fatal(err)
	}
	if got != want.String() {
		t.Fatalf("streamed export:\n%s\nwant:\n%s", got, want.String())
	}
	if len(d.Facts) != 3 || !strings.Contains(got, `"a<b>&c"`) {
		t.Fatalf("export holds %d facts; want the seed's 2 and a<b>&c", len(d.Facts))
	}
}

func mustParse(t *testing.T, b []byte) *archive.Document {
	t.Helper()
	d, err := archive.ParseFile(b, "seed")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCorruptImportWritesNothing: bad input is 400 with the message the
// CLI prints for the same file (named by ?source=), and nothing is written.
func TestCorruptImportWritesNothing(t *testing.T) {
	ctx := context.Background()
	var events []string
	c := archiveClient(t, &events)
	before := exportJSON(t, c)
	seed := seedExport(t)
	badFact := bytes.Replace(seed, []byte(`"confidence": 0.65`), []byte(`"confidence": 1.5`), 1)
	wrongVersion := bytes.Replace(seed, []byte(`"version": 1`), []byte(`"version": 9`), 1)
	for _, tc := range []struct {
		name   string
		body   []byte
		source string
		want   string
	}{
		{"half", seed[:900], "half.json", fmt.Sprintf("half.json: line %d: unexpected end of file (is it truncated?)", bytes.Count(seed[:900], []byte("\n"))+1)},
		{"bad fact", badFact, "badfact.json", "badfact.json: facts[0]: invalid fact: confidence 1.5 is outside [0, 1]"},
		{"wrong version", wrongVersion, "v9.json", "v9.json: export version 9: this engine reads version 1"},
		{"neither", []byte(`{"hello": 1}`), "notmemory.json", `notmemory.json: neither an engine export ("format": "engine-export") nor a memory.json ("lessons")`},
		{"no source", []byte(`{"hello": 1}`), "", api.DefaultImportSource + `: neither an engine export`},
		{"empty", nil, "empty.json", "empty.json: line 1: unexpected end of file (is it truncated?)"},
	} {
		_, err := c.Import(ctx, tc.body, tc.source, true)
		if !errors.Is(err, engine.ErrInvalid) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v; want bad input %q", tc.name, err, tc.want)
		}
	}
	if after := exportJSON(t, c); !bytes.Equal(before, after) {
		t.Fatalf("a refused import wrote:\n%s", after)
	}
	if len(events) != 0 {
		t.Fatalf("refused imports reported events: %v", events)
	}
	// The same through the handler: a problem document with status 400.
	h := api.Handler(open(t), api.Options{})
	wantProblem(t, do(t, h, "POST", "/v1/import?source=badfact.json", "application/json", string(badFact)), 400,
		"badfact.json: facts[0]: invalid fact: confidence 1.5 is outside [0, 1]")
}

// failingReader fails the test's request if the handler reads it.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("the body was read") }

// TestImportPastTheLimitIs413: a body declared longer than MaxUpload is
// refused before a byte of it is read.
func TestImportPastTheLimitIs413(t *testing.T) {
	h := api.Handler(open(t), api.Options{})
	req := httptest.NewRequest("POST", "/v1/import?source=huge.json", failingReader{})
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = api.MaxUpload + 1
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	wantProblem(t, w.Result(), http.StatusRequestEntityTooLarge, "request body: over 268435456 bytes (the limit of this route)")
}

// TestImportDirectory: a .agent-memory directory is read client-side
// (archive.ReadInput) with the notes a local read gives, and imported as
// an export document under the directory's name.
func TestImportDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".agent-memory")
	write := func(name, s string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("domains/www.example.com/knowledge.json", `{"domain": "www.example.com",
 "facts": [{"type": "quirk", "key": "modal", "value": "modal on load", "confidence": 0.8, "sources": 2, "lastSeen": "2026-03-11T09:00:00Z"}],
 "sessions": [{"goal": "search", "outcome": "found it", "success": true, "timestamp": "2026-03-11T09:00:00Z"}]}`)
	write("domains/www.example.com/selectors.json", `{"entries": {"button \"Go\"": {"element": "button \"Go\"", "lastRef": "@e3", "successCount": 1}}}`)
	write("hints.json", `{}`)

	body, notes, err := archive.ReadInput(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, wantNotes, err := archive.New(open(t), archive.Options{}).Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 2 || !slices.Equal(notes, wantNotes) {
		t.Fatalf("notes %q; want a local read's %q (two of them)", notes, wantNotes)
	}
	c := archiveClient(t, nil)
	res, err := c.Import(context.Background(), body, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Imported.String(); got != "1 fact, 1 session" {
		t.Fatalf("imported %s", got)
	}
	facts, err := c.Facts(context.Background(), "example.com", false)
	if err != nil || len(facts.Facts) != 1 || facts.Facts[0].Value != "modal on load" {
		t.Fatalf("facts after the import: %+v, %v", facts, err)
	}

	// A bad record names its file, client-side, before anything is sent.
	write("agent-runs/run_1.json", `{"runId": "run_1", "status": "paused", "goal": "x", "domain": "example.com", "startedAt": "2026-03-11T09:00:00Z"}`)
	_, _, err = archive.ReadInput(dir)
	if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), filepath.Join(dir, "agent-runs/run_1.json")+`: invalid run: unknown status "paused"`) {
		t.Fatalf("a bad run manifest: %v", err)
	}
}

// TestForget: a dry run counts and writes nothing; forgetting drops the
// site, reports site_forgotten in the trailer, and reads after it do not
// see the site's memory from the process-wide site caches.
func TestForget(t *testing.T) {
	ctx := context.Background()
	var events []string
	c := archiveClient(t, &events)
	if _, err := c.Import(ctx, seedExport(t), "seed", true); err != nil {
		t.Fatal(err)
	}
	// Fill the site caches.
	facts, err := c.Facts(ctx, "example.com", false)
	if err != nil || len(facts.Facts) != 1 {
		t.Fatalf("facts before: %+v, %v", facts, err)
	}
	before := exportJSON(t, c)
	events = nil

	s, err := c.Forget(ctx, "www.example.com", true)
	if err != nil {
		t.Fatal(err)
	}
	if s.Site != "example.com" || s.Facts != 1 || s.Total() == 0 {
		t.Fatalf("dry run: %+v", s)
	}
	if after := exportJSON(t, c); !bytes.Equal(before, after) {
		t.Fatalf("a dry run wrote:\n%s", after)
	}
	if len(events) != 0 {
		t.Fatalf("a dry run reported events: %v", events)
	}

	got, err := c.Forget(ctx, "www.example.com", false)
	if err != nil {
		t.Fatal(err)
	}
	if *got != *s {
		t.Fatalf("forgot %+v; the dry run said %+v", got, s)
	}
	if !slices.Equal(events, []string{forget.EventForgotten}) {
		t.Fatalf("events of the forget: %v", events)
	}
	facts, err = c.Facts(ctx, "example.com", false)
	if err != nil || len(facts.Facts) != 0 {
		t.Fatalf("facts after the forget: %+v, %v; want none (a cache served the forgotten site?)", facts, err)
	}
	again, err := c.Forget(ctx, "example.com", true)
	if err != nil || again.Total() != 0 {
		t.Fatalf("survey after the forget: %+v, %v", again, err)
	}
	if other, err := c.Facts(ctx, "other.org", false); err != nil || len(other.Facts) != 1 {
		t.Fatalf("other.org's facts: %+v, %v; want them kept", other, err)
	}

	_, err = c.Forget(ctx, "http://", true)
	if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "has no host") {
		t.Fatalf("forget http://: %v; want bad input", err)
	}
	h := api.Handler(open(t), api.Options{})
	wantProblem(t, do(t, h, "POST", "/v1/forget?domain=example.com&dry_run=maybe", "application/json", ""), 400, `dry_run="maybe": want true or false`)
	wantProblem(t, do(t, h, "POST", "/v1/forget", "application/json", ""), 400, "domain: ")
}

// TestImportRefreshesSiteCaches: a read that filled a site cache before an
// import does not hide what the import wrote.
func TestImportRefreshesSiteCaches(t *testing.T) {
	ctx := context.Background()
	c := archiveClient(t, nil)
	if _, err := c.SetFact(ctx, fact.Fact{Domain: "example.com", Type: fact.Quirk, Key: "banner", Value: "cookie banner", Confidence: 0.9, Sources: 1}); err != nil {
		t.Fatal(err)
	}
	if fs, err := c.Facts(ctx, "example.com", false); err != nil || len(fs.Facts) != 1 {
		t.Fatalf("facts before: %+v, %v", fs, err)
	}
	if _, err := c.Import(ctx, seedExport(t), "seed", true); err != nil {
		t.Fatal(err)
	}
	fs, err := c.Facts(ctx, "example.com", false)
	if err != nil || len(fs.Facts) != 2 {
		t.Fatalf("facts after the import: %+v, %v; want the held one and the imported one", fs, err)
	}
}

// TestExclusiveRoutesPassRequestsStillSending: a request still sending its
// body (an action log) holds no lock, so a forget runs to its end
// meanwhile; the request, once its body is whole, is served as usual.
func TestExclusiveRoutesPassRequestsStillSending(t *testing.T) {
	h := api.Handler(open(t), api.Options{})
	pr, pw := io.Pipe()
	learned := make(chan int)
	go func() {
		req := httptest.NewRequest("POST", "/v1/learn?domain=example.com", pr)
		req.Header.Set("Content-Type", "application/jsonl")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		learned <- w.Code
	}()
	line := []byte(`{"step":1,"command":"type e3 x","execution_result":"ok"}` + "\n")
	if _, err := pw.Write(line); err != nil { // read: the learn request is in its handler
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/forget?domain=example.com", nil)
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, req)
	if w.Code != 200 {
		t.Fatalf("forget while a body is being sent: %d %s", w.Code, w.Body)
	}
	select {
	case code := <-learned:
		t.Fatalf("the learn request finished (%d) before its body did", code)
	default:
	}
	for range 20 {
		if _, err := pw.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	pw.Close()
	if code := <-learned; code != 200 {
		t.Fatalf("learn: %d", code)
	}
}
