package memory_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
	"github.com/engine-dev/engine/kv/kvtest"
)

var migrateFilters = []lesson.Filter{
	{}, {Tier: 1}, {Tier: 2}, {Category: lesson.SiteSpecific}, {Domain: "www.shop3.example"}, {Max: 7},
}

func lessonIDs(ls []lesson.Lesson) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.ID
	}
	return out
}

// listings returns what List and Page (pages of 400; unindexed pages each read every lesson) give for each filter.
func listings(t *testing.T, m *memory.Memory) [][]string {
	t.Helper()
	ctx := context.Background()
	var out [][]string
	for _, f := range migrateFilters {
		ls, err := m.Lessons.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, lessonIDs(ls))
		if f.Max != 0 {
			continue
		}
		var paged []lesson.Lesson
		req := listing.Request{Limit: 400}
		for {
			p, err := m.Lessons.Page(ctx, f, req)
			if err != nil {
				t.Fatal(err)
			}
			paged = append(paged, p.Items...)
			if req.Cursor = p.Next; p.Next == "" {
				break
			}
		}
		if !slices.Equal(lessonIDs(paged), lessonIDs(ls)) {
			t.Fatalf("pages of %+v differ from List", f)
		}
	}
	return out
}

// countListEntries counts the schema-2 list entries in the data dir's
// store, which the caller has closed.
func countListEntries(t *testing.T, dir string) int {
	t.Helper()
	db := badgertest.OpenDir(t, memory.Dir(dir))
	defer db.Close()
	n := 0
	err := db.View(context.Background(), func(r kv.Reader) error {
		return r.Scan(nil, kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			if bytes.HasPrefix(k, []byte("list/")) || bytes.Contains(k, []byte("/lesson-list/")) {
				n++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// toSchema1 rewrites a closed data dir's store into what schema 1 wrote:
// no list entries, stamp 1.
func toSchema1(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	db := badgertest.OpenDir(t, memory.Dir(dir))
	var ops []kv.Op
	err := db.View(ctx, func(r kv.Reader) error {
		return r.Scan(nil, kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			if bytes.HasPrefix(k, []byte("list/")) || bytes.Contains(k, []byte("/lesson-list/")) {
				ops = append(ops, kv.Op{Key: bytes.Clone(k), Delete: true})
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	ops = append(ops, kv.Op{Key: keyspace.Schema(), Value: []byte("1")})
	if err := db.Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestMigrateSchema1(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var in []lesson.Lesson
	for i := range 2600 { // more than one migration transaction
		l := lesson.Lesson{Lesson: fmt.Sprintf("lesson %d", i), Category: lesson.Categories[i%4], FailedCommand: "click",
			ErrorPattern: fmt.Sprintf("p%d", i), UseCount: i % 7, Source: lesson.SourceLearned}
		if i%3 == 0 || l.Category == lesson.SiteSpecific {
			l.Domain = fmt.Sprintf("www.shop%d.example", i%5)
		}
		in = append(in, l)
	}
	ls, err := m.Lessons.Prepare(in, lesson.ImportOptions{KeepTrust: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lessons.Import(ctx, ls); err != nil {
		t.Fatal(err)
	}
	want := listings(t, m)
	m.Close()
	indexed := countListEntries(t, dir)
	if indexed == 0 {
		t.Fatal("no list entries written")
	}

	toSchema1(t, dir)
	// A read-only open of a schema-1 store lists by scanning, and writes nothing.
	ro, err := memory.Open(ctx, dir, memory.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := listings(t, ro); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatal("read-only lists of a schema-1 store differ")
	}
	ro.Close()
	if n := countListEntries(t, dir); n != 0 {
		t.Fatalf("a read-only open wrote %d list entries", n)
	}

	// A crash part way through the migration: the store is marked (the current schema,
	// meta/migrating) and holds part of the index.
	db := badgertest.OpenDir(t, memory.Dir(dir))
	if err := keyspace.Init(ctx, db); err != nil {
		t.Fatal(err)
	}
	fault := &kvtest.FaultStore{Store: db, FailAt: 2}
	if _, err := lesson.New(fault, lesson.Options{}).BuildListIndex(ctx); err == nil {
		t.Fatal("the injected failure did not stop the migration")
	}
	db.Close()
	if n := countListEntries(t, dir); n == 0 || n >= indexed {
		t.Fatalf("the interrupted migration left %d of %d list entries; want some", n, indexed)
	}
	ro, err = memory.Open(ctx, dir, memory.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := listings(t, ro); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatal("read-only lists of a half-migrated store differ")
	}
	ro.Close()

	// The next read-write open finishes it.
	m, err = memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := listings(t, m); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatal("lists after the migration differ")
	}
	if from, err := keyspace.Pending(ctx, m.DB()); from != 0 || err != nil {
		t.Fatalf("pending after open: %d, %v", from, err)
	}
	if v, _ := kv.Get(ctx, m.DB(), keyspace.Schema()); string(v) != strconv.Itoa(keyspace.SchemaVersion) {
		t.Fatalf("schema = %q", v)
	}
	m.Close()
	if n := countListEntries(t, dir); n != indexed {
		t.Fatalf("after the migration: %d list entries, want %d", n, indexed)
	}
	// Read-only on the migrated store uses the index.
	ro, err = memory.Open(ctx, dir, memory.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got := listings(t, ro); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatal("read-only lists of the migrated store differ")
	}
}
