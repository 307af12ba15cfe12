package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv/badger/badgertest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// A streamed import writes what Import writes: the export of a populated
// memory, streamed into an empty one, exports the same bytes, and the
// lessons of a document larger than a chunk all land.
func TestImportStreamLikeImport(t *testing.T) {
	ctx := context.Background()
	a := newEnv(t)
	a.populate(t)
	out := exportJSON(t, a.mem)
	b := newEnv(t)
	b.now = a.now
	res, err := b.mem.ImportStream(ctx, bytes.NewReader(out), "export.json")
	if err != nil {
		t.Fatal(err)
	}
	if again := exportJSON(t, b.mem); !bytes.Equal(out, again) {
		t.Fatalf("a streamed import of an export exports something else:\n%s\nwant\n%s", again, out)
	}
	d, _ := ParseFile(out, "export.json")
	if res.Imported.String() != d.Count().String() {
		t.Fatalf("imported %s, the document holds %s", res.Imported, d.Count())
	}

	n := StreamChunk*2 + 7
	big := streamDoc(t, n)
	c := newEnv(t)
	res, err = c.mem.ImportStream(ctx, bytes.NewReader(big), "big.json")
	if err != nil {
		t.Fatal(err)
	}
	if res.Imported[0].Count != n {
		t.Fatalf("imported %s; want %d lessons", res.Imported, n)
	}
	for k := range kvtest.Dump(t, c.db) {
		if strings.HasPrefix(k, "kv/") {
			t.Fatalf("the journal was left behind: %s", k)
		}
	}
}

// streamDoc is an export document of n lessons.
func streamDoc(t *testing.T, n int) []byte {
	t.Helper()
	d := &Document{Format: Format, Version: Version, Lessons: manyLessons(n)}
	d.fillEmpty()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Bad input anywhere — a lesson in a later chunk, a JSON error, a check
// that fails after the last record — leaves the store as it was, with an
// error naming the file and the record by its index in the file.
func TestImportStreamIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	n := StreamChunk*2 + 7
	bad := StreamChunk + 11
	good := streamDoc(t, n)
	var d Document
	if err := json.Unmarshal(good, &d); err != nil {
		t.Fatal(err)
	}
	d.Lessons[bad].Category = "folklore"
	badLesson, _ := json.Marshal(&d)
	for _, tc := range []struct {
		name  string
		in    []byte
		check func() error
		want  string
	}{
		{"a lesson in the second chunk", badLesson, nil, "lessons[2011]: "},
		{"truncated", good[:len(good)/2], nil, "big.json: lessons["},
		{"unknown field", bytes.Replace(good, []byte(`"facts"`), []byte(`"fax"`), 1), nil, `unknown field "fax"`},
		{"the check after the last record", good, func() error { return errors.New("digest mismatch") }, "digest mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			before := kvtest.Dump(t, e.db)
			m := e.mem
			m.check = tc.check
			_, err := m.ImportStream(ctx, bytes.NewReader(tc.in), "big.json")
			if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "big.json: ") {
				t.Fatalf("ImportStream = %v; want an invalid-input error naming big.json: %s", err, tc.want)
			}
			after := kvtest.Dump(t, e.db)
			if len(after) != len(before) {
				t.Fatalf("bad input left %d keys, there were %d", len(after), len(before))
			}
			for k, v := range before {
				if after[k] != v {
					t.Fatalf("bad input changed %s", k)
				}
			}
		})
	}
}

// gcReader records the GC target in force when the importer first reads.
type gcReader struct {
	r    io.Reader
	seen int
	read bool
}

func (g *gcReader) Read(p []byte) (int, error) {
	if !g.read {
		g.read = true
		g.seen = debug.SetGCPercent(-1)
		debug.SetGCPercent(g.seen)
	}
	return g.r.Read(p)
}

// ImportStream runs with the GC target at streamGCPercent, keeps a lower
// one (or GC off) as it is, and restores the process's own when it
// returns, after an error too.
func TestImportStreamLowersGCWhileItRuns(t *testing.T) {
	ctx := context.Background()
	good := streamDoc(t, 10)
	for _, tc := range []struct {
		before, during int
		doc            []byte
		bad            bool
	}{
		{100, streamGCPercent, good, false},
		{200, streamGCPercent, []byte(`{"format": "engine-export", "version": 1, "lessons": [{"lesson": 3}]}`), true},
		{10, 10, good, false},
		{-1, -1, good, false},
	} {
		old := debug.SetGCPercent(tc.before)
		g := &gcReader{r: bytes.NewReader(tc.doc)}
		_, err := newEnv(t).mem.ImportStream(ctx, g, "x.json")
		after := debug.SetGCPercent(old)
		if (err != nil) != tc.bad {
			t.Fatalf("GOGC %d: import: %v", tc.before, err)
		}
		if g.seen != tc.during || after != tc.before {
			t.Fatalf("GOGC %d: %d while importing and %d after, want %d and %d", tc.before, g.seen, after, tc.during, tc.before)
		}
	}
}

// BenchmarkImportStream streams an export of 10k lessons into an empty
// on-disk store. With -memprofile it profiles the import's heap; the
// whole-process peak RSS is scripts/bench-import.sh's.
func BenchmarkImportStream(b *testing.B) {
	ctx := context.Background()
	d := &Document{Format: Format, Version: Version, Lessons: manyLessons(10000)}
	d.fillEmpty()
	doc, err := json.Marshal(d)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		db := badgertest.Open(b)
		m := newTest(db, testOptions{})
		b.StartTimer()
		if _, err := m.ImportStream(ctx, bytes.NewReader(doc), "x.json"); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
}
