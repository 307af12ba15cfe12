package lesson

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// The compiled recall index answers as the scans it replaces (kept as the
// oracle, and for sites without a token) on random stores: random verbs,
// patterns with placeholders and partial words, domains and subdomains,
// use and helped ties, damaged entries, and writes and forgets between
// recalls. Answers are compared byte for byte, order included, and so is
// the damage each recall reports.
func TestRecallIndexMatchesScan(t *testing.T) {
	for seed := range 12 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			// Fold the overlay of own writes after 1 to 4 entries, so
			// folding is exercised as often as the overlay itself.
			defer func(m int) { overlayMin = m }(overlayMin)
			if seed%3 != 0 {
				overlayMin = seed % 3 * 2
			}
			// File every bucket's patterns by anchor word (the test's
			// buckets are small) for three seeds in four.
			defer func(m int) { smallBucket = m }(smallBucket)
			if seed%4 != 0 {
				smallBucket = 0
			}
			r := rand.New(rand.NewPCG(uint64(seed), 14))
			db := badgertest.Open(t)
			now := time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)
			s := New(db, Options{Now: func() time.Time { return now }, Provenance: engine.Provenance{Source: engine.SourceManual},
				MaxRecall: 1 + r.IntN(4)})
			ctx := context.Background()
			if seed%2 == 0 {
				if err := s.Seed(ctx); err != nil {
					t.Fatal(err)
				}
			}
			ls, err := s.Prepare(randLessons(r, 40+r.IntN(80)), ImportOptions{KeepTrust: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Import(ctx, ls); err != nil {
				t.Fatal(err)
			}
			for round := range 30 {
				for range 8 {
					compareRecalls(t, s, randCommand(r), randError(r), randHost(r))
					compareDomain(t, s, randHost(r))
				}
				randWrite(t, r, s, db, round)
			}
			// A store written before tokens: every site falls back to the scan.
			dropTokens(t, db)
			for range 20 {
				compareRecalls(t, s, randCommand(r), randError(r), randHost(r))
				compareDomain(t, s, randHost(r))
			}
		})
	}
}

var (
	idxVerbs    = []string{"click", "fill", "type", "press", ""}
	idxDomains  = []string{"", "", "", "shop.example", "www.shop.example", "a.b.shop.example", "other.example", "m.other.example", "x.co.uk"}
	idxPatterns = []string{
		"", "", "element <ref> is not visible", "timeout <n>ms exceeded", "too many arguments", "<text> is not a snapshot ref",
		"ny argum", "not visi", "timeout", "net::err_name_not_resolved", "waiting for selector <text>", "see <url>",
		"Another element would receive the click", "expected <n>, received <n>", "is not", "<n>", "<ref> is not",
		"strict mode violation: <text> resolved to <n> elements", "ms exceeded", "Element is", "ref (refs look like <ref>)",
	}
	idxErrors = []string{
		"Element e12 is not visible", "Timeout 5000ms exceeded.", `"foo" is not a snapshot ref (refs look like e37)`,
		"too many arguments: expected 2, received 3", "See https://x.example/a for help", "Error: waiting for selector 'a.b'",
		"net::ERR_NAME_NOT_RESOLVED at https://shop.example/", "another element would receive the click: <div>",
		"strict mode violation: \"button\" resolved to 4 elements", "is not", "elementis notvisible", "seehttps://a.b/c",
		"", "TIMEOUT", "many argumentsxx", "\x1b[31mElement e9 is not visible\x1b[0m\nsecond line: timeout 3ms exceeded",
		"problem 123 at item12 \"x9\" failed", "error 404: not found at https://shop.example/p/12?x=3 (retry 2)",
		"ab12cd v2 x_12 12_x 0x1f 3.14 1,000 -7 +8", "abc12https://x.y/z7 then 9", "resolved to 123 elements, expected 23",
		"item12 'foo 3' failed at 2026-03-01T10:00:00Z", "é12 ü3x 12é", "<n>12 literal <ref>3 and \"a\"12 and 'b'c3",
		"line 1\n  42  \nx99y\t\t7", "Problem 500000 (step 7)",
	}
	// Numbers for the patterns and errors made from the templates below:
	// some are prefixes or suffixes of others ("5" of "500", "23" of "123",
	// "00" of "500").
	idxNumbers        = []string{"1", "12", "123", "2", "23", "3", "5", "50", "500", "500000", "0", "00", "404", "2026", "26"}
	idxNumberPatterns = []string{
		"problem %s", "%s elements", "item%s", "item%s <text>", "e%s is not", "%sms exceeded", "error %s", "x%s",
		"to %s elem", "<n> of %s", "%s", "v%s api", "expected %s, received <n>", "abc%s<url>", "%s<n>", "<ref> %s",
		"problem %s (step", "%s (step <n>)", "%s_x", "x_%s",
	}
	idxNumberErrors = []string{
		"problem %s happened", "resolved to %s elements", "item%s \"foo\" failed", "element e%s is not visible",
		"Timeout %sms exceeded.", "error %s: not found", "see x%s and 'q' at https://a.example/%s", "abc%shttps://a.b/c",
		"fill failed with problem %s (step %s)", "v%s api is gone: %s <n> of %s", "x_%s 12_x", "%s of <n>%s",
		"%s_x and %s<n>", "abc%s elements",
	}
)

// randPattern is a pattern from idxPatterns, or one of idxNumberPatterns
// with a random number.
func randPattern(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return idxPatterns[r.IntN(len(idxPatterns))]
	}
	return fmt.Sprintf(idxNumberPatterns[r.IntN(len(idxNumberPatterns))], idxNumbers[r.IntN(len(idxNumbers))])
}

// randErrorLine is an error from idxErrors, or one of idxNumberErrors with
// random numbers.
func randErrorLine(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return idxErrors[r.IntN(len(idxErrors))]
	}
	t := idxNumberErrors[r.IntN(len(idxNumberErrors))]
	args := make([]any, strings.Count(t, "%s"))
	for i := range args {
		args[i] = idxNumbers[r.IntN(len(idxNumbers))]
	}
	return fmt.Sprintf(t, args...)
}

func randLesson(r *rand.Rand, i int) Lesson {
	d := idxDomains[r.IntN(len(idxDomains))]
	cat := []Category{ErrorRecovery, ErrorRecovery, ToolFallback, BestPractice}[r.IntN(4)]
	if d != "" && r.IntN(3) == 0 {
		cat = SiteSpecific
	}
	l := Lesson{
		Lesson:        fmt.Sprintf("Lesson %d: do the other thing.", i),
		Category:      cat,
		FailedCommand: idxVerbs[r.IntN(len(idxVerbs))],
		ErrorPattern:  randPattern(r),
		Domain:        d,
		UseCount:      r.IntN(3),
		// Shown 12 and never helped: unhelpful, ranked last (rankCmp).
		Counts:    engine.Counts{Shown: []int{0, 3, 12}[r.IntN(3)], Helped: r.IntN(2)},
		CreatedAt: "2026-03-01",
		LastUsed:  []string{"2026-03-01", "2026-03-05", "2026-03-10"}[r.IntN(3)],
		Source:    SourceLearned,
		Trust:     Candidate,
	}
	if l.FailedCommand == "" && l.ErrorPattern == "" {
		l.ErrorPattern = "timeout"
	}
	if r.IntN(5) == 0 {
		l.ErrorPattern += fmt.Sprintf(" %d", i) // unique, so the pair is new
	}
	return l
}

func randLessons(r *rand.Rand, n int) []Lesson {
	out := make([]Lesson, n)
	for i := range out {
		out[i] = randLesson(r, i)
	}
	return out
}

func randCommand(r *rand.Rand) string {
	return []string{"click e12", "fill e3 hello", "playwright-cli type e1 x", "press Enter", "", "scroll", "CLICK"}[r.IntN(7)]
}

func randError(r *rand.Rand) string {
	e := randErrorLine(r)
	if r.IntN(3) == 0 {
		e += "\n" + randErrorLine(r)
	}
	return e
}

func randHost(r *rand.Rand) string {
	return []string{"", "shop.example", "www.shop.example", "a.b.shop.example", "c.shop.example", "other.example",
		"m.other.example", "new.example", "x.co.uk"}[r.IntN(9)]
}

// randWrite changes the store between recalls: new lessons, uses, helps,
// edits, removals, a forgotten site, or damage.
func randWrite(t *testing.T, r *rand.Rand, s *Store, db kv.Store, round int) {
	t.Helper()
	ctx := context.Background()
	var ids []string
	err := db.View(ctx, func(rd kv.Reader) error {
		return rd.Scan(keyspace.LessonIDPrefix(), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			ids = append(ids, keyspace.LastPart(k))
			return nil
		})
	})
	if err != nil || len(ids) == 0 {
		t.Fatalf("ids: %v, %v", ids, err)
	}
	id := ids[r.IntN(len(ids))]
	switch op := r.IntN(10); op {
	case 0, 1:
		_, _, err = s.Record(ctx, randLesson(r, 1000+round), randHost(r))
	case 2:
		_, err = s.Use(ctx, id, randHost(r))
	case 3:
		_, err = s.Helped(ctx, id, randHost(r))
	case 4:
		_, err = s.Edit(ctx, id, fmt.Sprintf("Edited in round %d.", round))
	case 5:
		err = s.Remove(ctx, id)
	case 6:
		_, err = s.ForgetSite(ctx, []string{"shop.example", "other.example"}[r.IntN(2)])
	case 7:
		err = damageEntry(ctx, db, r, ids)
	default:
		_, err = s.Use(ctx, id, "")
	}
	if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, errDamaged) {
		t.Fatalf("write: %v", err)
	}
}

// damageEntry writes damage as a disk or a crash leaves it (and a fresh
// token, as if it was there when the process started): a stray entry, a
// match entry whose record does not decode, or a record that does not.
func damageEntry(ctx context.Context, db kv.Store, r *rand.Rand, ids []string) error {
	return db.Update(ctx, func(tx kv.Txn) error {
		site := []string{keyspace.Global, "shop.example", "other.example"}[r.IntN(3)]
		var err error
		switch r.IntN(3) {
		case 0:
			err = tx.Set(append(keyspace.LessonsByCommand(site, idxVerbs[r.IntN(len(idxVerbs))]), "garbage"...), []byte("a\x00b"), 0)
		case 1:
			err = tx.Set(keyspace.LessonByCommand(site, "click", r.IntN(3), "lbroken"), []byte("\x00timeout\x000\x002026-03-01\x00{bad"), 0)
		default:
			id := ids[r.IntN(len(ids))]
			b, gerr := tx.Get(keyspace.LessonID(id))
			if gerr != nil {
				return gerr
			}
			site = string(b)
			err = tx.Set(keyspace.Lesson(site, id), []byte(`{"id": tru`), 0)
		}
		if err != nil {
			return err
		}
		return touch(tx, site)
	})
}

func dropTokens(t *testing.T, db kv.Store) {
	t.Helper()
	var keys [][]byte
	err := db.View(context.Background(), func(r kv.Reader) error {
		return r.Scan(keyspace.SitesPrefix(), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			if f, _ := keyspace.SiteFamily(k); f == keyspace.FamilyLessonGen {
				keys = append(keys, slices.Clone(k))
			}
			return nil
		})
	})
	if err != nil || len(keys) == 0 {
		t.Fatalf("tokens: %d, %v", len(keys), err)
	}
	err = db.Update(context.Background(), func(tx kv.Txn) error {
		for _, k := range keys {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func compareRecalls(t *testing.T, s *Store, command, errText, host string) {
	t.Helper()
	verb, et := Verb(command), newErrorText(errText)
	if host != "" {
		host, _ = domain.Host(host)
	}
	cmds := []string{verb, ""}
	if verb == "" {
		cmds = cmds[1:]
	}
	var got, want []Lesson
	var dGot, dWant damage
	err := s.db.View(context.Background(), func(r kv.Reader) error {
		var err error
		if got, err = s.recallError(r, errorSites(host), verb, et, host, false, &dGot); err != nil {
			return err
		}
		want, err = s.scanError(r, errorSites(host), cmds, newErrorText(errText), host, &dWant)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Fatalf("recall %q %q on %q:\n got %s\nwant %s", command, errText, host, g, w)
	}
	if !reflect.DeepEqual(dGot, dWant) {
		t.Fatalf("recall %q %q on %q: damage %+v, the scan %+v", command, errText, host, dGot, dWant)
	}
	// The public recall, tried from the watched tokens first (badger
	// watches them too), answers the same.
	pub, err := s.RecallError(context.Background(), command, errText, host)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(t, pub), mustJSON(t, want); g != w {
		t.Fatalf("RecallError %q %q on %q:\n got %s\nwant %s", command, errText, host, g, w)
	}
	// Learning's duplicate check, from the pattern hits alone, finds what
	// it found in the whole recall.
	if verb != "" {
		all := *s
		all.opts.MaxRecall = 1 << 30
		var full []Lesson
		err := s.db.View(context.Background(), func(r kv.Reader) error {
			var err error
			full, err = all.scanError(r, errorSites(host), []string{verb, ""}, newErrorText(errText), host, &damage{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		wantID := ""
		for _, l := range full {
			if l.FailedCommand == verb && et.has(strings.ToLower(l.ErrorPattern)) {
				wantID = l.ID
				break
			}
		}
		gotID, err := s.covering(context.Background(), verb, errText, host)
		if err != nil || gotID != wantID {
			t.Fatalf("covering %q %q on %q = %q, %v; the scan's %q", verb, errText, host, gotID, err, wantID)
		}
	}
}

func compareDomain(t *testing.T, s *Store, host string) {
	t.Helper()
	if host == "" {
		return
	}
	h, _ := domain.Host(host)
	site := domain.Site(h)
	var got, want []Lesson
	var dGot, dWant damage
	err := s.db.View(context.Background(), func(r kv.Reader) error {
		var err error
		if got, err = s.recallDomain(r, h, site, &dGot); err != nil {
			return err
		}
		want, err = s.scanDomain(r, h, site, &dWant)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w || !reflect.DeepEqual(dGot, dWant) {
		t.Fatalf("domain recall %q:\n got %s %+v\nwant %s %+v", host, g, dGot, w, dWant)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each anchor word a pattern is filed under is held by every error text
// that holds the pattern, as errorText.has finds it: the test patterns
// (the fixed ones, and every numbered template with every number) against
// every test error, and every part of each error's plain and normalised
// text — a pattern it holds by construction, cut anywhere: inside words
// and numbers, beside placeholders — against that error.
func TestAnchorsAreInEveryMatchingError(t *testing.T) {
	texts := append(slices.Clone(idxErrors), "xelement e1 is not visiblex", "timeout 12ms exceededms", "a \"q\"see <url> b")
	patterns := slices.Clone(idxPatterns)
	for _, n := range idxNumbers {
		for _, tmpl := range idxNumberErrors {
			texts = append(texts, strings.ReplaceAll(tmpl, "%s", n))
		}
		for _, tmpl := range idxNumberPatterns {
			patterns = append(patterns, fmt.Sprintf(tmpl, n))
		}
	}
	matched, numbered := 0, 0
	for _, text := range texts {
		et := newErrorText(text)
		var words []string
		eachWord(et.lower, func(w string) { words = append(words, w) })
		check := func(p string) {
			if !et.has(p) {
				return
			}
			matched++
			for _, a := range anchors(p) {
				if class(a.word[0]) == digit {
					numbered++
				}
				ok := slices.ContainsFunc(words, func(w string) bool {
					switch a.kind {
					case anchorSuffix:
						return strings.HasSuffix(w, a.word)
					case anchorPrefix:
						return strings.HasPrefix(w, a.word)
					}
					return w == a.word
				})
				if !ok {
					t.Errorf("pattern %q matches %q but its anchor %+v is not among its words %q", p, text, a, words)
				}
			}
		}
		for _, p := range patterns {
			check(strings.ToLower(p))
		}
		et.has("<n>") // works out the normalised text
		for _, s := range []string{et.lower, et.normal} {
			for i := range len(s) {
				for j := i + 1; j <= len(s); j++ {
					check(s[i:j])
				}
			}
		}
	}
	t.Logf("%d matches, %d number anchors", matched, numbered)
	if matched < 100_000 || numbered < 10_000 {
		t.Fatalf("only %d matches, %d number anchors checked", matched, numbered)
	}
}

// A number is a word of its own, anchored where it stands, beside letters
// and placeholders too.
func TestAnchorsOfNumbers(t *testing.T) {
	for p, want := range map[string][]anchorWord{
		"problem 123":                 {{"problem", anchorSuffix}, {"123", anchorPrefix}},
		"item12 <text>":               {{"item", anchorSuffix}, {"12", anchorWhole}},
		"abc12<url>":                  {{"abc", anchorSuffix}, {"12", anchorWhole}},
		"<n>12":                       {{"12", anchorPrefix}},
		"12<n>":                       {{"12", anchorSuffix}},
		"12> x":                       {{"12", anchorSuffix}, {"x", anchorPrefix}},
		"v2 api":                      {{"v", anchorSuffix}, {"2", anchorWhole}, {"api", anchorPrefix}},
		"timeout <n>ms 5 left":        {{"timeout", anchorSuffix}, {"ms", anchorWhole}, {"5", anchorWhole}, {"left", anchorPrefix}},
		"500000":                      nil,
		"1234567890123456789012345 x": {{"x", anchorPrefix}},
	} {
		if got := anchors(p); !slices.Equal(got, want) {
			t.Errorf("anchors(%q) = %v, want %v", p, got, want)
		}
	}
}

// Patterns that share their words and differ in a number ("problem <n>",
// a fifth of the skewed store) are filed under their numbers, so an error
// holding "problem" checks only the patterns whose number it holds.
func TestNumberedPatternsFiledByNumber(t *testing.T) {
	db := badgertest.Open(t)
	s := New(db, Options{Provenance: engine.Provenance{Source: engine.SourceManual}})
	ctx := context.Background()
	var ls []Lesson
	for i := range 200 {
		ls = append(ls, Lesson{Lesson: fmt.Sprintf("Do thing %d.", i), Category: ErrorRecovery, FailedCommand: "fill",
			ErrorPattern: fmt.Sprintf("problem %d", i), Source: SourceLearned, CreatedAt: "2026-03-01"})
	}
	ls, err := s.Prepare(ls, ImportOptions{KeepTrust: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Import(ctx, ls); err != nil {
		t.Fatal(err)
	}
	err = db.View(ctx, func(r kv.Reader) error {
		g, err := r.Get(keyspace.LessonGen(keyspace.Global))
		if err != nil {
			return err
		}
		ix, err := buildIndex(r, keyspace.Global, string(g), partErrors)
		if err != nil {
			return err
		}
		b := ix.buckets[string(keyspace.LessonsByCommand(keyspace.Global, "fill"))]
		if b == nil || len(b.postings[anchorSuffix]["problem"]) != 0 || len(b.always) != 0 {
			t.Fatalf("fill bucket: %+v", b)
		}
		for i := range 200 {
			es := b.postings[anchorPrefix][strconv.Itoa(i)]
			if len(es) != 1 || es[0].pattern != fmt.Sprintf("problem %d", i) {
				t.Errorf("prefix %d: %d entries", i, len(es))
			}
		}
		hits := func(b *bucket, text string) []string {
			var out []string
			for _, e := range b.hits(newErrorText(text), nil) {
				out = append(out, e.pattern)
			}
			slices.Sort(out)
			return out
		}
		if got, want := hits(b, "fill failed with problem 150 (step 7)"), []string{"problem 1", "problem 15", "problem 150"}; !slices.Equal(got, want) {
			t.Errorf("hits = %q, want %q", got, want)
		}
		// This process's own writes (the overlay, then folded in) are
		// filed by number too: at most one under "problem".
		c := *b
		for i := 200; i < 300; i++ {
			c.add(&ientry{key: fmt.Sprintf("k%d", i), matchEntry: matchEntry{id: fmt.Sprint(i), pattern: fmt.Sprintf("problem %d", i)}})
		}
		if got, want := hits(&c, "problem 250 again"), []string{"problem 2", "problem 25", "problem 250"}; !slices.Equal(got, want) {
			t.Errorf("hits with the overlay = %q, want %q", got, want)
		}
		f := c.fold()
		if n := len(f.postings[anchorSuffix]["problem"]) + len(c.added.postings[anchorSuffix]["problem"]); n > 2 {
			t.Errorf("%d own patterns filed under \"problem\"", n)
		}
		if got, want := hits(f, "problem 250 again"), []string{"problem 2", "problem 25", "problem 250"}; !slices.Equal(got, want) {
			t.Errorf("hits after the fold = %q, want %q", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A warm recall is served from the compiled index; any lesson write in the
// site (here a use) changes the token, and the next recall sees the write.
func TestRecallIndexFollowsWrites(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.record(Lesson{Lesson: "Close the cookie banner first.", Category: ErrorRecovery, FailedCommand: "click",
		ErrorPattern: "another element would receive the click", Domain: "shop.example"}, "")
	b := e.record(Lesson{Lesson: "Scroll it into view.", Category: ErrorRecovery, FailedCommand: "click",
		ErrorPattern: "element is not visible", Domain: "shop.example"}, "")
	got, err := e.s.RecallError(ctx, "click e1", "timeout", "shop.example")
	if err != nil || len(got) < 2 || got[0].ID != a.ID || got[1].ID != b.ID {
		t.Fatalf("recall = %v, %v", got, err)
	}
	if !indexes[partErrors].Has("shop.example") {
		t.Fatal("no compiled index cached for shop.example")
	}
	if _, err := e.s.Use(ctx, b.ID, "shop.example"); err != nil {
		t.Fatal(err)
	}
	got, err = e.s.RecallError(ctx, "click e1", "timeout", "shop.example")
	if err != nil || len(got) < 2 || got[0].ID != b.ID || got[0].UseCount != 1 {
		t.Fatalf("recall after a use = %v, %v; want %s first", got, err, b.ID)
	}
	if _, err := e.s.ForgetSite(ctx, "shop.example"); err != nil {
		t.Fatal(err)
	}
	if got, err := e.s.RecallDomain(ctx, "shop.example"); err != nil || len(got) != 0 {
		t.Fatalf("domain recall after forget = %v, %v", got, err)
	}
}

// Stores over namespaces of one database share the process-wide cache of
// compiled indexes; their random tokens keep their answers apart.
func TestRecallIndexNamespacesApart(t *testing.T) {
	db := badgertest.Open(t)
	ctx := context.Background()
	var stores []*Store
	for i, ns := range []string{"ns/a/", "ns/b/"} {
		s := New(kv.Prefixed(db, []byte(ns)), Options{Provenance: engine.Provenance{Source: engine.SourceManual}})
		_, _, err := s.Record(ctx, Lesson{Lesson: fmt.Sprintf("Lesson of namespace %d.", i), Category: ErrorRecovery,
			FailedCommand: "click", ErrorPattern: "not visible", Domain: "shop.example"}, "")
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	for range 3 {
		for i, s := range stores {
			want := fmt.Sprintf("Lesson of namespace %d.", i)
			got, err := s.RecallError(ctx, "click", "element is not visible", "shop.example")
			if err != nil || len(got) != 1 || got[0].Lesson != want {
				t.Fatalf("namespace %d: error recall = %v, %v", i, got, err)
			}
			got, err = s.RecallDomain(ctx, "www.shop.example")
			if err != nil || len(got) != 1 || got[0].Lesson != want {
				t.Fatalf("namespace %d: domain recall = %v, %v", i, got, err)
			}
		}
	}
}

// readStore is benchStore for the benchmarks that only read: stores of
// 100k lessons and more are built once into the cache and read there in
// place (cachedStoreReadOnly), so a run of these benchmarks in a new
// process (make bench-check runs each many times) does not fill them again.
func readStore(b *testing.B, n int, skewed bool) *Store {
	b.Helper()
	if n >= 100_000 {
		return cachedStoreReadOnly(b, n, skewed)
	}
	return benchStore(b, n, skewed)
}

// BenchmarkRecallIndexWarm is recall on the few sites a run visits (eight
// here, all within the index cache), where BenchmarkRecallError and
// BenchmarkRecallDomain visit n/20 sites in turn, so that past the cache's
// size each recall compiles its site's index afresh. Each sub-benchmark
// recalls once on every site before the clock starts, so the figure is a
// warm recall's, not the first build's (≈ 300 ms for the skewed 1M global
// range) spread over b.N. "error" holds no generated pattern; "problem"
// holds "problem 500000", a word every generated pattern has (the skewed
// shape's global range holds n/5 of them) and a number a handful of them
// are prefixes of ("problem 5", "problem 50", ...).
func BenchmarkRecallIndexWarm(b *testing.B) {
	sizes := []int{1_000, 100_000}
	if os.Getenv("ENGINE_BENCH_1M") == "1" {
		sizes = append(sizes, bench1M)
	}
	cases := []struct{ name, text string }{
		{"error", "too many arguments: expected 2, received 3"},
		{"problem", "fill failed with problem 500000 (step 7)"},
	}
	for _, shape := range []string{"grown", "skewed"} {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/n=%d", shape, n), func(b *testing.B) {
				s := readStore(b, n, shape == "skewed")
				ctx := context.Background()
				for _, e := range cases {
					b.Run(e.name, func(b *testing.B) {
						recall := func(i int) {
							ls, err := s.RecallError(ctx, "fill e37 padel rackets", e.text, fmt.Sprintf("www.site%d.example", i%8))
							if err != nil || len(ls) == 0 {
								b.Fatalf("recall: %d lessons, %v", len(ls), err)
							}
						}
						for i := range 8 {
							recall(i)
						}
						b.ReportAllocs()
						for i := 0; b.Loop(); i++ {
							recall(i)
						}
					})
				}
				b.Run("domain", func(b *testing.B) {
					for i := range 8 {
						if _, err := s.RecallDomain(ctx, fmt.Sprintf("www.site%d.example", i)); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportAllocs()
					for i := 0; b.Loop(); i++ {
						if _, err := s.RecallDomain(ctx, fmt.Sprintf("www.site%d.example", i%8)); err != nil {
							b.Fatal(err)
						}
					}
				})
			})
		}
	}
}

// BenchmarkRecallIndexBuild compiles the skewed store's global error
// range (n/5 "problem <n>" patterns of one verb, and the seeds) from the
// store, as the first recall after any other process's write does, and
// reports the heap the compiled index holds per entry.
func BenchmarkRecallIndexBuild(b *testing.B) {
	sizes := []int{100_000}
	if os.Getenv("ENGINE_BENCH_1M") == "1" {
		sizes = append(sizes, bench1M)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("skewed/n=%d", n), func(b *testing.B) {
			s := readStore(b, n, true)
			ctx := context.Background()
			var ix *siteIndex
			build := func() {
				ix = nil
				err := s.db.View(ctx, func(r kv.Reader) error {
					g, err := r.Get(keyspace.LessonGen(keyspace.Global))
					if err != nil {
						return err
					}
					ix, err = buildIndex(r, keyspace.Global, string(g), partErrors)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			build() // the store's blocks read once before the clock starts
			b.ReportAllocs()
			for b.Loop() {
				build()
			}
			// The heap one compiled index holds, measured after the
			// loop (the store's own growth as reads touch its tables is
			// done by then).
			var before, after runtime.MemStats
			ix = nil
			runtime.GC()
			runtime.ReadMemStats(&before)
			build()
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric((float64(after.HeapAlloc)-float64(before.HeapAlloc))/float64(ix.n), "B/entry")
			b.ReportMetric(float64(ix.n), "entries")
			runtime.KeepAlive(ix)
		})
	}
}

// BenchmarkRecallIndexMemory fills the index caches with every site of the
// store (one error and one domain recall each) and reports the heap they
// hold: bytes per cached entry, and MB in all, with the entries cached
// (the budget is indexBudget entries per part).
func BenchmarkRecallIndexMemory(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := benchStore(b, n, false)
			ctx := context.Background()
			measured := false
			for b.Loop() {
				if measured {
					continue // one fill is the measure, however long b.N
				}
				measured = true
				for _, c := range indexes {
					c.Clear()
				}
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for i := range max(n/20, 1) {
					host := fmt.Sprintf("www.site%d.example", i)
					if _, err := s.RecallError(ctx, "fill e37 padel rackets", "too many arguments: expected 2, received 3", host); err != nil {
						b.Fatal(err)
					}
					if _, err := s.RecallDomain(ctx, host); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				entries := indexes[partErrors].Weight() + indexes[partHosts].Weight()
				held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
				b.ReportMetric(held/float64(entries), "B/entry")
				b.ReportMetric(held/1e6, "MB")
				b.ReportMetric(float64(entries), "entries")
			}
		})
	}
}

// BenchmarkRecallIndexMiss is the cost of a cache miss against the scans
// the index replaced: "miss" recalls on a site whose compiled index is
// stale (so it is built from the store, the global range staying cached),
// "scan" answers the same recall by scanning (the oracle, and what recall
// cost before the index).
func BenchmarkRecallIndexMiss(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := benchStore(b, n, false)
			ctx := context.Background()
			sites := max(n/20, 1)
			const cmd, errText = "fill e37 padel rackets", "too many arguments: expected 2, received 3"
			stale := func(host string) {
				for _, c := range indexes {
					c.Put(domain.Site(host), "stale", &siteIndex{})
				}
			}
			b.Run("error/miss", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					host := fmt.Sprintf("www.site%d.example", i%sites)
					stale(host)
					if _, err := s.RecallError(ctx, cmd, errText, host); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("error/scan", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					host := fmt.Sprintf("www.site%d.example", i%sites)
					err := s.db.View(ctx, func(r kv.Reader) error {
						_, err := s.scanError(r, errorSites(host), []string{Verb(cmd), ""}, newErrorText(errText), host, &damage{})
						return err
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("domain/miss", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					host := fmt.Sprintf("www.site%d.example", i%sites)
					stale(host)
					if _, err := s.RecallDomain(ctx, host); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("domain/scan", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					host := fmt.Sprintf("www.site%d.example", i%sites)
					err := s.db.View(ctx, func(r kv.Reader) error {
						_, err := s.scanDomain(r, host, domain.Site(host), &damage{})
						return err
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkUseSkewed is a use of a global lesson for the skewed store's
// common verb (a fifth of all lessons share it) while the global range's
// compiled index is cached: each use advances the cached index (the write
// applied to it in process), rotating over a thousand lessons; a recall
// after each (an error no "problem <n>" pattern matches) keeps it in use.
func BenchmarkUseSkewed(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := benchStore(b, n, true)
			ctx := context.Background()
			var ids []string
			err := s.db.View(ctx, func(r kv.Reader) error {
				return r.Scan(keyspace.LessonsByCommand(keyspace.Global, "fill"), kv.ScanOptions{KeysOnly: true, Limit: 1000}, func(k, _ []byte) error {
					ids = append(ids, keyspace.LastPart(k))
					return nil
				})
			})
			if err != nil || len(ids) == 0 {
				b.Fatalf("ids: %d, %v", len(ids), err)
			}
			if _, err := s.RecallError(ctx, "fill e1", "too many arguments: expected 2, received 3", ""); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := s.Use(ctx, ids[i%len(ids)], ""); err != nil {
					b.Fatal(err)
				}
				if _, err := s.RecallError(ctx, "fill e1", "too many arguments: expected 2, received 3", ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// On badger, which watches its own tokens, a warm recall opens no View
// either, and neither does the recall after a use (the use advances the
// cached index and the watched token together).
func TestWarmRecallOnBadger(t *testing.T) {
	ctx := context.Background()
	db := kvtest.CountViews(badgertest.Open(t))
	s := New(db, Options{Provenance: engine.Provenance{Source: engine.SourceManual}})
	if err := s.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range []string{"banner in the way", "not visible"} {
		l, _, err := s.Record(ctx, Lesson{Lesson: "Do the other thing: " + p + ".", Category: ErrorRecovery, FailedCommand: "click",
			ErrorPattern: p, Domain: "shop.example"}, "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	slices.Sort(ids)
	recallIDs := func() []string {
		t.Helper()
		ls, err := s.RecallError(ctx, "click e3", "zzz qqq", "www.shop.example")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range ls {
			out = append(out, l.ID)
		}
		return out
	}
	recallIDs()
	if _, err := s.RecallDomain(ctx, "www.shop.example"); err != nil {
		t.Fatal(err)
	}
	before := db.Views()
	if got := recallIDs(); len(got) < 2 || got[0] != ids[0] || got[1] != ids[1] {
		t.Fatalf("recall = %v, want %v first", got, ids)
	}
	if ls, err := s.RecallDomain(ctx, "www.shop.example"); err != nil || len(ls) != 2 {
		t.Fatalf("domain recall = %v, %v", ls, err)
	}
	if n := db.Views() - before; n != 0 {
		t.Errorf("warm recalls opened %d Views, want 0", n)
	}
	if _, err := s.Use(ctx, ids[1], "shop.example"); err != nil {
		t.Fatal(err)
	}
	before = db.Views()
	if got := recallIDs(); len(got) < 2 || got[0] != ids[1] || got[1] != ids[0] {
		t.Fatalf("recall after a use = %v, want [%s %s ...]", got, ids[1], ids[0])
	}
	if n := db.Views() - before; n != 0 {
		t.Errorf("the recall after a use opened %d Views, want 0", n)
	}
}

// gatedReader counts reads of a site's generation token and blocks scans
// until release is closed, so a test holds a build open.
type gatedReader struct {
	kv.Reader
	gens    *atomic.Int64
	scans   *atomic.Int64
	scanned chan struct{} // one send per scan begun
	release chan struct{}
}

func (g gatedReader) Get(key []byte) ([]byte, error) {
	v, err := g.Reader.Get(key)
	if bytes.Equal(key, keyspace.LessonGen(keyspace.Global)) {
		g.gens.Add(1)
	}
	return v, err
}

func (g gatedReader) Scan(prefix []byte, opts kv.ScanOptions, fn func(k, v []byte) error) error {
	g.scans.Add(1)
	g.scanned <- struct{}{}
	<-g.release
	return g.Reader.Scan(prefix, opts, fn)
}

// TestConcurrentMissesShareOneBuild checks that callers that miss one
// site's index at one generation at the same time share one build
// instead of each compiling the site: a fleet's first recalls of a big
// site must not stampede.
func TestConcurrentMissesShareOneBuild(t *testing.T) {
	db := badgertest.Open(t)
	s := New(db, Options{Provenance: engine.Provenance{Source: engine.SourceManual}})
	ctx := context.Background()
	if _, _, err := s.Record(ctx, Lesson{Lesson: "Wait for the spinner.", Category: ErrorRecovery, FailedCommand: "click",
		ErrorPattern: "spinner still there", Source: SourceLearned, CreatedAt: "2026-03-01"}, ""); err != nil {
		t.Fatal(err)
	}
	indexes[partErrors].Clear()
	const callers = 6
	g := gatedReader{gens: new(atomic.Int64), scans: new(atomic.Int64), scanned: make(chan struct{}, callers), release: make(chan struct{})}
	var wg sync.WaitGroup
	got := make([]*siteIndex, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := db.View(ctx, func(r kv.Reader) error {
				rd := g
				rd.Reader = r
				var err error
				got[i], err = siteIndexAt(rd, keyspace.Global, partErrors)
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	// Every caller has read the token (and so missed: the one build is
	// held at its scan) before the build may go on.
	<-g.scanned
	for g.gens.Load() < callers {
		runtime.Gosched()
	}
	close(g.release)
	wg.Wait()
	if n := g.scans.Load(); n != 1 {
		t.Fatalf("%d callers missing at once made %d builds, want 1", callers, n)
	}
	for i := range got {
		if got[i] == nil || got[i] != got[0] {
			t.Fatalf("caller %d got another index", i)
		}
	}
}
