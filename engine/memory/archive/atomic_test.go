package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/engine/memory/trajectory"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger"
	"github.com/engine-dev/engine/kv/badger/badgertest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// importDoc is an export of populated memory with changes of every kind
// the import merges: 40 more lessons, a fact at another confidence, a
// selector with more successes, a new trajectory.
func importDoc(t *testing.T, e *env) *Document {
	t.Helper()
	d, err := ParseFile(exportJSON(t, e.mem), "x.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		d.Lessons = append(d.Lessons, lesson.Lesson{Lesson: fmt.Sprintf("Imported lesson %d", i), Category: lesson.ErrorRecovery,
			FailedCommand: "click", ErrorPattern: fmt.Sprintf("pattern %d", i), Domain: "example.com", Source: lesson.SourceLearned})
	}
	d.Facts[0].Confidence = 0.95
	d.Selectors[0].Successes += 3
	d.Trajectories = append(d.Trajectories, trajectory.Trajectory{Domain: "example.com", Goal: "open the cart", RecordedAt: e.now,
		Steps: []trajectory.Step{{Action: "click", Role: "link", Name: "Cart", Selector: "#cart"}}})
	return d
}

// probes reads memory through the cached read paths (trajectory match,
// confident facts, known selectors), so the site caches hold what they read.
func probes(t *testing.T, m *Archive) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, goal := range []string{"search tennis rackets", "open the cart"} {
		mt, err := m.Trajectories.Match(ctx, "example.com", goal)
		if err != nil {
			t.Fatal(err)
		}
		if mt != nil {
			fmt.Fprintf(&b, "match %q: %s\n", goal, mt.Trajectory.ID)
		}
	}
	fs, err := m.Facts.Confident(ctx, "example.com")
	if err != nil {
		t.Fatal(err)
	}
	ss, err := m.Selectors.Known(ctx, "https://example.com/", 10)
	if err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal([]any{fs, ss})
	b.Write(j)
	return b.String()
}

// A store failure at any write of an import — the one transaction of a
// small import, or any batch of the undo journal of a large one — leaves
// the store byte for byte as it was, and the cached read paths agree.
func TestImportStoreFailureWritesNothing(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		opts kv.ApplyOptions
	}{
		{"one transaction", kv.ApplyOptions{}},
		{"journaled", kv.ApplyOptions{MaxTxnOps: 20, ChunkOps: 60}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			e := newEnv(t)
			e.populate(t)
			d := importDoc(t, e)
			wantProbes := probes(t, e.mem)
			before := kvtest.Dump(t, e.db)
			exported := exportJSON(t, e.mem)

			// The writes of a successful import, counted on another store.
			p := newEnv(t)
			p.populate(t)
			probe := &kvtest.FaultStore{Store: p.db}
			if _, err := newTest(probe, testOptions{Now: func() time.Time { return p.now }, Apply: mode.opts}).Import(ctx, d, "x.json"); err != nil {
				t.Fatal(err)
			}
			if mode.opts.MaxTxnOps > 0 && probe.Writes() < 8 {
				t.Fatalf("a journaled import made only %d writes", probe.Writes())
			}
			var gotEvents int
			for n := 1; n <= probe.Writes(); n++ {
				f := &kvtest.FaultStore{Store: e.db, FailAt: n}
				gotEvents = 0
				m := newTest(f, testOptions{Now: func() time.Time { return e.now }, Apply: mode.opts, Events: func(event.Event) { gotEvents++ }})
				_, err := m.Import(ctx, d, "x.json")
				if err == nil {
					// Past the commit point: only undo records were left,
					// and the next open deletes them.
					if _, err := kv.Recover(ctx, e.db); err != nil {
						t.Fatal(err)
					}
					break
				}
				if !errors.Is(err, kvtest.ErrInjected) || engine.IsInvalid(err) {
					t.Fatalf("write %d: %v, want the injected store failure", n, err)
				}
				if gotEvents != 0 {
					t.Fatalf("write %d failed: %d events emitted for an import that wrote nothing", n, gotEvents)
				}
				if d := kvtest.Diff(before, kvtest.Dump(t, e.db)); d != "" {
					t.Fatalf("write %d of %d failed: the store changed: %s", n, probe.Writes(), d)
				}
				if got := probes(t, e.mem); got != wantProbes {
					t.Fatalf("write %d failed: cached reads differ:\n%s\nwant\n%s", n, got, wantProbes)
				}
				if mode.opts.MaxTxnOps == 0 && n == probe.Writes() {
					// One transaction: its only write failed.
					if !bytes.Equal(exportJSON(t, e.mem), exported) {
						t.Fatal("export changed")
					}
					return
				}
			}
			// The import went through: all of it is there, also through the
			// caches primed before.
			p.now = e.now
			if got, want := exportJSON(t, e.mem), exportJSON(t, p.mem); !bytes.Equal(got, want) {
				t.Fatalf("after the import: export differs from a clean import's:\n%s\nwant\n%s", got, want)
			}
			if got, want := probes(t, e.mem), probes(t, p.mem); got != want || !strings.Contains(got, "open the cart") {
				t.Fatalf("after the import, cached reads:\n%s\nwant\n%s", got, want)
			}
			if gotEvents == 0 {
				t.Fatal("a successful import emitted no events")
			}
		})
	}
}

// An engine process killed (SIGKILL) part way through an import leaves,
// once the data dir is reopened, either none of the import or all of it.
func TestImportKilledMidwayIsAllOrNothing(t *testing.T) {
	opts := kv.ApplyOptions{MaxTxnOps: 20, ChunkOps: 60}
	if dir := os.Getenv("ARCHIVE_IMPORT_DIR"); dir != "" {
		at, _ := strconv.Atoi(os.Getenv("ARCHIVE_IMPORT_AT"))
		db, err := badger.Open(context.Background(), filepath.Join(dir, "data"), badger.Options{GCInterval: -1})
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(3)
		}
		e := &env{db: db, now: t0}
		e.mem = newTest(db, testOptions{Now: func() time.Time { return e.now }})
		e.populate(t)
		d := importDoc(t, e)
		before, _ := json.Marshal(kvtest.Dump(t, db))
		if err := os.WriteFile(filepath.Join(dir, "before.json"), before, 0o644); err != nil {
			t.Fatal(err)
		}
		f := &kvtest.FaultStore{Store: db, FailAt: at, Hook: func() {
			fmt.Println("ready")
			select {} // killed here
		}}
		_, err = newTest(f, testOptions{Now: func() time.Time { return e.now }, Apply: opts}).Import(context.Background(), d, "x.json")
		fmt.Println("done", err)
		os.Exit(0)
	}
	// What a finished import leaves, and how many writes it makes.
	ctx := context.Background()
	p := newEnv(t)
	p.populate(t)
	d := importDoc(t, p)
	probe := &kvtest.FaultStore{Store: p.db}
	if _, err := newTest(probe, testOptions{Now: func() time.Time { return p.now }, Apply: opts}).Import(ctx, d, "x.json"); err != nil {
		t.Fatal(err)
	}
	all := exportJSON(t, p.mem)
	// Kill points: each phase of the journal (saving old values, marking,
	// writing, the commit, the clean-up).
	points := []int{1, probe.Writes() / 3, probe.Writes() / 2, probe.Writes()/2 + 1, probe.Writes()}
	sawNone, sawAll := false, false
	for _, at := range points {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestImportKilledMidwayIsAllOrNothing$")
		cmd.Env = append(os.Environ(), "ARCHIVE_IMPORT_DIR="+dir, "ARCHIVE_IMPORT_AT="+strconv.Itoa(at))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var said strings.Builder
		buf := make([]byte, 256)
		for !strings.Contains(said.String(), "ready") && !strings.Contains(said.String(), "done") {
			n, err := out.Read(buf) // blocks until the subprocess reaches the write
			said.Write(buf[:n])
			if err != nil {
				break
			}
		}
		if !strings.Contains(said.String(), "ready") {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("write %d: the subprocess did not reach it: %q", at, said.String())
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		var before map[string]string
		b, err := os.ReadFile(filepath.Join(dir, "before.json"))
		if err != nil || json.Unmarshal(b, &before) != nil {
			t.Fatalf("before.json: %v", err)
		}
		db := badgertest.OpenDir(t, filepath.Join(dir, "data"))
		now := kvtest.Dump(t, db)
		e := &env{db: db, now: p.now}
		e.mem = newTest(db, testOptions{Now: func() time.Time { return e.now }})
		got := exportJSON(t, e.mem)
		db.Close()
		journal := false
		for k := range now {
			journal = journal || strings.HasPrefix(k, "kv/")
		}
		switch {
		case journal:
			t.Fatalf("killed at write %d: reopening left the journal behind", at)
		case kvtest.Diff(before, now) == "":
			sawNone = true
		case bytes.Equal(got, all):
			sawAll = true
		default:
			t.Fatalf("killed at write %d of %d: neither none (%s) nor all of the import:\n%s", at, probe.Writes(), kvtest.Diff(before, now), got)
		}
	}
	if !sawNone || !sawAll {
		t.Fatalf("kill points saw none=%v all=%v; want both", sawNone, sawAll)
	}
}

// An import too large for one badger transaction is written whole, through
// the journal, with the default options.
func TestImportLargerThanATransaction(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	d := &Document{Format: Format, Version: Version}
	d.Lessons = manyLessons(2500) // ~2.5 MB of keys and values; one transaction holds ~2 MB
	d.fillEmpty()
	f := &kvtest.FaultStore{Store: e.db}
	if _, err := newTest(f, testOptions{Now: func() time.Time { return e.now }}).Import(ctx, d, "big.json"); err != nil {
		t.Fatal(err)
	}
	if f.Writes() < 3 {
		t.Fatalf("2500 lessons went in %d writes: expected the journal (badger's transaction limit)", f.Writes())
	}
	ls, err := e.mem.Lessons.List(ctx, lesson.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2500 {
		t.Fatalf("%d lessons after importing 2500", len(ls))
	}
	for k := range kvtest.Dump(t, e.db) {
		if strings.HasPrefix(k, "kv/") {
			t.Fatalf("the journal was left behind: %s", k)
		}
	}
}

func manyLessons(n int) []lesson.Lesson {
	ls := make([]lesson.Lesson, n)
	for i := range ls {
		ls[i] = lesson.Lesson{Lesson: fmt.Sprintf("When the cookie wall %d blocks the page, close it with its reject button first", i),
			Category: lesson.ErrorRecovery, FailedCommand: "click", ErrorPattern: fmt.Sprintf("element %d is covered by another", i),
			Domain: fmt.Sprintf("site%d.example", i%500), Source: lesson.SourceLearned}
	}
	return ls
}

// Importing 1k lessons (one transaction) and 10k lessons (the undo
// journal) into an empty data dir; cpu-ms/op counts every goroutine's CPU
// (badger's too), steadier than wall time on a shared machine.
func BenchmarkImportLessons(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ctx := context.Background()
			d := &Document{Format: Format, Version: Version, Lessons: manyLessons(n)}
			d.fillEmpty()
			cpu := func() time.Duration {
				var ru syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
				return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
			var used time.Duration
			for b.Loop() {
				b.StopTimer()
				db := badgertest.Open(b)
				m := newTest(db, testOptions{})
				b.StartTimer()
				c := cpu()
				if _, err := m.Import(ctx, d, "x.json"); err != nil {
					b.Fatal(err)
				}
				used += cpu() - c
				b.StopTimer()
				db.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(used.Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// A real disk full: badger on a size-limited tmpfs, with kv's free-space
// guard off (MinFree -1) so the store really runs out. Badger writes its
// logs through mmap, so a full tmpfs kills the writer with SIGBUS, or the
// write fails; either way, once there is room again and the dir is
// reopened, the store holds all of the import or none of it. Needs root
// (mount). With the guard on, the write is refused before the disk is full
// (kv's TestDiskFullIsAnError).
func TestImportDiskFullIsAllOrNothing(t *testing.T) {
	if dir := os.Getenv("ARCHIVE_DISKFULL_DIR"); dir != "" {
		db, err := badger.Open(context.Background(), filepath.Join(dir, "mnt", "data"), badger.Options{GCInterval: -1, MinFree: -1})
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(3)
		}
		e := &env{db: db, now: t0}
		e.mem = newTest(db, testOptions{Now: func() time.Time { return e.now }})
		e.populate(t)
		d := importDoc(t, e)
		d.Lessons = append(d.Lessons, manyLessons(2500)...) // ~2.5 MB, on a 2 MiB tmpfs
		before, _ := json.Marshal(kvtest.Dump(t, db))
		if err := os.WriteFile(filepath.Join(dir, "before.json"), before, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = e.mem.Import(context.Background(), d, "x.json")
		fmt.Println("import:", err)
		if err := db.Close(); err != nil {
			fmt.Println("close:", err)
		}
		os.Exit(0)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a size-limited tmpfs")
	}
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (%v: %s)", err, out)
	}
	defer func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	}()
	cmd := exec.Command(os.Args[0], "-test.run=^TestImportDiskFullIsAllOrNothing$")
	cmd.Env = append(os.Environ(), "ARCHIVE_DISKFULL_DIR="+dir)
	out, runErr := cmd.CombinedOutput()
	said := string(out)
	if strings.Contains(said, "import: <nil>") {
		t.Fatalf("the import fitted on the 2 MiB tmpfs: the test did not fill the disk\n%s", said)
	}
	if strings.Contains(said, "open:") {
		t.Fatalf("the subprocess could not open the store: %s", said)
	}
	t.Logf("the import on a full disk: %v; %.200s", runErr, said)
	// Room again, then reopen.
	if out, err := exec.Command("mount", "-o", "remount,size=512m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v: %s", err, out)
	}
	var before map[string]string
	b, err := os.ReadFile(filepath.Join(dir, "before.json"))
	if err != nil || json.Unmarshal(b, &before) != nil {
		t.Fatalf("before.json (the subprocess died before the import?): %v\n%s", err, said)
	}
	db := badgertest.OpenDir(t, filepath.Join(mnt, "data"))
	defer db.Close()
	now := kvtest.Dump(t, db)
	if d := kvtest.Diff(before, now); d != "" {
		// Not none: then all of it.
		m := newTest(db, testOptions{})
		ls, err := m.Lessons.List(context.Background(), lesson.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ls) < 2500 {
			t.Fatalf("after a disk-full import and reopening: neither none (%s) nor all (%d lessons)", d, len(ls))
		}
		t.Log("the import had committed")
	}
}
