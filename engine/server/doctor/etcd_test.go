package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/archive"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/etcd"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// onEtcd is a Store on a fresh etcd server.
func onEtcd(t *testing.T, ns string) Store {
	t.Helper()
	eps := etcdtest.Start(t)
	return Store{
		Open:      func(ctx context.Context) (kv.Store, error) { return etcd.Open(ctx, etcd.Options{Endpoints: eps}) },
		URL:       "etcd://" + strings.Join(eps, ","),
		Namespace: ns,
	}
}

// importOf is a document of n lessons, more keys than one etcd
// transaction takes, so its import goes through kv.Apply's journal.
func importOf(n int) *archive.Document {
	d := &archive.Document{Format: "engine-memory", Version: 1}
	for i := range n {
		d.Lessons = append(d.Lessons, lesson.Lesson{Lesson: fmt.Sprintf("Imported lesson %d", i), Category: lesson.ErrorRecovery,
			FailedCommand: "click", ErrorPattern: fmt.Sprintf("pattern %d", i), Domain: "example.com", Source: lesson.SourceLearned})
	}
	return d
}

// An import into etcd stopped part way (its writes fail from the middle
// on, rollback included, as for a process killed there) leaves its journal
// marked: nothing rolls it back on open, the doctor reports it, a later
// import is refused with a message naming engine doctor --repair, and the
// repair rolls it back to the store as it was, after which the import
// goes through whole.
func TestRepairRollsBackAnImportOnEtcd(t *testing.T) {
	ctx := context.Background()
	st := onEtcd(t, "")
	dir := t.TempDir()
	m, err := memory.Open(ctx, dir, memory.Options{OpenStore: st.Open})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { m.Close() }()
	if _, _, err := m.Lessons.Record(ctx, lesson.Lesson{Lesson: "Close the chat widget before clicking Checkout.", Category: lesson.ErrorRecovery,
		FailedCommand: "click", ErrorPattern: "would receive the click", Domain: "shop.example"}, ""); err != nil {
		t.Fatal(err)
	}
	before := kvtest.Dump(t, m.DB())
	d := importOf(60)

	// How many writes a whole import makes, on another etcd.
	probeDB, err := onEtcd(t, "").Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer probeDB.Close()
	probe := &kvtest.FaultStore{Store: probeDB}
	if _, err := archive.New(memory.New(probe, memory.Options{}), archive.Options{}).Import(ctx, d, "x.json"); err != nil {
		t.Fatal(err)
	}
	if probe.Writes() < 6 {
		t.Fatalf("an import of %d lessons on etcd made %d writes: not journaled", len(d.Lessons), probe.Writes())
	}

	// Every write from the middle on fails: the rollback too.
	f := &kvtest.FaultStore{Store: m.DB(), FailAt: probe.Writes()/2 + 1, FailAfter: true}
	if _, err := archive.New(memory.New(f, memory.Options{}), archive.Options{}).Import(ctx, d, "x.json"); !errors.Is(err, kvtest.ErrInjected) {
		t.Fatalf("import failing at write %d of %d: %v", f.FailAt, probe.Writes(), err)
	}
	if pending, err := kv.RecoveryPending(ctx, m.DB()); err != nil || !pending {
		t.Fatalf("after the interrupted import: recovery pending %v, %v", pending, err)
	}
	m.Close()

	// Opening does not roll it back; the next import is refused.
	m, err = memory.Open(ctx, dir, memory.Options{OpenStore: st.Open})
	if err != nil {
		t.Fatal(err)
	}
	_, err = archive.New(m, archive.Options{}).Import(ctx, d, "x.json")
	if !errors.Is(err, kv.ErrRecoveryPending) || !strings.Contains(err.Error(), "engine doctor --repair") {
		t.Fatalf("import after an interrupted one: %v; want ErrRecoveryPending naming engine doctor --repair", err)
	}
	checks, info := SharedStore(ctx, dir, st)
	if c := find(t, checks, "backend"); c.Status != OK || info.Backend != "etcd" || !strings.Contains(c.Detail, st.URL) {
		t.Errorf("backend check = %+v", c)
	}
	if c := find(t, checks, "schema"); c.Status != OK || info.Schema != keyspace.SchemaVersion {
		t.Errorf("schema check = %+v", c)
	}
	if c := find(t, Lessons(ctx, dir, info, st), "imports"); c.Status != Warn || !strings.Contains(c.Detail, "engine doctor --repair") {
		t.Errorf("imports check with an interrupted import = %+v", c)
	}

	r, err := Repair(ctx, dir, st)
	if err != nil || !r.RolledBack || !r.Lessons.OK() {
		t.Fatalf("Repair = %+v, %v", r, err)
	}
	// The repair rebuilt the lesson indexes, so their sites' generation
	// tokens are new (caches reload); the memory is what it was.
	if diff := kvtest.Diff(memoryOnly(before), memoryOnly(kvtest.Dump(t, m.DB()))); diff != "" {
		t.Fatalf("after the repair the store is not as before the import: %s", diff)
	}
	if c := find(t, Lessons(ctx, dir, info, st), "imports"); c.Status != OK {
		t.Errorf("imports check after the repair = %+v", c)
	}
	if _, err := archive.New(m, archive.Options{}).Import(ctx, d, "x.json"); err != nil {
		t.Fatalf("import after the repair: %v", err)
	}
	ls, err := m.Lessons.List(ctx, lesson.Filter{Domain: "example.com"})
	if err != nil || len(ls) != len(d.Lessons) {
		t.Fatalf("after the import: %d lessons on example.com, %v; want %d", len(ls), err, len(d.Lessons))
	}
}

// In a named namespace on etcd the doctor checks that namespace's lessons
// (a damaged record there, not in the default) and --repair mends them
// there.
func TestLessonsCheckAndRepairNamespaceOnEtcd(t *testing.T) {
	ctx := context.Background()
	st := onEtcd(t, "team")
	dir := t.TempDir()
	root, err := memory.Open(ctx, dir, memory.Options{OpenStore: st.Open})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := root.CreateNamespace(ctx, "team"); err != nil {
		t.Fatal(err)
	}
	m, err := root.WithNamespace(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := m.Lessons.Record(ctx, lesson.Lesson{Lesson: "Close the chat widget before clicking Checkout.", Category: lesson.ErrorRecovery,
		FailedCommand: "click", ErrorPattern: "would receive the click", Domain: "shop.example"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.DB().Update(ctx, func(tx kv.Txn) error {
		return tx.Set(keyspace.Lesson("shop.example", l.ID), []byte("{not json"), 0)
	}); err != nil {
		t.Fatal(err)
	}

	_, info := SharedStore(ctx, dir, st)
	if c := find(t, Lessons(ctx, dir, info, Store{Open: st.Open, URL: st.URL}), "lessons"); c.Status != OK {
		t.Errorf("lessons check of the default namespace = %+v; the damage is in team", c)
	}
	if c := find(t, Lessons(ctx, dir, info, st), "lessons"); c.Status != Warn || !strings.Contains(c.Detail, "1 damaged") {
		t.Fatalf("lessons check of namespace team = %+v", c)
	}
	r, err := Repair(ctx, dir, st)
	if err != nil || !r.Lessons.OK() || r.Lessons.MovedAside != 1 || r.RolledBack {
		t.Fatalf("Repair of namespace team = %+v, %v", r, err)
	}
	if c := find(t, Lessons(ctx, dir, info, st), "lessons"); c.Status != OK || !strings.Contains(c.Detail, "1 damaged records moved aside") {
		t.Fatalf("lessons check of namespace team after the repair = %+v", c)
	}
}

// memoryOnly is a dump without the generation tokens.
func memoryOnly(dump map[string]string) map[string]string {
	for k := range dump {
		if keyspace.IsGeneration([]byte(k)) {
			delete(dump, k)
		}
	}
	return dump
}
