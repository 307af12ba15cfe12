package doctor

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/server/attach"
	"github.com/engine-dev/engine/engine/server/service"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

func find(t *testing.T, checks []Check, name string) Check {
	t.Helper()
	for _, c := range checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %q check in %+v", name, checks)
	return Check{}
}

func TestDataDirMissingIsNotCreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	checks, info := DataDir(context.Background(), dir)
	if c := find(t, checks, "data dir"); c.Status != OK || !strings.Contains(c.Detail, "does not exist yet") {
		t.Errorf("data dir check = %+v", c)
	}
	if info.Exists || info.Backend != "badger" {
		t.Errorf("info = %+v", info)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("DataDir created %s (stat err %v)", dir, err)
	}
}

func TestDataDirNotADirectoryFails(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	checks, _ := DataDir(context.Background(), f)
	if c := find(t, checks, "data dir"); !c.Broken() || !strings.Contains(c.Detail, "not a directory") {
		t.Errorf("data dir check = %+v", c)
	}
}

// stamped makes a data dir whose database has schema version v.
func stamped(t *testing.T, v int) string {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	s := badgertest.OpenDir(t, filepath.Join(dir, "db"))
	if err := keyspace.Init(ctx, s); err != nil {
		t.Fatal(err)
	}
	if v != keyspace.SchemaVersion {
		if err := s.Update(ctx, func(tx kv.Txn) error {
			return tx.Set(keyspace.Schema(), []byte(strconv.Itoa(v)), 0)
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDataDirSchemaAndLock(t *testing.T) {
	ctx := context.Background()
	dir := stamped(t, keyspace.SchemaVersion)
	checks, info := DataDir(ctx, dir)
	if c := find(t, checks, "schema"); c.Status != OK || info.Schema != keyspace.SchemaVersion {
		t.Errorf("schema check = %+v, info.Schema = %d", c, info.Schema)
	}
	if c := find(t, checks, "in use"); c.Detail != "no" || info.InUse != nil {
		t.Errorf("in use check = %+v", c)
	}
	if !info.Exists || info.SizeBytes <= 0 {
		t.Errorf("info = %+v", info)
	}
	// The doctor released the lock: the data dir opens at once.
	s, err := badger.Open(ctx, filepath.Join(dir, "db"), badger.Options{})
	if err != nil {
		t.Fatalf("after the doctor: %v", err)
	}
	defer s.Close()

	// Held by another opener (this process, another file description):
	// the holder is reported, nothing fails, and the doctor does not wait.
	checks, info = DataDir(ctx, dir)
	lock := find(t, checks, "in use")
	if info.InUse == nil || info.InUse.PID != os.Getpid() || !strings.Contains(lock.Detail, "process "+strconv.Itoa(os.Getpid())) {
		t.Errorf("in use check = %+v, info.InUse = %+v", lock, info.InUse)
	}
	if c := find(t, checks, "schema"); c.Status != Warn || c.Broken() {
		t.Errorf("schema check while in use = %+v", c)
	}
}

func TestDataDirNewerSchemaFails(t *testing.T) {
	dir := stamped(t, keyspace.SchemaVersion+1)
	checks, _ := DataDir(context.Background(), dir)
	if c := find(t, checks, "schema"); !c.Broken() || !strings.Contains(c.Detail, "newer engine") {
		t.Errorf("schema check = %+v", c)
	}
}

func TestKeysNamesNeverValues(t *testing.T) {
	env := map[string]string{"A_KEY": "sk-secret-value", "EMPTY_KEY": ""}
	lookup := func(n string) (string, bool) { v, ok := env[n]; return v, ok }
	c := Keys([]string{"A_KEY", "B_KEY", "EMPTY_KEY"}, lookup)
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "sk-secret") {
		t.Fatalf("the check shows a value: %s", b)
	}
	if c.Status != OK || c.Detail != "set: A_KEY; not set: B_KEY, EMPTY_KEY" {
		t.Errorf("Keys = %+v", c)
	}
	if c := Keys([]string{"B_KEY"}, lookup); c.Status != Warn || c.Broken() {
		t.Errorf("none set = %+v", c)
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB"} {
		if got := HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// A data dir held by a memory server is read through it: the schema is
// known and the holder is named with its socket.
func TestDataDirServed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Held and served as a running engine run holds it.
	m, err := attach.Open(ctx, dir, attach.Options{Serve: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	checks, info := DataDir(ctx, dir)
	if c := find(t, checks, "schema"); c.Status != OK || info.Schema != keyspace.SchemaVersion || !strings.Contains(c.Detail, "through the memory server") {
		t.Errorf("schema check of a served data dir = %+v, info.Schema = %d", c, info.Schema)
	}
	if c := find(t, checks, "in use"); !strings.Contains(c.Detail, "serving "+service.SocketPath(dir)) {
		t.Errorf("in use check of a served data dir = %+v", c)
	}
}

// A damaged lesson record is reported by the lessons check and mended by
// Repair (moved aside), after which the check is sound; a held data dir is
// neither checked nor repaired.
func TestLessonsCheckAndRepair(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := m.Lessons.Record(ctx, lesson.Lesson{Lesson: "Close the chat widget before clicking Checkout.", Category: lesson.ErrorRecovery,
		FailedCommand: "click", ErrorPattern: "would receive the click", Domain: "shop.example"}, "")
	if err != nil {
		t.Fatal(err)
	}
	err = m.DB().Update(ctx, func(tx kv.Txn) error {
		return tx.Set(keyspace.Lesson("shop.example", l.ID), []byte("{not json"), 0)
	})
	if err != nil {
		t.Fatal(err)
	}

	// Held: not checked, not repaired, and the holder is named.
	_, info := DataDir(ctx, dir)
	if c := find(t, Lessons(ctx, dir, info, Store{}), "lessons"); c.Status != OK || !strings.Contains(c.Detail, "not checked: the data dir is in use") {
		t.Fatalf("lessons check of a held data dir = %+v", c)
	}
	if _, err := Repair(ctx, dir, Store{}); err == nil || !strings.Contains(err.Error(), "in use by process") {
		t.Fatalf("Repair of a held data dir = %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	_, info = DataDir(ctx, dir)
	c := find(t, Lessons(ctx, dir, info, Store{}), "lessons")
	if c.Status != Warn || !strings.Contains(c.Detail, "4 records, 1 damaged") || !strings.Contains(c.Detail, "engine doctor --repair") {
		t.Fatalf("lessons check = %+v", c)
	}
	r, err := Repair(ctx, dir, Store{})
	if h := r.Lessons; err != nil || !h.OK() || h.Records != 3 || h.MovedAside != 1 || r.RolledBack {
		t.Fatalf("Repair = %+v, %v", r, err)
	}
	_, info = DataDir(ctx, dir)
	if c := find(t, Lessons(ctx, dir, info, Store{}), "lessons"); c.Status != OK || c.Detail != "3 records, indexes sound (1 damaged records moved aside by an earlier repair, under damaged/)" {
		t.Fatalf("lessons check after repair = %+v", c)
	}
}

// The socket check: nothing at the socket path or a live server is fine;
// a regular file there is a warning naming it (commands then open the data
// dir themselves, and engine serve refuses to start).
func TestSocketCheck(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sock := service.SocketPath(dir)
	if c := Socket(ctx, dir); c.Status != OK || c.Detail != sock+": no socket" {
		t.Errorf("no socket: %+v", c)
	}
	srv, err := service.Open(ctx, dir, http.NotFoundHandler(), service.Options{})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() { served <- srv.Serve(sctx) }()
	c := Socket(ctx, dir)
	stop()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if c.Status != OK || c.Detail != sock+" (a memory server answers)" {
		t.Errorf("served: %+v", c)
	}
	if err := os.WriteFile(sock, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	checks, _ := DataDir(ctx, dir)
	if c := find(t, checks, "socket"); c.Status != Warn || c.Broken() || !strings.HasPrefix(c.Detail, sock+" is not a socket (a regular file)") {
		t.Errorf("a regular file: %+v", c)
	}
}
