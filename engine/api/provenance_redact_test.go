package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/api"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/lesson"
)

// An API key pasted into Engine-Model or Engine-Run is redacted before it
// becomes a record's provenance, as a body's text is: neither the stored
// lesson nor any file in the data dir holds it.
func TestProvenanceHeadersAreRedacted(t *testing.T) {
	const key = "sk-proj-Zq4mX9vT2bR7kL1nP8wC3yH6jD5fG0sA"
	dir := t.TempDir()
	m, err := memory.Open(context.Background(), dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := api.Handler(m, api.Options{})
	r := httptest.NewRequest("POST", "/v1/lessons", strings.NewReader(`{"lesson":"Scroll first.","category":"site_specific","domain":"shop.example"}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(api.HeaderModel, "openai:"+key)
	r.Header.Set(api.HeaderRun, "run-"+key)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	resp := w.Result()
	b := body(t, resp)
	if resp.StatusCode != 201 && resp.StatusCode != 200 {
		t.Fatalf("POST /v1/lessons: %d %s", resp.StatusCode, b)
	}
	var rec api.RecordedLesson
	if err := json.Unmarshal([]byte(b), &rec); err != nil {
		t.Fatal(err)
	}
	got := body(t, do(t, h, "GET", "/v1/lessons/"+rec.Lesson.ID, "", ""))
	var l lesson.Lesson
	if err := json.Unmarshal([]byte(got), &l); err != nil {
		t.Fatalf("GET: %s: %v", got, err)
	}
	if strings.Contains(got, key) || !strings.HasPrefix(l.Provenance.Model, "openai:") || !strings.HasPrefix(l.Provenance.Run, "run-") {
		t.Fatalf("stored provenance %+v; want the model and run kept with the key redacted (%s)", l.Provenance, got)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(key)) {
			t.Errorf("%s holds the key", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
