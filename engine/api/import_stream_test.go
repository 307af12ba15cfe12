package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/api"
)

// bigExport is an export document of n lessons, over api.StreamImport
// bytes for n of a few thousand.
func bigExport(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"format":"engine-export","version":1,"exported_at":"2026-03-01T00:00:00Z","lessons":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"lesson":"scroll the element into view and wait for the overlay to close before clicking it again (%d)","category":"error_recovery","failed_command":"click","error_pattern":"not visible %d","domain":"site%d.example","use_count":1,"created_at":"2026-03-01","last_used":"2026-03-01","source":"learned","triggered_domains":[]}`, i, i, i%50)
	}
	b.WriteString(`],"facts":[],"selectors":[],"trajectories":[],"sessions":[],"runs":[],"plans":[]}`)
	return b.Bytes()
}

// A body over api.StreamImport sent with its digest is imported as it
// streams in: every lesson lands, stamped with the digest; a digest that
// does not match the body is bad input and writes nothing.
func TestImportStreamed(t *testing.T) {
	ctx := context.Background()
	body := bigExport(5000)
	if len(body) <= api.StreamImport {
		t.Fatalf("the test's body is %d bytes, not over %d", len(body), api.StreamImport)
	}
	sum := sha256.Sum256(body)
	digest := hex.EncodeToString(sum[:])

	c := archiveClient(t, nil)
	res, err := c.ImportFrom(ctx, bytes.NewReader(body), int64(len(body)), digest, "big.json", false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported[0].Count != 5000 {
		t.Fatalf("imported %s; want 5000 lessons", res.Imported)
	}
	page, err := c.Lessons(ctx, api.LessonFilter{Domain: "site7.example"})
	if err != nil {
		t.Fatal(err)
	}
	ls := page.Lessons
	if len(ls) == 0 || ls[0].Provenance.SHA256 != digest || ls[0].Provenance.File != "big.json" {
		t.Fatalf("lessons of site7.example: %d, first provenance %+v; want the file and its digest", len(ls), ls[0].Provenance)
	}

	d := archiveClient(t, nil)
	_, err = d.ImportFrom(ctx, bytes.NewReader(body), int64(len(body)), strings.Repeat("0", 64), "big.json", false)
	if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "SHA-256") {
		t.Fatalf("a wrong digest: %v; want bad input naming the SHA-256", err)
	}
	if page, err := d.Lessons(ctx, api.LessonFilter{Domain: "site7.example"}); err != nil || len(page.Lessons) != 0 {
		t.Fatalf("after a refused import: %v, %v; want no lessons of site7.example", page, err)
	}
}
