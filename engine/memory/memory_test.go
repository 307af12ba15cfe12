package memory_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/memctx"
	"github.com/engine-dev/engine/kv"
)

func TestOpenStampsSeedsAndReopens(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := m.Lessons.List(ctx, lesson.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != len(lesson.Seeds()) {
		t.Fatalf("a new memory holds %d lessons, want the %d seeds", len(ls), len(lesson.Seeds()))
	}
	v, err := kv.Get(ctx, m.DB(), keyspace.Schema())
	if err != nil || string(v) != strconv.Itoa(keyspace.SchemaVersion) {
		t.Fatalf("schema stamp = %q, %v; want %d", v, err, keyspace.SchemaVersion)
	}
	// A removed seed stays removed: seeds are written once per data dir.
	if err := m.Lessons.Remove(ctx, ls[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m, err = memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if ls, _ := m.Lessons.List(ctx, lesson.Filter{}); len(ls) != len(lesson.Seeds())-1 {
		t.Fatalf("reopened memory holds %d lessons, want %d (a removed seed is not written again)", len(ls), len(lesson.Seeds())-1)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.DB().Update(ctx, func(tx kv.Txn) error {
		return tx.Set(keyspace.Schema(), []byte(strconv.Itoa(keyspace.SchemaVersion+1)), 0)
	}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	for _, ro := range []bool{false, true} {
		_, err = memory.Open(ctx, dir, memory.Options{ReadOnly: ro})
		if !errors.Is(err, keyspace.ErrNewerSchema) || !strings.Contains(err.Error(), dir) {
			t.Fatalf("read-only %v: open of a newer schema: %v; want ErrNewerSchema naming the data dir", ro, err)
		}
	}
}

func TestReadOnlyWritesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	ro, err := memory.Open(ctx, dir, memory.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if ls, err := ro.Lessons.List(ctx, lesson.Filter{}); err != nil || len(ls) != len(lesson.Seeds()) {
		t.Fatalf("read-only list: %d lessons, %v", len(ls), err)
	}
	if _, _, err := ro.Lessons.Record(ctx, lesson.Lesson{Lesson: "x", Category: "site_specific", FailedCommand: "a", ErrorPattern: "b"}, ""); err == nil {
		t.Fatal("a read-only memory accepted a write")
	}
}

func TestSecondOpenNamesTheHolder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, err = memory.Open(ctx, dir, memory.Options{LockWait: -1})
	if err == nil || !strings.Contains(err.Error(), "in use by process") {
		t.Fatalf("second open: %v; want 'in use by process'", err)
	}
}

func TestWithSharesTheStoreAndRoutesEvents(t *testing.T) {
	ctx := context.Background()
	m, err := memory.Open(ctx, t.TempDir(), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var got []string
	fixed := time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)
	v := m.With(func(e event.Event) { got = append(got, e.Name) }).WithClock(func() time.Time { return fixed })
	l, _, err := v.Lessons.Record(ctx, lesson.Lesson{Lesson: "wait for the list", Category: "site_specific", FailedCommand: "click", ErrorPattern: "not found", Domain: "shop.example"}, "shop.example")
	if err != nil {
		t.Fatal(err)
	}
	if l.CreatedAt != "2026-03-12" {
		t.Fatalf("created at %v, want the view's clock %v", l.CreatedAt, fixed)
	}
	if len(got) != 1 || got[0] != event.LessonRecorded {
		t.Fatalf("the view's sink got %v, want [%s]", got, event.LessonRecorded)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	// Closing the view left the store open: the original still reads it.
	if _, err := m.Lessons.Get(ctx, l.ID); err != nil {
		t.Fatalf("after closing a view: %v", err)
	}
	r, err := m.Context(memctx.Options{}).Build(ctx, memctx.Request{URL: "https://shop.example/", Goal: "buy", Step: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Text, "wait for the list") {
		t.Fatalf("context lacks the site's lesson:\n%s", r.Text)
	}
}
