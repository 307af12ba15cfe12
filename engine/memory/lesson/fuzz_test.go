package lesson

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// fuzzNow is the fuzz targets' clock.
var fuzzNow = time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)

// fuzzStores are two stores reused by every iteration of a fuzz target
// (opening badger costs ~100 ms; wiping a few keys does not): what an
// iteration imports or learns goes into the first, its export is
// re-imported into the second.
type fuzzStores struct {
	a, b   kv.Store
	sa, sb *Store
}

func newFuzzStores(tb testing.TB) *fuzzStores {
	fs := &fuzzStores{a: badgertest.Open(tb), b: badgertest.Open(tb)}
	opts := Options{Now: func() time.Time { return fuzzNow }, MaxRecall: 1 << 20, Tier1Cap: 1 << 20}
	fs.sa, fs.sb = New(fs.a, opts), New(fs.b, opts)
	return fs
}

func (fs *fuzzStores) wipe(t *testing.T) {
	kvtest.Wipe(t, fs.a)
	kvtest.Wipe(t, fs.b)
}

// checkRecallable asserts every stored lesson can be read, listed and
// recalled by the triggers that should find it, then that the memory
// exports, re-imports into an empty store without error and exports the
// same again.
func checkRecallable(t *testing.T, fs *fuzzStores) {
	t.Helper()
	ctx := context.Background()
	all, err := fs.sa.List(ctx, Filter{})
	if err != nil {
		t.Fatalf("list after import: %v", err)
	}
	tier1, err := fs.sa.Tier1(ctx)
	if err != nil {
		t.Fatalf("tier 1 after import: %v", err)
	}
	has := func(ls []Lesson, id string) bool {
		return slices.ContainsFunc(ls, func(l Lesson) bool { return l.ID == id })
	}
	for _, l := range all {
		if _, err := fs.sa.Get(ctx, l.ID); err != nil {
			t.Fatalf("get %s: %v", l.ID, err)
		}
		// Trigger A, as a failing command with the lesson's pattern in its
		// error would ask (the known bug: a NUL byte in a pattern made
		// every recall for the verb fail with "damaged index entry").
		got, err := fs.sa.RecallError(ctx, "playwright-cli "+l.FailedCommand+" e1 x", "Error: "+l.ErrorPattern+": x", l.Domain)
		if err != nil {
			t.Fatalf("recall on error for %+v: %v", l, err)
		}
		if (l.FailedCommand != "" || l.ErrorPattern != "") && !has(got, l.ID) {
			t.Fatalf("lesson %+v not recalled on its own command and error; got %+v", l, got)
		}
		if _, err := fs.sa.RecallError(ctx, "fill", "too many arguments: x", l.Domain); err != nil {
			t.Fatalf("recall on a fill error: %v", err)
		}
		if l.Domain != "" {
			got, err := fs.sa.RecallDomain(ctx, l.Domain)
			if err != nil {
				t.Fatalf("recall on domain %q: %v", l.Domain, err)
			}
			if !has(got, l.ID) {
				t.Fatalf("lesson %+v not recalled on its domain; got %+v", l, got)
			}
			if _, err := fs.sa.List(ctx, Filter{Domain: l.Domain}); err != nil {
				t.Fatalf("list on domain %q: %v", l.Domain, err)
			}
		}
		if l.Tier() == 1 && !has(tier1, l.ID) {
			t.Fatalf("tier 1 lesson %+v not in tier 1", l)
		}
	}
	// Export (as memory.json) → import into an empty store → same lessons.
	b, err := json.Marshal(File{Version: 1, Lessons: all})
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	in, err := ReadFile(bytes.NewReader(b), "export.json")
	if err != nil {
		t.Fatalf("re-read export: %v\n%s", err, b)
	}
	prepared, err := fs.sb.Prepare(in, ImportOptions{KeepTrust: true})
	if err != nil {
		t.Fatalf("re-import export: %v\n%s", err, b)
	}
	if err := fs.sb.Import(ctx, prepared); err != nil {
		t.Fatalf("re-import export: %v", err)
	}
	again, err := fs.sb.List(ctx, Filter{})
	if err != nil {
		t.Fatalf("list after re-import: %v", err)
	}
	for i := range all {
		if len(all[i].TriggeredDomains) == 0 {
			all[i].TriggeredDomains = []string{}
		}
	}
	if !reflect.DeepEqual(all, again) {
		t.Fatalf("export → import changed the lessons:\nbefore %+v\nafter  %+v", all, again)
	}
}

// FuzzImportRecall feeds memory.json files to the importer. Whatever it
// accepts must be recallable, exportable and re-importable; whatever it
// refuses must write nothing.
func FuzzImportRecall(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"lessons":[{"lesson":"If fill fails, use type.","category":"tool_fallback","failed_command":"fill","error_pattern":"too many arguments","use_count":2,"created_at":"2026-01-01","last_used":"2026-02-01","source":"learned","triggered_domains":["a.com"]}]}`,
		`{"version":1,"lessons":[{"lesson":"x","category":"error_recovery","failed_command":"fill","error_pattern":"a\u0000b"}]}`,
		`{"version":1,"lessons":[{"lesson":"Close the banner","category":"site_specific","domain":"www.bücher.de"}]}`,
		`{"version":1,"lessons":[{"lesson":"y","category":"best_practice","failed_command":"npx playwright-cli click","domain":"[::1]:8080"}]}`,
		`{"version":1,"lessons":[{"id":"l0000000001","lesson":"z","category":"error_recovery","error_pattern":"Would Receive The Click"},{"lesson":"z2","category":"error_recovery","error_pattern":"would receive the click"}]}`,
		`{"version":2,"lessons":[]}`,
		`{"version":1,"lessons":[{"lesson":"","category":"x"}]}`,
	} {
		f.Add([]byte(s))
	}
	fs := newFuzzStores(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fs.wipe(t)
		ctx := context.Background()
		ls, err := ReadFile(bytes.NewReader(data), "memory.json")
		if err != nil {
			return
		}
		prepared, err := fs.sa.Prepare(ls, ImportOptions{KeepTrust: true})
		if err != nil {
			if !engine.IsInvalid(err) {
				t.Fatalf("prepare refused with a non-InvalidError: %v", err)
			}
			return
		}
		for _, l := range prepared {
			if l.ID == "" || l.Source == "" || l.CreatedAt == "" {
				t.Fatalf("prepared lesson lacks defaults: %+v", l)
			}
		}
		if err := fs.sa.Import(ctx, prepared); err != nil {
			t.Fatalf("import of prepared lessons: %v", err)
		}
		checkRecallable(t, fs)
	})
}

// FuzzLearnRecall feeds action logs to `engine learn`: a log that parses
// must learn without error, and what it learned must be recallable,
// exportable and re-importable (a NUL byte in an error used to produce a
// lesson that broke every later recall for its verb).
func FuzzLearnRecall(f *testing.F) {
	for _, s := range []string{
		"{\"step\":1,\"action\":\"fill\",\"ref\":\"e3\",\"value\":\"x y\",\"ok\":false,\"error\":\"too many arguments: expected 2\",\"url\":\"https://shop.example.com/\"}\n{\"step\":2,\"action\":\"type\",\"ref\":\"e3\",\"value\":\"x y\",\"ok\":true}\n",
		"{\"command\":\"playwright-cli click e5\",\"execution_result\":\"error\",\"stderr\":\"Element is not visible: a\\u0000b\"}\n{\"command\":\"playwright-cli press Escape\",\"execution_result\":\"ok\"}\n",
		"{\"action\":\"fill\",\"ok\":false,\"error\":\"\\u001b[31mElement is not an input\\u001b[0m\",\"url\":\"http://[::1]:8080/x\"}\n{\"action\":\"press\",\"value\":\"a\\u0000\",\"ok\":true}\n",
		"{\"action\":\"fi\\u0000ll\",\"ok\":false,\"error\":\"some bad thing\"}\n{\"action\":\"click\",\"ok\":true}\n",
		"{\"action\":\"hover\",\"ok\":false,\"error\":\"page crashed badly\",\"url\":\"https://bücher.de/\"}\n{\"action\":\"navigate\",\"ok\":true}\n",
		"not json\n",
	} {
		f.Add([]byte(s), "")
	}
	f.Add([]byte("{\"action\":\"fill\",\"ok\":false,\"error\":\"cannot fill this field now\"}\n{\"action\":\"type\",\"ok\":true}\n"), "www.example.co.uk")
	fs := newFuzzStores(f)
	f.Fuzz(func(t *testing.T, data []byte, host string) {
		fs.wipe(t)
		ctx := context.Background()
		actions, err := ParseActionLog(bytes.NewReader(data), "actions.jsonl")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "actions.jsonl:") {
				t.Fatalf("parse error does not name the file and line: %v", err)
			}
			return
		}
		if _, err := domain.Host(host); host != "" && err != nil {
			host = ""
		}
		learned, err := fs.sa.Learn(ctx, actions, host)
		if err != nil {
			t.Fatalf("learn from a log that parsed: %v", err)
		}
		for _, l := range learned {
			if strings.ContainsRune(l.Lesson.ErrorPattern, 0) {
				t.Fatalf("learned a pattern with a NUL byte: %q", l.Lesson.ErrorPattern)
			}
			// What was learned from a failure is recalled when it happens again.
			a := actions[slices.IndexFunc(actions, func(a Action) bool { return a.Step == l.Step && !a.OK })]
			where := host
			if h, err := domain.Host(a.URL); a.URL != "" && err == nil {
				where = h
			}
			got, err := fs.sa.RecallError(ctx, a.Command, a.Error, where)
			if err != nil || !slices.ContainsFunc(got, func(g Lesson) bool { return g.ID == l.Lesson.ID }) {
				t.Fatalf("lesson %+v learned from step %d is not recalled on its failure (%q, %q, %q): %+v, %v", l.Lesson, l.Step, a.Command, a.Error, where, got, err)
			}
		}
		for _, a := range actions {
			if a.OK {
				continue
			}
			where := host
			if h, err := domain.Host(a.URL); a.URL != "" && err == nil {
				where = h
			}
			if _, err := fs.sa.RecallError(ctx, a.Command, a.Error, where); err != nil {
				t.Fatalf("recall for a failed step after learning: %v", err)
			}
		}
		checkRecallable(t, fs)
	})
}
