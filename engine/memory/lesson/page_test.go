package lesson

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// checkIndexes compares every lesson index entry in db with the entries
// the stored records call for (indexEntries), keys and values: nothing
// missing, nothing stale.
func checkIndexes(t *testing.T, db kv.Store) {
	t.Helper()
	ctx := context.Background()
	want := map[string]string{}
	got := map[string]string{}
	err := db.View(ctx, func(r kv.Reader) error {
		// Records, found by their own range (not through the id index).
		err := r.Scan(keyspace.SitesPrefix(), kv.ScanOptions{}, func(k, v []byte) error {
			if !strings.Contains(string(k), "/lesson/") {
				return nil
			}
			l, err := decode(v, keyspace.LastPart(k))
			if err != nil {
				return err
			}
			if string(keyspace.Lesson(siteOf(l.Domain), l.ID)) != string(k) {
				return fmt.Errorf("record %s stored under the wrong key %s", l.ID, k)
			}
			for _, e := range indexEntries(l, v) {
				want[string(e.key)] = string(e.value)
			}
			return nil
		})
		if err != nil {
			return err
		}
		isIndex := func(k string) bool {
			for _, p := range []string{"id/lesson/", "due/lesson/", "list/"} {
				if strings.HasPrefix(k, p) {
					return true
				}
			}
			for _, p := range []string{"/lesson-cmd/", "/lesson-host/", "/tier1/", "/lesson-list/"} {
				if strings.HasPrefix(k, "site/") && strings.Contains(k, p) {
					return true
				}
			}
			return false
		}
		return r.Scan(nil, kv.ScanOptions{}, func(k, v []byte) error {
			if isIndex(string(k)) {
				got[string(k)] = string(v)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("index entry missing: %s", k)
		case g != v:
			t.Errorf("index entry %s = %q, want %q", k, g, v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("stale index entry: %s", k)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// testLessons are n lessons of every category and source, spread over a
// few sites and subdomains, with colliding use counts.
func testLessons(r *rand.Rand, n int) []Lesson {
	cats := Categories
	hosts := []string{"", "", "site1.example", "www.site1.example", "a.www.site1.example", "shop.site1.example", "site2.example", "other.org"}
	var out []Lesson
	for i := range n {
		l := Lesson{
			Lesson:        fmt.Sprintf("lesson %d", i),
			Category:      cats[r.IntN(len(cats))],
			FailedCommand: benchVerbs[r.IntN(len(benchVerbs))],
			ErrorPattern:  fmt.Sprintf("pattern %d", i),
			Domain:        hosts[r.IntN(len(hosts))],
			UseCount:      r.IntN(6),
			Source:        []Source{SourceSeed, SourceLearned}[r.IntN(2)],
			CreatedAt:     "2026-01-01",
			LastUsed:      fmt.Sprintf("2026-0%d-1%d", 1+r.IntN(3), r.IntN(10)),
		}
		if l.Category == SiteSpecific && l.Domain == "" {
			l.Domain = "site2.example"
		}
		out = append(out, l)
	}
	return out
}

func importLessons(t *testing.T, s *Store, ls []Lesson) {
	t.Helper()
	p, err := s.Prepare(ls, ImportOptions{KeepTrust: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Import(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// allPages concatenates every page of f at page size n.
func allPages(t *testing.T, s *Store, f Filter, n int) []Lesson {
	t.Helper()
	var out []Lesson
	cursor := ""
	for i := 0; ; i++ {
		p, err := s.Page(context.Background(), f, listing.Request{Limit: n, Cursor: cursor})
		if err != nil {
			t.Fatalf("page %d of %+v: %v", i, f, err)
		}
		if len(p.Items) > n {
			t.Fatalf("page of %d items at limit %d", len(p.Items), n)
		}
		out = append(out, p.Items...)
		if p.Next == "" {
			return out
		}
		if len(p.Items) == 0 {
			t.Fatalf("an empty page with a next cursor")
		}
		if i > 10_000 {
			t.Fatal("paging does not end")
		}
		cursor = p.Next
	}
}

func ids(ls []Lesson) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.ID
	}
	return out
}

var testFilters = []Filter{
	{},
	{Tier: 1},
	{Tier: 2},
	{Category: BestPractice},
	{Category: ErrorRecovery, Tier: 2},
	{Category: ToolFallback, Tier: 1},
	{Domain: "a.www.site1.example"},
	{Domain: "www.site1.example", Category: SiteSpecific},
	{Domain: "site1.example"},
	{Domain: "site2.example", Tier: 2},
	{Domain: "www.site1.example", Tier: 1},
	{Domain: "nowhere.example"},
}

func TestPagesConcatenateToList(t *testing.T) {
	e := newEnv(t)
	importLessons(t, e.s, testLessons(rand.New(rand.NewPCG(1, 2)), 300))
	checkIndexes(t, e.db)
	oracle := New(e.db, Options{Unindexed: true}) // the scan-and-sort List of schema 1
	ctx := context.Background()
	for _, f := range testFilters {
		want, err := oracle.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.s.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), ids(want)) {
			t.Fatalf("List(%+v) = %v\nwant %v", f, ids(got), ids(want))
		}
		if len(want) == 0 && f.Domain != "nowhere.example" && f.Domain != "www.site1.example" {
			t.Fatalf("filter %+v selects nothing: the test data is too thin", f)
		}
		for _, n := range []int{1, 3, 7, 50, 1000} {
			for name, s := range map[string]*Store{"indexed": e.s, "unindexed": oracle} {
				if name == "unindexed" && n < 7 {
					continue // each unindexed page reads every lesson
				}
				if got := allPages(t, s, f, n); !slices.Equal(ids(got), ids(want)) {
					t.Fatalf("%s pages of %d of %+v = %v\nwant %v", name, n, f, ids(got), ids(want))
				}
			}
		}
		for _, m := range []int{1, 5, 10} {
			f2 := f
			f2.Max = m
			got, err := e.s.List(ctx, f2)
			if err != nil {
				t.Fatal(err)
			}
			if w := want[:min(m, len(want))]; !slices.Equal(ids(got), ids(w)) {
				t.Fatalf("List(%+v) = %v, want %v", f2, ids(got), ids(w))
			}
		}
	}
}

func TestCursorSurvivesWrites(t *testing.T) {
	e := newEnv(t)
	r := rand.New(rand.NewPCG(3, 4))
	importLessons(t, e.s, testLessons(r, 120))
	ctx := context.Background()
	for _, f := range []Filter{{}, {Tier: 2}, {Domain: "www.site1.example"}} {
		before, err := e.s.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var seen []Lesson
		cursor := ""
		for step := 0; ; step++ {
			p, err := e.s.Page(ctx, f, listing.Request{Limit: 4, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, p.Items...)
			if p.Next == "" {
				break
			}
			cursor = p.Next
			// Between pages: use, remove and add lessons anywhere.
			all, err := e.s.List(ctx, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			victim := all[r.IntN(len(all))]
			switch step % 3 {
			case 0:
				if _, err := e.s.Use(ctx, victim.ID, ""); err != nil {
					t.Fatal(err)
				}
			case 1:
				if err := e.s.Remove(ctx, victim.ID); err != nil {
					t.Fatal(err)
				}
			case 2:
				e.record(Lesson{Lesson: fmt.Sprintf("new %d", step), Category: ErrorRecovery, FailedCommand: "click",
					ErrorPattern: fmt.Sprintf("new %d", step), Domain: "www.site1.example"}, "www.site1.example")
			}
		}
		after, err := e.s.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		posBefore := map[string]string{}
		for _, l := range before {
			posBefore[l.ID] = listPos(&l)
		}
		count := map[string]int{}
		for _, l := range seen {
			count[l.ID]++
		}
		for _, l := range after {
			if p, ok := posBefore[l.ID]; ok && p == listPos(&l) {
				if count[l.ID] != 1 {
					t.Fatalf("filter %+v: unmoved lesson %s (%s) seen %d times", f, l.ID, p, count[l.ID])
				}
			}
		}
		checkIndexes(t, e.db)
	}
}

func TestBadCursorAndLimit(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, c := range []string{"!!!", "a b", enc("run:x"), enc("lesson:"), enc("lesson:garbage"),
		enc("lesson:3/ffffffffffffffff0/x"), enc("lesson:1/ffffffffffffffff0/a/b")} {
		_, err := e.s.Page(ctx, Filter{}, listing.Request{Cursor: c})
		if !engine.IsInvalid(err) {
			t.Errorf("cursor %q: err = %v, want ErrInvalid", c, err)
		}
	}
	if _, err := e.s.Page(ctx, Filter{}, listing.Request{Limit: -1}); !engine.IsInvalid(err) {
		t.Errorf("negative limit: %v", err)
	}
	for _, f := range []Filter{{Tier: 3}, {Category: "nope"}, {Domain: "bad host!"}} {
		if _, err := e.s.Page(ctx, f, listing.Request{}); !engine.IsInvalid(err) {
			t.Errorf("filter %+v: %v", f, err)
		}
	}
	// A good cursor from a page works; Limit 0 is the default page size.
	p, err := e.s.Page(ctx, Filter{}, listing.Request{Limit: 1})
	if err != nil || len(p.Items) != 1 || p.Next == "" {
		t.Fatalf("first page: %+v, %v", p, err)
	}
	p, err = e.s.Page(ctx, Filter{}, listing.Request{Cursor: p.Next})
	if err != nil || len(p.Items) != 2 || p.Next != "" {
		t.Fatalf("second page: %+v, %v", p, err)
	}
}

// TestIndexesFollowEveryWrite runs a random sequence of every kind of
// lesson write and checks after each that the indexes match the records
// and that List matches the scan-and-sort oracle.
func TestIndexesFollowEveryWrite(t *testing.T) {
	e := newEnv(t)
	r := rand.New(rand.NewPCG(5, 6))
	ctx := context.Background()
	oracle := New(e.db, Options{Unindexed: true})
	hosts := []string{"", "www.site1.example", "shop.site1.example", "site2.example", "a.other.org", "b.third.net", "c.fourth.io"}
	someID := func() string {
		ls, err := e.s.List(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ls) == 0 {
			return "none"
		}
		return ls[r.IntN(len(ls))].ID
	}
	for step := range 150 {
		var op string
		var err error
		switch k := r.IntN(10); k {
		case 0, 1, 2:
			op = "record"
			cat := Categories[r.IntN(len(Categories))]
			dom := hosts[r.IntN(len(hosts))]
			if cat == SiteSpecific && dom == "" {
				dom = "site2.example"
			}
			_, _, err = e.s.Record(ctx, Lesson{Lesson: "l", Category: cat, FailedCommand: "click",
				ErrorPattern: fmt.Sprintf("p%d", r.IntN(12)), Domain: dom}, hosts[r.IntN(len(hosts))])
		case 3:
			op = "use"
			_, err = e.s.Use(ctx, someID(), hosts[r.IntN(len(hosts))])
		case 4:
			op = "helped"
			_, err = e.s.Helped(ctx, someID(), hosts[r.IntN(len(hosts))])
		case 5:
			op = "remove"
			err = e.s.Remove(ctx, someID())
		case 6:
			op = "prune"
			e.now = e.now.AddDate(0, 0, 40)
			_, _, err = e.s.Prune(ctx, 60)
		case 7:
			op = "import"
			ls, lerr := e.s.List(ctx, Filter{})
			if lerr != nil {
				t.Fatal(lerr)
			}
			var in []Lesson
			for _, l := range ls {
				if r.IntN(3) == 0 {
					l.UseCount = r.IntN(8)
					l.Domain = hosts[r.IntN(len(hosts))]
					if l.Category == SiteSpecific && l.Domain == "" {
						l.Domain = "site2.example"
					}
					in = append(in, l)
				}
			}
			in = append(in, testLessons(r, 5)...)
			p, perr := e.s.Prepare(in, ImportOptions{KeepTrust: true})
			if perr != nil {
				t.Fatal(perr)
			}
			err = e.s.Import(ctx, p)
		case 8:
			op = "forget"
			site := []string{"site1.example", "site2.example", "other.org"}[r.IntN(3)]
			_, err = e.s.ForgetSite(ctx, site)
			if err == nil {
				err = e.db.DropPrefix(ctx, keyspace.SitePrefix(site))
			}
		case 9:
			op = "seed-like"
			importLessons(t, e.s, Seeds())
		}
		if err != nil && !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("step %d %s: %v", step, op, err)
		}
		checkIndexes(t, e.db)
		for _, f := range testFilters[:4] {
			want, _ := oracle.List(ctx, f)
			if got := allPages(t, e.s, f, 5); !slices.Equal(ids(got), ids(want)) {
				t.Fatalf("step %d %s: pages of %+v = %v\nwant %v", step, op, f, ids(got), ids(want))
			}
		}
	}
}

func TestForgetSiteLeavesNoListEntries(t *testing.T) {
	e := newEnv(t)
	importLessons(t, e.s, testLessons(rand.New(rand.NewPCG(7, 8)), 200))
	ctx := context.Background()
	if _, err := e.s.ForgetSite(ctx, "site1.example"); err != nil {
		t.Fatal(err)
	}
	if err := e.db.DropPrefix(ctx, keyspace.SitePrefix("site1.example")); err != nil {
		t.Fatal(err)
	}
	checkIndexes(t, e.db)
	err := e.db.View(ctx, func(r kv.Reader) error {
		return r.Scan([]byte("list/"), kv.ScanOptions{}, func(k, v []byte) error {
			if string(v) == "site1.example" {
				return fmt.Errorf("%s still points at the forgotten site", k)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := e.s.List(ctx, Filter{Domain: "www.site1.example"})
	if err != nil || len(ls) != 0 {
		t.Fatalf("forgotten site lists %d lessons, %v", len(ls), err)
	}
}

func TestBuildListIndexRebuildsMissingEntries(t *testing.T) {
	e := newEnv(t)
	importLessons(t, e.s, testLessons(rand.New(rand.NewPCG(9, 10)), 2500))
	ctx := context.Background()
	want, err := e.s.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	dropListEntries(t, e.db)
	n, err := e.s.BuildListIndex(ctx)
	if err != nil || n != len(want) {
		t.Fatalf("BuildListIndex = %d, %v; want %d", n, err, len(want))
	}
	checkIndexes(t, e.db)
	// Idempotent: a second run (after a crash part way) changes nothing.
	if _, err := e.s.BuildListIndex(ctx); err != nil {
		t.Fatal(err)
	}
	checkIndexes(t, e.db)
}

// dropListEntries deletes the schema-2 list entries: the store as schema 1
// wrote it.
func dropListEntries(t *testing.T, db kv.Store) {
	t.Helper()
	ctx := context.Background()
	var sites = map[string]bool{}
	err := db.View(ctx, func(r kv.Reader) error {
		return r.Scan(keyspace.SitesPrefix(), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			if bytes.Contains(k, []byte("/lesson-list/")) {
				s, _ := keyspace.SiteOf(k)
				sites[s] = true
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DropPrefix(ctx, []byte("list/")); err != nil {
		t.Fatal(err)
	}
	for _, s := range slices.Sorted(maps.Keys(sites)) {
		if err := db.DropPrefix(ctx, []byte("site/"+s+"/lesson-list/")); err != nil {
			t.Fatal(err)
		}
	}
}
