package lesson

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

// The benchmarks fill a store with n lessons shaped like a memory that grew
// over many sites: most lessons are bound to one site (a site's quirks and
// the failures first learned there), spread over n/20 sites; a few hundred
// are global (the distinct command × error pattern pairs that proved
// themselves on several sites); the rest of the global range is the seeds.
// A second shape, "skewed", makes 20% of all lessons global and for one
// command, the worst case for recall on error.

var benchSizes = []int{1_000, 10_000, 100_000}

var benchVerbs = []string{"click", "fill", "type", "press", "select", "hover", "scroll", "wait", "back", "navigate", "check", "upload"}

const benchGlobal = 240

func benchLesson(r *rand.Rand, i, n int, skewed bool) Lesson {
	verb := benchVerbs[r.IntN(len(benchVerbs))]
	l := Lesson{
		Lesson:           fmt.Sprintf("When %s fails with problem %d, do the other thing %d.", verb, i, i),
		FailedCommand:    verb,
		ErrorPattern:     fmt.Sprintf("problem %d", i),
		Category:         ErrorRecovery,
		Source:           SourceLearned,
		UseCount:         r.IntN(20),
		CreatedAt:        "2026-03-01",
		LastUsed:         "2026-03-10",
		TriggeredDomains: []string{"a.example", "b.example"},
	}
	switch {
	case skewed && i%5 == 0:
		l.FailedCommand = "fill"
	case i < benchGlobal:
		if i%4 == 0 {
			l.Category = BestPractice
		}
	default:
		l.Domain = fmt.Sprintf("site%d.example", r.IntN(max(n/20, 1)))
		if i%3 == 0 {
			l.Category, l.FailedCommand, l.ErrorPattern = SiteSpecific, "", ""
		}
	}
	return l
}

func benchLessons(n int, skewed bool) []Lesson {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	ls := make([]Lesson, n)
	for i := range ls {
		ls[i] = benchLesson(r, i, n, skewed)
	}
	return ls
}

// benchStore is a store on disk holding benchLessons(n), closed and opened
// again after filling, as the next engine command would find it. The 1M
// store is a copy of the cached one (bench_cache_test.go).
func benchStore(b *testing.B, n int, skewed bool) *Store {
	b.Helper()
	if n >= bench1M {
		return cachedStore(b, n, skewed)
	}
	dir := b.TempDir()
	db := badgertest.OpenDir(b, dir)
	if err := benchFill(context.Background(), benchNew(db), n, skewed); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	return benchNew(badgertest.OpenDir(b, dir))
}

func BenchmarkRecallError(b *testing.B) {
	for _, shape := range []string{"grown", "skewed"} {
		for _, n := range benchSizesAll() {
			b.Run(fmt.Sprintf("%s/n=%d", shape, n), func(b *testing.B) {
				s := benchStore(b, n, shape == "skewed")
				ctx := context.Background()
				b.ResetTimer()
				for i := range b.N {
					ls, err := s.RecallError(ctx, "fill e37 padel rackets", "too many arguments: expected 2, received 3", fmt.Sprintf("www.site%d.example", i%max(n/20, 1)))
					if err != nil || len(ls) == 0 {
						b.Fatalf("recall: %d lessons, %v", len(ls), err)
					}
				}
			})
		}
	}
}

func BenchmarkRecallDomain(b *testing.B) {
	for _, n := range benchSizesAll() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := benchStore(b, n, false)
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				if _, err := s.RecallDomain(ctx, fmt.Sprintf("www.site%d.example", i%max(n/20, 1))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkTier1(b *testing.B) {
	for _, n := range benchSizesAll() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := benchStore(b, n, false)
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				ls, err := s.Tier1(ctx)
				if err != nil || len(ls) != DefaultTier1Cap {
					b.Fatalf("tier 1: %d lessons, %v", len(ls), err)
				}
			}
		})
	}
}

func BenchmarkRecord(b *testing.B) {
	for _, n := range benchSizesAll() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := benchStore(b, n, false)
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				// Half new lessons, half uses of existing ones (dedup).
				l := Lesson{Lesson: "x", Category: ErrorRecovery, FailedCommand: "click", ErrorPattern: fmt.Sprintf("new problem %d", i/2)}
				if _, _, err := s.Record(ctx, l, "www.google.com"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// seedFile is the design's own storage, the baseline: every lesson in one
// JSON file, loaded and scanned linearly for each operation and rewritten
// whole on every change.
type seedFile struct{ path string }

func (f seedFile) load() (*File, error) {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return nil, err
	}
	var m File
	return &m, json.Unmarshal(b, &m)
}

func (f seedFile) save(m *File) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return os.WriteFile(f.path, b, 0o644)
}

func (f seedFile) recallError(command, errText, host string) ([]Lesson, error) {
	m, err := f.load()
	if err != nil {
		return nil, err
	}
	var out []Lesson
	e := strings.ToLower(errText)
	for _, l := range m.Lessons {
		if (l.FailedCommand != "" && l.FailedCommand == command) || (l.ErrorPattern != "" && strings.Contains(e, strings.ToLower(l.ErrorPattern))) {
			if l.Domain == "" || strings.HasSuffix(host, l.Domain) {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

func (f seedFile) recallDomain(host string) ([]Lesson, error) {
	m, err := f.load()
	if err != nil {
		return nil, err
	}
	var out []Lesson
	for _, l := range m.Lessons {
		if l.Domain != "" && strings.HasSuffix(host, l.Domain) {
			out = append(out, l)
		}
	}
	return out, nil
}

func (f seedFile) record(l Lesson) error {
	m, err := f.load()
	if err != nil {
		return err
	}
	for i := range m.Lessons {
		if m.Lessons[i].FailedCommand == l.FailedCommand && m.Lessons[i].ErrorPattern == l.ErrorPattern {
			m.Lessons[i].UseCount++
			return f.save(m)
		}
	}
	m.Lessons = append(m.Lessons, l)
	return f.save(m)
}

// benchSeedFile is the seed's JSON file of n lessons: the cached one at 1M
// (copied when the benchmark writes to it), a new one in a temp dir below.
func benchSeedFile(b *testing.B, n int, writes bool) seedFile {
	f := seedFile{filepath.Join(b.TempDir(), "memory.json")}
	if n >= bench1M {
		cached := cachedSeedFile(b, n)
		if !writes {
			return cached
		}
		if err := copyFile(cached.path, f.path); err != nil {
			b.Fatal(err)
		}
		return f
	}
	if err := f.save(&File{Version: 1, Lessons: benchLessons(n, false)}); err != nil {
		b.Fatal(err)
	}
	return f
}

func BenchmarkSeedBaseline(b *testing.B) {
	for _, n := range benchSizesAll() {
		b.Run(fmt.Sprintf("recall_error/n=%d", n), func(b *testing.B) {
			f := benchSeedFile(b, n, false)
			b.ResetTimer()
			for i := range b.N {
				if _, err := f.recallError("fill", "too many arguments", fmt.Sprintf("www.site%d.example", i%max(n/20, 1))); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("recall_domain/n=%d", n), func(b *testing.B) {
			f := benchSeedFile(b, n, false)
			b.ResetTimer()
			for i := range b.N {
				if _, err := f.recallDomain(fmt.Sprintf("www.site%d.example", i%max(n/20, 1))); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("record/n=%d", n), func(b *testing.B) {
			f := benchSeedFile(b, n, true)
			b.ResetTimer()
			for i := range b.N {
				if err := f.record(Lesson{Lesson: "x", FailedCommand: "click", ErrorPattern: fmt.Sprintf("new problem %d", i/2)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPage is the first page of 10 of `lessons list` (every lesson,
// Tier 1 first, then by use): it should cost the same at 1k and 100k
// lessons. The tier 2 variant and a category variant read other index
// families; List with Max is the old call site's path.
func BenchmarkPage(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := benchStore(b, n, false)
			ctx := context.Background()
			for _, c := range []struct {
				name string
				f    Filter
			}{{"all", Filter{}}, {"tier2", Filter{Tier: 2}}, {"error_recovery", Filter{Category: ErrorRecovery}}} {
				b.Run(c.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						p, err := s.Page(ctx, c.f, listing.Request{Limit: 10})
						if err != nil || len(p.Items) != 10 || p.Next == "" {
							b.Fatalf("page: %d lessons, %v", len(p.Items), err)
						}
					}
				})
			}
			b.Run("list_max", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					ls, err := s.List(ctx, Filter{Max: 10})
					if err != nil || len(ls) != 10 {
						b.Fatalf("list: %d lessons, %v", len(ls), err)
					}
				}
			})
		})
	}
}

// BenchmarkNormalError is what placeholders add to every error recall: the
// error's text normalised once (four regular expressions per line).
func BenchmarkNormalError(b *testing.B) {
	const msg = `another element would receive the click: <div id="cookie-banner" class="backdrop"> at e37, 3 of 5 tries (see https://shop.example/help)`
	for b.Loop() {
		if normalError(msg) == "" {
			b.Fatal("empty")
		}
	}
}
