package lesson

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

// The million-lesson stores are generated once and kept between runs in a
// cache dir: building one takes minutes, and flatness from 1k to 1M is the
// point of the benchmarks. A cached store is named by shape, size and
// benchGenVersion, and is used only if its stamp (written last) names the
// same generator version, schema version and layout fingerprint, and the
// names and sizes of the files the build left; anything else is removed and
// built again.

// benchGenVersion is the version of the cached stores' generator: bump it
// when benchLesson, benchFill or the seed file's shape changes. A change in
// the key layout or the value encoding is caught by the layout fingerprint
// without a bump.
const benchGenVersion = 2

// bench1M is the size that is cached, and only run when ENGINE_BENCH_1M=1
// (make bench sets it), so `go test -bench .` stays quick.
const bench1M = 1_000_000

// benchSizesAll is benchSizes plus 1M when ENGINE_BENCH_1M=1.
func benchSizesAll() []int {
	if os.Getenv("ENGINE_BENCH_1M") != "1" {
		return benchSizes
	}
	return append(benchSizes[:len(benchSizes):len(benchSizes)], bench1M)
}

// benchCacheDir is ENGINE_BENCH_CACHE, or engine-bench under the user's
// cache dir.
func benchCacheDir(b testing.TB) string {
	if d := os.Getenv("ENGINE_BENCH_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		b.Fatalf("bench cache: %v (set ENGINE_BENCH_CACHE)", err)
	}
	return filepath.Join(d, "engine-bench")
}

// benchStamp is what a cached store must have been built with to be used.
func benchStamp(b testing.TB, n int, shape string) string {
	return fmt.Sprintf("lessons gen=%d schema=%d layout=%s n=%d shape=%s\n",
		benchGenVersion, keyspace.SchemaVersion, benchLayout(b), n, shape)
}

var (
	benchLayoutOnce sync.Once
	benchLayoutSum  string
	benchLayoutErr  error
)

// benchLayout fingerprints the key layout and value encoding (layoutOf),
// once per process. If recall's keys or encoding change, cached stores are
// rebuilt.
func benchLayout(b testing.TB) string {
	benchLayoutOnce.Do(func() { benchLayoutSum, benchLayoutErr = layoutOf(b) })
	if benchLayoutErr != nil {
		b.Fatalf("bench layout: %v", benchLayoutErr)
	}
	return benchLayoutSum
}

// layoutOf is the SHA-256 of every key and value of a small store filled
// as the cached ones are, but for the values of the lesson generation
// tokens, which are random (with them, each process had a fingerprint of
// its own and rebuilt both 1M stores).
func layoutOf(b testing.TB) (string, error) {
	dir, err := os.MkdirTemp("", "engine-bench-layout")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	db := badgertest.OpenDir(b, dir)
	defer db.Close()
	if err := benchFill(context.Background(), benchNew(db), 300, false); err != nil {
		return "", err
	}
	h := sha256.New()
	err = db.View(context.Background(), func(r kv.Reader) error {
		return r.Scan(nil, kv.ScanOptions{}, func(k, v []byte) error {
			if f, _ := keyspace.SiteFamily(k); f == keyspace.FamilyLessonGen {
				v = nil
			}
			fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(v), v)
			return nil
		})
	})
	return hex.EncodeToString(h.Sum(nil))[:16], err
}

// benchNew is the store the benchmarks use, on a fixed clock.
func benchNew(db kv.Store) *Store {
	return New(db, Options{Now: func() time.Time { return time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC) }})
}

// benchFill writes benchLessons(n) and the seeds through the import path
// (batched transactions of importBatch lessons).
func benchFill(ctx context.Context, s *Store, n int, skewed bool) error {
	ls, err := s.Prepare(benchLessons(n, skewed), ImportOptions{KeepTrust: true})
	if err != nil {
		return err
	}
	if err := s.Import(ctx, ls); err != nil {
		return err
	}
	return s.Seed(ctx)
}

// cachedStoreDir returns the dir of a built store of n lessons, building it
// if the cache has none with the right stamp. The dir is read-only by
// convention: benchmarks open a copy of it (copyDir).
func cachedStoreDir(b testing.TB, n int, skewed bool) string {
	b.Helper()
	shape := "grown"
	if skewed {
		shape = "skewed"
	}
	dir := filepath.Join(benchCacheDir(b), fmt.Sprintf("lessons-%s-n%d-v%d", shape, n, benchGenVersion))
	stamp := benchStamp(b, n, shape)
	if got, err := os.ReadFile(filepath.Join(dir, "bench.stamp")); err == nil && string(got) == stamp+benchFiles(dir) {
		return dir
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	removeStaleBuilds(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		b.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".build-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	db := badgertest.OpenDir(b, tmp)
	if err := benchFill(context.Background(), benchNew(db), n, skewed); err != nil {
		b.Fatalf("bench cache: build %s: %v", dir, err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	b.Logf("bench cache: built %s in %s", dir, time.Since(start).Round(time.Millisecond))
	if err := os.WriteFile(filepath.Join(tmp, "bench.stamp"), []byte(stamp+benchFiles(tmp)), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatalf("bench cache: %v", err)
	}
	return dir
}

// benchFiles lists the files of a store dir with their sizes, for the
// stamp: a file changed since the build (a store opened read-write in
// place) makes the dir stale.
func benchFiles(dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	var sb strings.Builder
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || e.Name() == "bench.stamp" || e.Name() == "engine.lock" {
			continue
		}
		fmt.Fprintf(&sb, "%s %d\n", e.Name(), fi.Size())
	}
	return sb.String()
}

// removeStaleBuilds removes the half-built dirs of dir that a killed or
// timed-out run left, once they are a day old (a younger one may be
// another run's build in progress).
func removeStaleBuilds(dir string) {
	old, _ := filepath.Glob(dir + ".build-*")
	for _, d := range old {
		if fi, err := os.Stat(d); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			os.RemoveAll(d)
		}
	}
}

// cachedStore opens a copy of the cached store of n lessons in a temp dir
// (1.2 GB at 1M, ~2.4 s): whatever the benchmark writes (Record) and the
// compactions badger runs after opening never reach the cache.
func cachedStore(b *testing.B, n int, skewed bool) *Store {
	b.Helper()
	dst := b.TempDir()
	if err := copyDir(cachedStoreDir(b, n, skewed), dst); err != nil {
		b.Fatalf("bench cache: %v", err)
	}
	return benchNew(badgertest.OpenDir(b, dst))
}

// cachedStoreReadOnly opens the cached store of n lessons in place,
// read-only, for benchmarks that only read: no copy (1.4 GB at 1M, which
// a nearly full disk may not hold beside the cache) and no compactions
// running behind the clock. A read-only open changes no file of the dir.
func cachedStoreReadOnly(b testing.TB, n int, skewed bool) *Store {
	b.Helper()
	db, err := badger.Open(context.Background(), cachedStoreDir(b, n, skewed), badger.Options{ReadOnly: true, GCInterval: -1})
	if err != nil {
		b.Fatalf("bench cache: %v", err)
	}
	b.Cleanup(func() { db.Close() })
	return benchNew(db)
}

// copyDir copies a closed badger dir. Every file is copied, tables too:
// hard links would share the cache's tables, and badger truncates a table
// to zero before it unlinks it after a compaction.
func copyDir(src, dst string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || name == "bench.stamp" || name == "engine.lock" {
			continue
		}
		from, to := filepath.Join(src, name), filepath.Join(dst, name)
		if err := copyFile(from, to); err != nil {
			return fmt.Errorf("copy %s: %w", from, err)
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

// cachedSeedFile returns the seed baseline's JSON file of n lessons from
// the cache, writing it if missing or stale. Like the stores it is used
// read-only: record copies it first.
func cachedSeedFile(b testing.TB, n int) seedFile {
	b.Helper()
	path := filepath.Join(benchCacheDir(b), fmt.Sprintf("seed-grown-n%d-v%d.json", n, benchGenVersion))
	stamp := fmt.Sprintf("seed gen=%d n=%d\n", benchGenVersion, n)
	if got, err := os.ReadFile(path + ".stamp"); err == nil && string(got) == stamp {
		if _, err := os.Stat(path); err == nil {
			return seedFile{path}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	os.Remove(path + ".stamp")
	tmp := seedFile{fmt.Sprintf("%s.build-%d", path, os.Getpid())}
	defer os.Remove(tmp.path)
	if err := tmp.save(&File{Version: 1, Lessons: benchLessons(n, false)}); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp.path, path); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path+".stamp", []byte(stamp), 0o644); err != nil {
		b.Fatal(err)
	}
	return seedFile{path}
}

// TestBenchCache checks the cache the 1M benchmarks rely on: a store is
// built once and reused, a copy's writes and compactions do not reach it,
// and a stale stamp or a changed file makes it rebuilt.
func TestBenchCache(t *testing.T) {
	t.Setenv("ENGINE_BENCH_CACHE", t.TempDir())
	ctx := context.Background()
	// Two fills (as two processes make them) fingerprint alike.
	if a, err := layoutOf(t); err != nil {
		t.Fatal(err)
	} else if b, err := layoutOf(t); err != nil || a != b {
		t.Fatalf("layout fingerprints %s and %s, %v", a, b, err)
	}
	dir := cachedStoreDir(t, 500, false)
	before := dirSums(t, dir)
	if again := cachedStoreDir(t, 500, false); again != dir || !maps.Equal(dirSums(t, again), before) {
		t.Fatalf("second use rebuilt the cached store")
	}

	// Read in place, read-only: the cache is unchanged.
	ro := cachedStoreReadOnly(t, 500, false)
	if ls, err := ro.RecallError(ctx, "click", "problem 7", "www.site3.example"); err != nil || len(ls) == 0 {
		t.Fatalf("recall on the cache, read-only: %d lessons, %v", len(ls), err)
	}
	if err := ro.db.Close(); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(dirSums(t, dir), before) {
		t.Fatalf("a read-only open changed the cached store")
	}

	work := t.TempDir()
	if err := copyDir(dir, work); err != nil {
		t.Fatal(err)
	}
	db := badgertest.OpenDir(t, work)
	s := benchNew(db)
	if ls, err := s.RecallDomain(ctx, "www.site3.example"); err != nil || len(ls) == 0 {
		t.Fatalf("recall on the copy: %d lessons, %v", len(ls), err)
	}
	for i := range 300 {
		if _, _, err := s.Record(ctx, Lesson{Lesson: "x", Category: ErrorRecovery, FailedCommand: "click", ErrorPattern: fmt.Sprintf("new problem %d", i)}, "www.google.com"); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(dirSums(t, dir), before) {
		t.Fatalf("writes to a copy changed the cached store")
	}

	var sst string
	for name := range before {
		if strings.HasSuffix(name, ".sst") {
			sst = name
		}
	}
	if err := os.Truncate(filepath.Join(dir, sst), 0); err != nil {
		t.Fatal(err)
	}
	cachedStoreDir(t, 500, false)
	if fi, err := os.Stat(filepath.Join(dir, sst)); err == nil && fi.Size() == 0 {
		t.Fatalf("a truncated table did not rebuild the store")
	}

	if err := os.WriteFile(filepath.Join(dir, "bench.stamp"), []byte("lessons gen=0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "marker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cachedStoreDir(t, 500, false)
	if _, err := os.Stat(filepath.Join(dir, "marker")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a stale stamp did not rebuild the store: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "bench.stamp")); string(got) != benchStamp(t, 500, "grown")+benchFiles(dir) {
		t.Fatalf("stamp after rebuild: %q", got)
	}
}

// dirSums is the SHA-256 of every file in dir, by name.
func dirSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		sums[e.Name()] = hex.EncodeToString(sum[:])
	}
	return sums
}
