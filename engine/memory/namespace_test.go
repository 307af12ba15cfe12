package memory_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
	"github.com/engine-dev/engine/kv/etcd"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// A named namespace gets the seeds on first use, keeps its keys under
// ns/<name>/ (the schema stamp stays the store's), stays the namespace
// through With/WithClock/WithProvenance, and is listed with its counts.
func TestWithNamespace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var unknown *memory.UnknownNamespaceError
	if _, err := m.WithNamespace(ctx, "team-a_1"); !errors.As(err, &unknown) || !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("a namespace never made: %v, want an UnknownNamespaceError", err)
	}
	if created, err := m.CreateNamespace(ctx, "team-a_1"); err != nil || !created {
		t.Fatalf("create: %v, %v", created, err)
	}
	if created, err := m.CreateNamespace(ctx, "team-a_1"); err != nil || created {
		t.Fatalf("create again: %v, %v", created, err)
	}
	a, err := m.WithNamespace(ctx, "team-a_1")
	if err != nil {
		t.Fatal(err)
	}
	if a.Namespace() != "team-a_1" || m.Namespace() != "" {
		t.Fatalf("namespaces: %q, %q", a.Namespace(), m.Namespace())
	}
	tier1, err := a.Lessons.Tier1(ctx)
	if err != nil || len(tier1) != len(lesson.Seeds()) {
		t.Fatalf("seeds in a new namespace: %d, %v", len(tier1), err)
	}
	fixed := time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)
	v := a.WithClock(func() time.Time { return fixed }).WithProvenance(engine.Provenance{Source: engine.SourceManual})
	if v.Namespace() != "team-a_1" {
		t.Fatalf("a view of a namespace left it: %q", v.Namespace())
	}
	l, _, err := v.Lessons.Record(ctx, lesson.Lesson{Lesson: "wait for the list", Category: "site_specific", FailedCommand: "click", ErrorPattern: "not found", Domain: "shop.example"}, "shop.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Lessons.Get(ctx, l.ID); err == nil {
		t.Fatal("the default namespace sees a's lesson")
	}
	if _, err := a.Lessons.Get(ctx, l.ID); err != nil {
		t.Fatalf("a does not see its own lesson: %v", err)
	}
	back, err := a.WithNamespace(ctx, "-")
	if err != nil || back.Namespace() != "" {
		t.Fatalf("back to the default: %q, %v", back.Namespace(), err)
	}
	if _, err := back.Lessons.Get(ctx, l.ID); err == nil {
		t.Fatal("the default, reached from a, sees a's lesson")
	}

	keys := kvtest.Dump(t, m.DB())
	if _, ok := keys["ns/team-a_1/meta/seeded"]; !ok {
		t.Error("no ns/team-a_1/meta/seeded")
	}
	if _, ok := keys["ns/team-a_1/meta/schema"]; ok {
		t.Error("a namespace has its own schema stamp")
	}
	inA, inDefault := 0, 0
	for k := range keys {
		if strings.HasPrefix(k, "ns/team-a_1/") {
			inA++
		} else {
			inDefault++
		}
	}
	ns, err := m.Namespaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 2 || ns[0] != (memory.NamespaceInfo{Name: "-", Keys: inDefault, Sites: 0}) || ns[1] != (memory.NamespaceInfo{Name: "team-a_1", Keys: inA, Sites: 1}) {
		t.Errorf("namespaces: %+v, want - %d keys, team-a_1 %d keys 1 site", ns, inDefault, inA)
	}

	// The default's whole-store passes (doctor's check and repair, the
	// list index a migration builds) count only its own lessons.
	seeds := len(lesson.Seeds())
	if h, err := m.Lessons.Check(ctx); err != nil || !h.OK() || h.Records != seeds {
		t.Errorf("default's check with a namespace beside it: %+v, %v", h, err)
	}
	if h, err := m.Lessons.Repair(ctx); err != nil || !h.OK() || h.Records != seeds {
		t.Errorf("default's repair with a namespace beside it: %+v, %v", h, err)
	}
	if n, err := m.Lessons.BuildListIndex(ctx); err != nil || n != seeds {
		t.Errorf("default's list index: %d lessons, %v", n, err)
	}
	if h, err := a.Lessons.Check(ctx); err != nil || !h.OK() || h.Records != seeds+1 {
		t.Errorf("a's check after the default's repair: %+v, %v", h, err)
	}

	for _, bad := range []string{"A", "a b", "a/b", "ns/x", strings.Repeat("x", 64), "."} {
		if _, err := m.WithNamespace(ctx, bad); !engine.IsInvalid(err) {
			t.Errorf("namespace %q: %v", bad, err)
		}
	}
	if _, err := m.CreateNamespace(ctx, strings.Repeat("x", 63)); err != nil {
		t.Errorf("a name of 63 characters: %v", err)
	}
	names, err := m.NamespaceNames(ctx)
	if want := []string{"-", "team-a_1", strings.Repeat("x", 63)}; err != nil || !slices.Equal(names, want) {
		t.Errorf("namespace names: %q, %v; want %q", names, err, want)
	}
}

// The first use of a namespace in a process rolls back an Apply that was
// interrupted there (badger's open recovers only the unprefixed journal);
// a read-only memory writes nothing in a namespace.
func TestNamespaceRecoversItsJournal(t *testing.T) {
	ctx := context.Background()
	db := badgertest.Open(t)
	view := kv.Prefixed(db, keyspace.Namespace("a"))
	// What an Apply killed before its commit point leaves: its marker
	// (with no undo record, so the rollback restores nothing).
	if err := view.Batch(ctx, []kv.Op{{Key: []byte("kv/journal/active"), Value: []byte("dead")}}); err != nil {
		t.Fatal(err)
	}
	if err := kv.Apply(ctx, view, []kv.Op{{Key: []byte("k"), Value: []byte("v")}}, kv.ApplyOptions{}); err == nil {
		t.Fatal("an Apply ran over a pending rollback")
	}
	ro := memory.New(db, memory.Options{ReadOnly: true})
	if _, err := ro.WithNamespace(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, view, []byte("meta/seeded")); err == nil {
		t.Fatal("a read-only memory seeded a namespace")
	}
	m := memory.New(db, memory.Options{})
	if _, err := m.WithNamespace(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, view, []byte("kv/journal/active")); err == nil {
		t.Error("the namespace's journal marker is still there after its first use")
	}
	if _, err := kv.Get(ctx, view, []byte("meta/seeded")); err != nil {
		t.Errorf("no seeds after first use: %v", err)
	}
	if err := kv.Apply(ctx, view, []kv.Op{{Key: []byte("k"), Value: []byte("v")}}, kv.ApplyOptions{}); err != nil {
		t.Errorf("an Apply after the namespace recovered: %v", err)
	}
}

// Recall and record in a named namespace beside the same in the default,
// on one store holding 1,000 lessons in each (the site's 200 matching
// the error).
func BenchmarkNamespace(b *testing.B) {
	ctx := context.Background()
	db := badgertest.Open(b)
	m := memory.New(db, memory.Options{Provenance: engine.Provenance{Source: engine.SourceManual}})
	if _, err := m.CreateNamespace(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	a, err := m.WithNamespace(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	for name, mem := range map[string]*memory.Memory{"default": m, "namespace": a} {
		for i := range 1000 {
			site := "shop.example"
			if i%5 != 0 {
				site = "other" + strconv.Itoa(i%50) + ".example"
			}
			if _, _, err := mem.Lessons.Record(ctx, lesson.Lesson{Lesson: "lesson " + strconv.Itoa(i), Category: lesson.SiteSpecific, FailedCommand: "click", ErrorPattern: "covered " + strconv.Itoa(i), Domain: site}, site); err != nil {
				b.Fatal(name, err)
			}
		}
	}
	for _, c := range []struct {
		name string
		mem  *memory.Memory
	}{{"default", m}, {"namespace", a}} {
		b.Run("recall-error/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.mem.Lessons.RecallError(ctx, "click e3", "element covered 5 by another", "www.shop.example"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("record/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, _, err := c.mem.Lessons.Record(ctx, lesson.Lesson{Lesson: "new " + strconv.Itoa(i), Category: lesson.SiteSpecific, FailedCommand: "fill", ErrorPattern: "fresh " + strconv.Itoa(i), Domain: "shop.example"}, "shop.example"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSettledOnlyNeedsTheNamespaceSeeded: a read-only open that must need
// no writes refuses a namespace never used before (its seeds are a write),
// so the first command in a new namespace opens read-write and seeds it.
func TestSettledOnlyNeedsTheNamespaceSeeded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	ro := memory.Options{ReadOnly: true, SettledOnly: true, SettledNamespace: "b"}
	if _, err := memory.Open(ctx, dir, ro); !errors.Is(err, memory.ErrOpenDue) {
		t.Fatalf("read-only open for an unseeded namespace: %v, want ErrOpenDue", err)
	}
	m, err = memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.CreateNamespace(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	m.Close()
	m, err = memory.Open(ctx, dir, ro)
	if err != nil {
		t.Fatalf("read-only open once b is seeded: %v", err)
	}
	m.Close()
}

// On a shared store (etcd) a namespace's first use leaves a journal marked
// active alone: it may be another process's Apply, still running. Only
// the operator's repair rolls it back.
func TestNamespaceOnSharedStoreLeavesTheJournal(t *testing.T) {
	ctx := context.Background()
	db, err := etcd.Open(ctx, etcd.Options{Endpoints: etcdtest.Start(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if kv.IsExclusive(db) || !kv.IsExclusive(badgertest.Open(t)) {
		t.Fatal("etcd must say shared and badger exclusive")
	}
	view := kv.Prefixed(db, keyspace.Namespace("a"))
	running := []kv.Op{{Key: []byte("kv/journal/active"), Value: []byte("another process")}}
	if err := view.Batch(ctx, running); err != nil {
		t.Fatal(err)
	}
	if _, err := memory.New(db, memory.Options{}).WithNamespace(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if pending, err := kv.RecoveryPending(ctx, view); err != nil || !pending {
		t.Fatalf("the journal of an Apply that may be running was rolled back (pending %v, %v)", pending, err)
	}
}
