package attach_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/server/attach"
	"github.com/engine-dev/engine/engine/server/service"
	"github.com/engine-dev/engine/kv"
)

func open(t *testing.T, dir string, opts attach.Options) *attach.Memory {
	t.Helper()
	m, err := attach.Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

var shared = lesson.Lesson{Lesson: "Scroll the list first.", Category: lesson.SiteSpecific,
	FailedCommand: "click", ErrorPattern: "not visible", Domain: "shop.example"}

// The first attachment holds the data dir and, with Serve, serves it; the
// next goes through its socket; when the holder detaches, the other finds
// the memory again and holds it itself, losing nothing.
func TestHandOver(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := open(t, dir, attach.Options{Serve: true})
	if !strings.HasPrefix(a.Where(), "held here and served on") {
		t.Fatalf("first attachment: %s", a.Where())
	}
	b := open(t, dir, attach.Options{})
	if !strings.HasPrefix(b.Where(), "served by") {
		t.Fatalf("second attachment: %s; want it served by the first", b.Where())
	}
	if _, err := b.RecordLesson(ctx, shared); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// b's server is gone: its next request finds the data dir free and
	// holds it.
	got, err := b.RecordLesson(ctx, shared)
	if err != nil {
		t.Fatalf("after the holder left: %v", err)
	}
	if got.Created || got.Lesson.UseCount != 1 {
		t.Fatalf("after the hand-over: %+v; want one more use of the lesson recorded through the first", got)
	}
	if b.Where() != "held here" {
		t.Fatalf("second attachment after the hand-over: %s", b.Where())
	}
}

// Several attachments record the same pattern at once while the holder
// changes under them: every use is counted once.
func TestExactCountsAcrossHandOvers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const clients, each = 4, 50
	first := open(t, dir, attach.Options{Serve: true})
	if _, err := first.RecordLesson(ctx, shared); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := attach.Open(ctx, dir, attach.Options{Serve: true})
			if err != nil {
				errs <- err
				return
			}
			defer m.Close()
			for j := range each {
				if _, err := m.RecordLesson(ctx, shared); err != nil {
					errs <- fmt.Errorf("client %d, request %d: %w", i, j, err)
					return
				}
			}
		}()
	}
	// The holder leaves while the others are at work.
	if _, err := first.RecordLesson(ctx, shared); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	m, err := memory.Open(ctx, dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ls, err := m.Lessons.List(ctx, lesson.Filter{Domain: "shop.example"})
	if err != nil || len(ls) != 1 {
		t.Fatalf("lessons: %+v, %v", ls, err)
	}
	if want := clients*each + 1; ls[0].UseCount != want {
		t.Fatalf("use count %d, want %d: uses were lost or counted twice", ls[0].UseCount, want)
	}
}

// A socket left by a server that was killed is not trusted: the next
// process holds the data dir itself (and, serving, replaces the socket).
func TestStaleSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, service.SocketName)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("the stale socket is not there: %v", err)
	}
	m := open(t, dir, attach.Options{Serve: true})
	if !strings.HasPrefix(m.Where(), "held here and served on") {
		t.Fatalf("over a stale socket: %s", m.Where())
	}
	if _, err := m.Tier1(context.Background()); err != nil {
		t.Fatal(err)
	}
	other := open(t, dir, attach.Options{})
	if !strings.HasPrefix(other.Where(), "served by") {
		t.Fatalf("the replaced socket does not serve: %s", other.Where())
	}
}

// A request after Close fails clearly; Close twice is fine.
func TestClosed(t *testing.T) {
	m, err := attach.Open(context.Background(), t.TempDir(), attach.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Tier1(context.Background()); err == nil || !strings.Contains(err.Error(), "detached") {
		t.Fatalf("after Close: %v", err)
	}
}

// Errors keep their class through an attachment held here or served.
func TestErrorsKeepTheirClass(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	held := open(t, dir, attach.Options{Serve: true})
	served := open(t, dir, attach.Options{})
	for name, m := range map[string]*attach.Memory{"held": held, "served": served} {
		if _, err := m.Lesson(ctx, "nope"); !isNotFound(err) {
			t.Errorf("%s: unknown lesson: %v", name, err)
		}
		if _, err := m.RecordLesson(ctx, lesson.Lesson{Category: lesson.BestPractice}); err == nil || !strings.Contains(err.Error(), "the lesson text is empty") {
			t.Errorf("%s: empty lesson: %v", name, err)
		}
	}
}

func isNotFound(err error) bool {
	return errors.Is(err, engine.ErrNotFound) && strings.Contains(err.Error(), "no such lesson")
}

// A process that only reads a settled data dir opens it read-only; its
// first write reopens it read-write, and what it wrote is there for the
// next reader. A new data dir is opened read-write at once (the schema
// and seeds are due).
func TestReadOnlyUntilAWrite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first := open(t, dir, attach.Options{})
	if first.Where() != "held here" {
		t.Fatalf("a new data dir: %s; want it opened read-write", first.Where())
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	m := open(t, dir, attach.Options{})
	if m.Where() != "held here read-only" {
		t.Fatalf("a settled data dir: %s; want it read-only", m.Where())
	}
	before, err := m.RecallError(ctx, "click e1", "element not visible", "shop.example")
	if err != nil {
		t.Fatal(err)
	}
	if m.Where() != "held here read-only" {
		t.Fatalf("after a recall: %s; want it still read-only", m.Where())
	}
	if _, err := m.RecordLesson(ctx, shared); err != nil {
		t.Fatalf("a write after reads: %v", err)
	}
	if m.Where() != "held here" {
		t.Fatalf("after a write: %s; want it read-write", m.Where())
	}
	after, err := m.RecallError(ctx, "click e1", "element not visible", "shop.example")
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+1 {
		t.Fatalf("recall after recording a lesson: %d tips, before %d; want one more", len(after), len(before))
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	again := open(t, dir, attach.Options{})
	got, err := again.RecallError(ctx, "click e1", "element not visible", "shop.example")
	if err != nil || len(got) != len(after) {
		t.Fatalf("a reader after the writer: %d tips, %v; want %d", len(got), err, len(after))
	}
}

// A data dir with work due on opening — seeds to write, an interrupted
// import's journal to roll back — is not read read-only: the read-write
// open that does the work is.
func TestReadOnlyNotWhenDue(t *testing.T) {
	ctx := context.Background()
	for name, leave := range map[string]func(db kv.Store) error{
		"seeds": func(db kv.Store) error {
			return db.Update(ctx, func(tx kv.Txn) error { return tx.Delete(keyspace.Seeded()) })
		},
		"journal": func(db kv.Store) error {
			j, err := kv.Begin(ctx, db, kv.ApplyOptions{})
			if err != nil {
				return err
			}
			return j.Write(ctx, []kv.Op{{Key: []byte("half/written"), Value: []byte("x")}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			m, err := memory.Open(ctx, dir, memory.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := leave(m.DB()); err != nil {
				t.Fatal(err)
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			a := open(t, dir, attach.Options{})
			if a.Where() != "held here" {
				t.Fatalf("a data dir with %s due: %s; want it read-write", name, a.Where())
			}
			if _, err := a.RecallError(ctx, "click e1", "element not visible", "shop.example"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A regular file where the socket should be: an attachment says so once
// and holds the data dir as when no server runs; one that would serve
// holds it unserved (a second attachment then holds it after the first
// detaches). The file is left as it was.
func TestRegularFileAtSocketPath(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sock := service.SocketPath(dir)
	if err := os.WriteFile(sock, []byte("not a socket"), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var warned []string
	warn := func(msg string) { mu.Lock(); warned = append(warned, msg); mu.Unlock() }

	a := open(t, dir, attach.Options{Serve: true, Warn: warn})
	if a.Where() != "held here" {
		t.Fatalf("serving attachment: %s, want held here (nothing can be served)", a.Where())
	}
	if _, err := a.RecordLesson(ctx, shared); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := open(t, dir, attach.Options{Warn: warn})
	for range 2 { // a read, then a write: the data dir is reopened, not re-reported
		if _, err := b.Tier1(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := b.RecordLesson(ctx, shared); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.HasPrefix(b.Where(), "held here") {
		t.Fatalf("second attachment: %s", b.Where())
	}
	mu.Lock()
	defer mu.Unlock()
	want := sock + " is not a socket (a regular file)"
	if len(warned) != 2 || !strings.HasPrefix(warned[0], want) || !strings.HasPrefix(warned[1], want) || !strings.HasSuffix(warned[0], "; opening the data dir here") {
		t.Fatalf("warnings %q, want one an attachment, each starting %q", warned, want)
	}
	if b, err := os.ReadFile(sock); err != nil || string(b) != "not a socket" {
		t.Fatalf("the file at the socket path: %q, %v", b, err)
	}
}
