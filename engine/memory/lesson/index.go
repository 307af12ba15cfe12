package lesson

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/internal/sitecache"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// The recall index: one site's error-recall and domain-recall index
// entries compiled into process memory, so a recall reads the site's
// generation token and the records of its winners instead of scanning
// four ranges. A compiled index is trusted only while the site's token
// (keyspace.LessonGen, rewritten by every lesson write in the site, see
// touch) is the one it was built at, read in the same snapshot.

// indexes holds recently used compiled site indexes, process-wide, one
// cache per part (partErrors, partHosts: each recall compiles only the
// range it reads): an agent visits a handful of sites at a time, and the
// global range is one of them. Stores over namespaces (kv.Prefixed) share
// them; their tokens are random, so one namespace's index is never taken
// for another's.
var indexes = [2]*sitecache.Cache[*siteIndex]{
	sitecache.NewWeighted(indexBudget, (*siteIndex).weight),
	sitecache.NewWeighted(indexBudget, (*siteIndex).weight),
}

// The parts of a site's recall index: error recall's entries, domain
// recall's.
const (
	partErrors = iota
	partHosts
)

// indexBudget bounds each index cache by the entries its sites hold (a
// site weighs its entries, at least 1), not by how many sites: a store of
// many small sites is cached whole, a huge site is not all there is.
const indexBudget = 1 << 17

// maxAnchor bounds an anchor word taken from a pattern's first or last
// word, so a recall looks up only that many prefixes and suffixes of each
// word of the error.
const maxAnchor = 24

// ientry is one error-recall index entry, compact: what scoring and
// ranking need (its match entry), and the entry's key to read the lesson
// from.
type ientry struct {
	key string
	matchEntry
	// lesson is the lesson, decoded the first time a recall returns it:
	// an entry lives only while its value in the store is unchanged (a
	// write of the lesson rebuilds the index or replaces the entry).
	lesson atomic.Pointer[Lesson]
}

// anchor kinds: where in its pattern an anchor word sits, and so which
// words of an error text can hold it.
const (
	anchorWhole  = iota // inside: the error has it as a whole word
	anchorSuffix        // first word: the error has a word ending with it
	anchorPrefix        // last word: the error has a word starting with it
)

// bucket is the compiled range of one command's entries
// (keyspace.LessonsByCommand) in one site.
//
// This process's own writes (ownWrite.advance) are kept as an overlay
// instead of copying the compiled lists, which in a skewed store hold a
// fifth of all lessons: gone marks compiled entries since replaced or
// removed, added holds the entries written since (a small bucket,
// changed copy-on-write, whose patterns are all checked rather than filed
// by anchor word), and recall reads both. Once the overlay holds
// more than overlayMax entries, the next write folds it into a fresh
// compile, so a write costs O(√n) amortised and a recall skips at most
// that many gone entries.
type bucket struct {
	byDomain map[string][]*ientry    // domain ("" unbound) → entries, ranked
	postings [3]map[string][]*ientry // anchor kind → anchor word → entries
	always   []*ientry               // patterns without an anchor word
	bad      []string                // malformed entries' keys, in key order

	size   int                  // compiled entries
	gone   map[*ientry]struct{} // compiled entries replaced or removed since
	added  *bucket              // entries written since, compiled; nil for none
	nAdded int                  // entries in added
}

// hostRef is one domain-recall index entry, and its lesson once decoded
// (as ientry.lesson).
type hostRef struct {
	key, id string
	lesson  atomic.Pointer[Lesson]
}

// hostList is one host range's domain-recall entries in key order (the
// order a recall takes them in): base, compiled and shared by every copy
// of the index, and this process's own writes since as an overlay, as a
// bucket keeps them: gone holds the base keys since replaced or removed,
// added the entries written since, in key order. A write copies only the
// overlay, and once the overlay outgrows overlayMax(len(base)) it is
// folded into a fresh base, so a write costs O(√n) amortised, not the
// O(n) of copying the list. Never changed once shared: with and without
// return a new list. A nil *hostList is empty.
type hostList struct {
	base  []*hostRef
	gone  map[string]struct{}
	added []*hostRef
}

func keyCmp(h *hostRef, k string) int { return strings.Compare(h.key, k) }

// each calls fn with the entries in key order until fn returns false.
func (h *hostList) each(fn func(*hostRef) bool) {
	if h == nil {
		return
	}
	i, j := 0, 0
	for i < len(h.base) || j < len(h.added) {
		var ref *hostRef
		if j == len(h.added) || i < len(h.base) && h.base[i].key < h.added[j].key {
			ref = h.base[i]
			i++
			if _, gone := h.gone[ref.key]; gone {
				continue
			}
		} else {
			ref = h.added[j]
			j++
		}
		if !fn(ref) {
			return
		}
	}
}

// overlay is a copy of h whose overlay the caller may change.
func (h *hostList) overlay() *hostList {
	if h == nil {
		return &hostList{}
	}
	return &hostList{base: h.base, gone: maps.Clone(h.gone), added: slices.Clone(h.added)}
}

// drop takes key out of h (a copy the caller owns).
func (h *hostList) drop(key string) {
	if i, ok := slices.BinarySearchFunc(h.added, key, keyCmp); ok {
		h.added = slices.Delete(h.added, i, i+1)
		return // a base entry of the same key, if any, is gone already
	}
	if _, ok := slices.BinarySearchFunc(h.base, key, keyCmp); ok {
		if h.gone == nil {
			h.gone = map[string]struct{}{}
		}
		h.gone[key] = struct{}{}
	}
}

// without is h with the entry of key removed.
func (h *hostList) without(key string) *hostList {
	c := h.overlay()
	c.drop(key)
	return c.folded()
}

// with is h with ref in place of any entry of its key.
func (h *hostList) with(ref *hostRef) *hostList {
	c := h.overlay()
	c.drop(ref.key)
	i, _ := slices.BinarySearchFunc(c.added, ref.key, keyCmp)
	c.added = slices.Insert(c.added, i, ref)
	return c.folded()
}

// folded is h (a copy the caller owns), its overlay folded into a fresh
// base when it has outgrown overlayMax.
func (h *hostList) folded() *hostList {
	if len(h.gone)+len(h.added) <= overlayMax(len(h.base)) {
		return h
	}
	since := time.Now()
	base := make([]*hostRef, 0, len(h.base)-len(h.gone)+len(h.added))
	h.each(func(ref *hostRef) bool { base = append(base, ref); return true })
	countFold(since)
	return &hostList{base: base}
}

// copyOf is a copy of the cached lesson l that its caller may change.
func copyOf(l *Lesson) Lesson {
	c := *l
	c.TriggeredDomains = slices.Clone(l.TriggeredDomains)
	return c
}

// siteIndex is one site's compiled recall index at generation gen.
type siteIndex struct {
	n       int // entries, for the cache's budget
	gen     string
	buckets map[string]*bucket   // keyspace.LessonsByCommand range → its entries
	hosts   map[string]*hostList // keyspace.LessonsByHost range → its entries
}

// weight is ix's weight in the cache's budget: its entries.
func (ix *siteIndex) weight() int { return ix.n + 1 }

// siteIndexAt returns site's compiled index as of r's snapshot, from the
// cache when its token is the one the cached index was built at, else
// built from the site's index ranges (and cached). It returns nil when the
// site has no token (never written since tokens, or forgotten): the caller
// then scans as before.
func siteIndexAt(r kv.Reader, site string, part int) (*siteIndex, error) {
	if w, ok := r.(watchedRead); ok {
		if ix, ok := sitecache.Cached(indexes[part], w.db, site, keyspace.LessonGen(site)); ok {
			return ix, nil
		}
		return nil, errNeedRead
	}
	g, err := r.Get(keyspace.LessonGen(site))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	gen := string(g)
	if ix, ok := indexes[part].Get(site, gen); ok {
		return ix, nil
	}
	// Concurrent misses of one site at one generation share one build:
	// the generation names the content, so every caller's snapshot holds
	// the same entries, and a fleet's first recalls of a big site after a
	// start or another process's write do not each compile it.
	v, err, _ := builds.Do(strconv.Itoa(part)+"\x00"+site+"\x00"+gen, func() (any, error) {
		if ix, ok := indexes[part].Get(site, gen); ok {
			return ix, nil // built while this caller was on its way
		}
		since := time.Now()
		ix, err := buildIndex(r, site, gen, part)
		countBuild(since)
		if err != nil {
			return nil, err
		}
		indexes[part].Put(site, gen, ix)
		return ix, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*siteIndex), nil
}

// builds runs one build of a site's index part at a generation at a time.
var builds singleflight.Group

// buildIndex reads site's error-recall or domain-recall range once. A
// miss costs this build, so it allocates little per entry: an entry's
// strings share one allocation, entries come in slabs, the range an entry
// belongs to is compared rather than made a string for each, and a small
// bucket's patterns are checked one by one rather than filed by word.
func buildIndex(r kv.Reader, site, gen string, part int) (*siteIndex, error) {
	ix := &siteIndex{gen: gen, buckets: map[string]*bucket{}, hosts: map[string]*hostList{}}
	if part == partHosts {
		hostRange := keyspace.LessonHostIndex(site)
		var rng []byte
		var list *hostList
		var slab []hostRef
		err := r.Scan(hostRange, kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			if rng == nil || !bytes.HasPrefix(k, rng) {
				n, ok := rangeEnd(k, len(hostRange))
				if !ok {
					return nil
				}
				rngS := string(k[:n]) // k is only valid during the call
				rng, list = []byte(rngS), ix.hosts[rngS]
				if list == nil {
					list = &hostList{}
					ix.hosts[rngS] = list
				}
			}
			slab = grow(slab)
			key := string(k)
			slab = append(slab, hostRef{key: key, id: idOf(key, k)})
			list.base = append(list.base, &slab[len(slab)-1])
			ix.n++
			return nil
		})
		return ix, err
	}
	cmdRange := keyspace.LessonCmdIndex(site)
	var rng []byte
	var b *bucket
	var slab []ientry
	err := r.Scan(cmdRange, kv.ScanOptions{}, func(k, v []byte) error {
		if rng == nil || !bytes.HasPrefix(k, rng) {
			n, ok := rangeEnd(k, len(cmdRange))
			if !ok {
				return nil // in no command's range: no recall reads it
			}
			rng = []byte(string(k[:n]))
			if b = ix.buckets[string(rng)]; b == nil {
				b = &bucket{byDomain: map[string][]*ientry{}}
				ix.buckets[string(rng)] = b
			}
		}
		ix.n++
		use, ok := useOf(k)
		dom, pat, helped, shown, last, ok2 := splitMatch(v)
		if !ok || !ok2 {
			b.bad = append(b.bad, string(k))
			return nil
		}
		// One allocation for the entry's strings: key, pattern, last
		// used, domain.
		var sb strings.Builder
		sb.Grow(len(k) + len(pat) + len(last) + len(dom))
		sb.Write(k)
		sb.Write(pat)
		sb.Write(last)
		sb.Write(dom)
		all := sb.String()
		key, rest := all[:len(k)], all[len(k):]
		slab = grow(slab)
		slab = append(slab, ientry{key: key, matchEntry: matchEntry{id: idOf(key, k), useCount: use, helped: helped, shown: shown,
			pattern: rest[:len(pat)], lastUsed: rest[len(pat) : len(pat)+len(last)], domain: rest[len(pat)+len(last):]}})
		e := &slab[len(slab)-1]
		b.byDomain[e.domain] = append(b.byDomain[e.domain], e)
		b.size++
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Each pattern of a bucket past smallBucket entries is filed under its
	// rarest anchor word (fewest patterns of the site have it), the longer
	// at equal counts.
	var df map[string]int
	var buf []anchorWord
	type pick struct {
		e *ientry
		a anchorWord
	}
	var picks []pick
	for _, b := range ix.buckets {
		for _, es := range b.byDomain {
			slices.SortFunc(es, rankCmp)
			if b.size <= smallBucket {
				for _, e := range es {
					if e.pattern != "" {
						b.always = append(b.always, e)
					}
				}
				continue
			}
			if df == nil {
				df = make(map[string]int, ix.n) // numbered patterns have a word each
			}
			for _, e := range es {
				buf = appendAnchors(buf[:0], e.pattern)
				for _, a := range buf {
					df[a.word]++
				}
			}
		}
	}
	for _, b := range ix.buckets {
		if b.size <= smallBucket {
			continue
		}
		// Each pattern filed under a word of its own (a number) is a key
		// of its own: the maps are made that big at once, growing them
		// cost a fifth of a big build.
		var keys [3]int
		picks = slices.Grow(picks[:0], b.size)
		for _, es := range b.byDomain {
			for _, e := range es {
				buf = appendAnchors(buf[:0], e.pattern)
				switch {
				case e.pattern == "": // never matches a pattern
				case len(buf) == 0:
					b.always = append(b.always, e)
				default:
					a := bestAnchor(b, buf, df)
					if df[a.word] == 1 {
						keys[a.kind]++
					}
					picks = append(picks, pick{e, a})
				}
			}
		}
		for kind, n := range keys {
			if n > 0 {
				b.postings[kind] = make(map[string][]*ientry, n)
			}
		}
		for _, p := range picks {
			m := b.postings[p.a.kind]
			if m == nil {
				m = map[string][]*ientry{}
				b.postings[p.a.kind] = m
			}
			m[p.a.word] = append(m[p.a.word], p.e)
		}
	}
	return ix, nil
}

// smallBucket is the size up to which a bucket's patterns are all checked
// (bucket.always) rather than filed by anchor word: checking a few
// patterns costs less than building the postings for them. A variable
// for the tests, which file every bucket.
var smallBucket = 16

// grow returns slab, or a fresh one when it is full: entries are
// pointed to, so a slab is never reallocated; fresh slabs double up to
// 256 entries, so a small site does not hold a big one.
func grow[T any](slab []T) []T {
	if len(slab) < cap(slab) {
		return slab
	}
	return make([]T, 0, min(max(8, 2*cap(slab)), 256))
}

// idOf is the id at the end of key (as keyspace.LastPart reads it from
// k), sharing key's memory when it needs no unescaping.
func idOf(key string, k []byte) string {
	i := strings.LastIndexByte(key, '/')
	if strings.IndexByte(key[i+1:], '%') < 0 {
		return key[i+1:]
	}
	return keyspace.LastPart(k)
}

// useOf reads the use count from a key's "<use>/<id>" tail (as
// useFromKey), without allocating.
func useOf(k []byte) (int, bool) {
	end := bytes.LastIndexByte(k, '/')
	if end < 16 {
		return 0, false
	}
	var u uint64
	for _, c := range k[end-16 : end] {
		switch {
		case '0' <= c && c <= '9':
			u = u<<4 | uint64(c-'0')
		case 'a' <= c && c <= 'f':
			u = u<<4 | uint64(c-'a'+10)
		case 'A' <= c && c <= 'F':
			u = u<<4 | uint64(c-'A'+10)
		default:
			return 0, false
		}
	}
	return int(^u), true
}

// splitMatch splits an error-index entry's value into its domain, pattern,
// helped and shown counts ("helped,shown"; an entry written before the
// counts has helped alone) and last_used, without copying; the lesson's
// JSON after them is not read.
func splitMatch(v []byte) (dom, pat []byte, helped, shown int, last []byte, ok bool) {
	var parts [4][]byte
	for i := range parts {
		j := bytes.IndexByte(v, 0)
		if j < 0 {
			return nil, nil, 0, 0, nil, false
		}
		parts[i], v = v[:j], v[j+1:]
	}
	h, sh, hasShown := bytes.Cut(parts[2], []byte{','})
	if helped, ok = atoi(h); !ok {
		return nil, nil, 0, 0, nil, false
	}
	if hasShown {
		if shown, ok = atoi(sh); !ok {
			return nil, nil, 0, 0, nil, false
		}
	}
	return parts[0], parts[1], helped, shown, parts[3], true
}

// atoi parses a decimal count without allocating (strconv.Atoi on a
// string would copy the bytes), falling back to strconv past 18 digits.
func atoi(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if len(b) > 18 {
		n, err := strconv.Atoi(string(b))
		return n, err == nil
	}
	neg := b[0] == '-'
	if neg || b[0] == '+' {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// rangeEnd returns the length of the range (a keyspace.LessonsByCommand
// or LessonsByHost prefix) key k belongs to: its first n bytes, the next
// part and its slash.
func rangeEnd(k []byte, n int) (int, bool) {
	i := bytes.IndexByte(k[n:], '/')
	if i < 0 {
		return 0, false
	}
	return n + i + 1, true
}

// bestAnchor is the anchor of as (one at least) to file a pattern under:
// the rarest by df (how many of the site's patterns have it; a build
// counts them), or without df the one whose list in b is shortest; the
// longer at a tie.
func bestAnchor(b *bucket, as []anchorWord, df map[string]int) anchorWord {
	count := func(a anchorWord) int {
		if df == nil {
			return len(b.postings[a.kind][a.word])
		}
		return df[a.word]
	}
	best, n := as[0], count(as[0])
	for _, a := range as[1:] {
		an := count(a)
		if c := cmp.Or(cmp.Compare(an, n), cmp.Compare(len(best.word), len(a.word)),
			cmp.Compare(a.kind, best.kind)); c < 0 {
			best, n = a, an
		}
	}
	return best
}

// unfile removes e from b's postings (or b.always), copying the list it was in.
func unfile(b *bucket, e *ientry) {
	if i := slices.Index(b.always, e); i >= 0 {
		b.always = slices.Delete(slices.Clone(b.always), i, i+1)
		return
	}
	for kind, m := range b.postings {
		for w, es := range m {
			if i := slices.Index(es, e); i >= 0 {
				m2 := cloneMap(m)
				if len(es) == 1 {
					delete(m2, w)
				} else {
					m2[w] = slices.Delete(slices.Clone(es), i, i+1)
				}
				b.postings[kind] = m2
				return
			}
		}
	}
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// anchorWord is a word of a pattern that the error text must hold for
// errorText.has to find the pattern, and how it must hold it.
type anchorWord struct {
	word string
	kind int
}

// anchors lists the words of a lower-cased pattern that any error text
// holding it (errorText.has) must hold, as whole words, word endings or
// word beginnings of its plain lower-cased text. A word is a run of ASCII
// letters a-z, or a run of digits 0-9 (a class of its own: "item12" is the
// words "item" and "12", so the number of "problem 123" anchors it where
// "problem" is in every generated pattern). A run bounded inside the
// pattern by bytes of another class is a whole word of any text that
// contains the pattern; the first run is the ending of a word of the text,
// the last run a beginning. Placeholders need care: a pattern with one is
// also looked for in the error's normalised text, where a placeholder
// replaced a value.
//   - Letters next to '<' (a placeholder's name, or text a URL was glued to:
//     "seehttps://" becomes "see<url>") are not anchors; text after a
//     placeholder was after a quote or whitespace in the plain text (a URL
//     runs to whitespace, a ref or number ends at a word boundary), so it
//     stays a word there.
//   - Digits are anchors wherever they are: every digit run of the
//     normalised text is a digit run of the plain text, whole. Normalising
//     only removes digits (into <text>, <url>, <ref>, <n>) and collapses
//     whitespace, and what it replaces never starts or ends next to a digit
//     it keeps: quoted text starts and ends with a quote, a URL starts with
//     "h" and runs to whitespace, a ref starts with a letter and a number
//     with a digit at a word boundary (none after a digit), and both end at
//     a word boundary (none before a digit). Placeholder names hold no
//     digits, so a '<' or '>' beside a digit in the pattern changes nothing.
func anchors(p string) []anchorWord { return appendAnchors(nil, p) }

// appendAnchors appends p's anchors (anchors) to out, so a caller with a
// buffer of its own allocates nothing for them.
func appendAnchors(out []anchorWord, p string) []anchorWord {
	for i := 0; i < len(p); {
		c := class(p[i])
		if c == none {
			i++
			continue
		}
		j := i
		for j < len(p) && class(p[j]) == c {
			j++
		}
		w := p[i:j]
		switch {
		case i == 0 && j == len(p):
			// The whole pattern is one word: any part of a word.
		case c == letter && (i > 0 && p[i-1] == '<' || j < len(p) && p[j] == '<'):
		case i == 0:
			if (c == digit || p[j] != '>') && len(w) <= maxAnchor {
				out = append(out, anchorWord{w, anchorSuffix})
			}
		case j == len(p):
			if len(w) <= maxAnchor {
				out = append(out, anchorWord{w, anchorPrefix})
			}
		default:
			out = append(out, anchorWord{w, anchorWhole})
		}
		i = j
	}
	return out
}

// The classes of bytes that words are runs of.
const (
	none = iota
	letter
	digit
)

// class is c's class: a-z, 0-9, or none.
func class(c byte) int {
	switch {
	case 'a' <= c && c <= 'z':
		return letter
	case '0' <= c && c <= '9':
		return digit
	}
	return none
}

// eachWord calls fn with each word (a run of a-z or of 0-9) of s.
func eachWord(s string, fn func(w string)) {
	for i := 0; i < len(s); {
		c := class(s[i])
		if c == none {
			i++
			continue
		}
		j := i
		for j < len(s) && class(s[j]) == c {
			j++
		}
		fn(s[i:j])
		i = j
	}
}

// hits appends to out the entries of b whose pattern et holds, by their
// anchor words: only entries whose anchor word the error has are checked.
func (b *bucket) hits(et *errorText, out []*ientry) []*ientry {
	check := func(es []*ientry) {
		for _, e := range es {
			if b.gone != nil {
				if _, g := b.gone[e]; g {
					continue
				}
			}
			if et.has(e.pattern) && !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	if b.added != nil {
		out = b.added.hits(et, out)
	}
	check(b.always)
	whole, suffix, prefix := b.postings[anchorWhole], b.postings[anchorSuffix], b.postings[anchorPrefix]
	if whole == nil && suffix == nil && prefix == nil {
		return out
	}
	eachWord(et.lower, func(w string) {
		if whole != nil {
			check(whole[w])
		}
		if suffix != nil {
			for i := max(0, len(w)-maxAnchor); i < len(w); i++ {
				check(suffix[w[i:]])
			}
		}
		if prefix != nil {
			for i := 1; i <= min(len(w), maxAnchor); i++ {
				check(prefix[w[:i]])
			}
		}
	})
	return out
}

// walk is a merge of ranked entry lists, each of one score, best first.
type walk struct {
	lists  [][]*ientry
	scores []int
	skip   []map[*ientry]struct{} // per list: entries to pass over (bucket.gone)
}

func (w *walk) add(es []*ientry, score int, skip map[*ientry]struct{}) {
	if len(es) > 0 {
		w.lists, w.scores, w.skip = append(w.lists, es), append(w.scores, score), append(w.skip, skip)
	}
}

// addDomain adds b's entries bound to d (compiled and added since).
func (w *walk) addDomain(b *bucket, d string, score int) {
	w.add(b.byDomain[d], score, b.gone)
	if b.added != nil {
		w.add(b.added.byDomain[d], score, nil)
	}
}

// next returns the best head of the lists, and its score, removing it.
func (w *walk) next() (*ientry, int) {
	best := -1
	for i, es := range w.lists {
		if skip := w.skip[i]; skip != nil {
			for len(es) > 0 {
				if _, g := skip[es[0]]; !g {
					break
				}
				es = es[1:]
			}
			w.lists[i] = es
		}
		if len(es) == 0 {
			continue
		}
		if best < 0 || w.scores[i] > w.scores[best] ||
			(w.scores[i] == w.scores[best] && rankCmp(es[0], w.lists[best][0]) < 0) {
			best = i
		}
	}
	if best < 0 {
		return nil, 0
	}
	e := w.lists[best][0]
	w.lists[best] = w.lists[best][1:]
	return e, w.scores[best]
}

// errNeedRead ends a recall tried from watched tokens alone (watchedRead)
// at its first store read: the caller then recalls in a View.
var errNeedRead = errors.New("lesson: recall needs a store read")

// watchedRead is the reader of a recall tried without a snapshot, on a
// store that watches the generation tokens (kv.Watcher: etcd): the sites'
// compiled indexes come from the cache when the watched tokens are theirs,
// and any other read fails with errNeedRead. A warm recall whose lessons
// are decoded thus asks the store nothing.
type watchedRead struct{ db kv.Store }

func (watchedRead) Get([]byte) ([]byte, error) { return nil, errNeedRead }

func (watchedRead) Scan([]byte, kv.ScanOptions, func(k, v []byte) error) error { return errNeedRead }

// recall runs fn from watched tokens when db watches them, else (or when
// fn needs a read) in a View; dmg is reset for each try.
func recall(ctx context.Context, db kv.Store, dmg *damage, fn func(r kv.Reader) error) error {
	if _, ok := db.(kv.Watcher); ok {
		*dmg = damage{}
		if err := fn(watchedRead{db}); !errors.Is(err, errNeedRead) {
			return err
		}
	}
	return db.View(ctx, func(r kv.Reader) error {
		*dmg = damage{}
		return fn(r)
	})
}

// noIndex is the compiled index of a site that has no lesson entries.
var noIndex = &siteIndex{}

// indexOf is siteIndexAt, with a site that has no token and no lesson
// entries at all compiled as empty (the common case of a site never
// learned from), and nil only for a site with entries and no token.
func indexOf(r kv.Reader, site string, part int) (*siteIndex, error) {
	ix, err := siteIndexAt(r, site, part)
	if ix != nil || err != nil {
		return ix, err
	}
	empty := true
	prefix := append(bytes.TrimSuffix(keyspace.Lessons(site), []byte("/")), '-') // site/<site>/lesson-
	err = r.Scan(prefix, kv.ScanOptions{KeysOnly: true, Limit: 1}, func(_, _ []byte) error {
		empty = false
		return nil
	})
	if err != nil || !empty {
		return nil, err
	}
	return noIndex, nil
}

// recallError is RecallError in r: from the compiled indexes of sites, or
// by scanning when a site has none. The contenders are the entries whose
// pattern the error holds (found by anchor word), then the verb's entries
// in rank order, walked only until MaxRecall lessons are read: every entry
// the walk has not reached scores no more than the one it stopped at and
// ranks after it, so none could be among the first MaxRecall.
//
// With hitsOnly, only the pattern hits are returned (learning's duplicate
// check, covering): the verb's list is not walked.
func (s *Store) recallError(r kv.Reader, sites []string, verb string, et *errorText, host string, hitsOnly bool, dmg *damage) ([]Lesson, error) {
	cmds := []string{verb, ""}
	if verb == "" {
		cmds = cmds[1:]
	}
	ixs := make([]*siteIndex, len(sites))
	for i, site := range sites {
		ix, err := indexOf(r, site, partErrors)
		if err != nil {
			return nil, err
		}
		if ix == nil {
			return s.scanError(r, sites, cmds, et, host, dmg)
		}
		ixs[i] = ix
	}
	type hit struct {
		e     *ientry
		score int
	}
	var hits []hit
	var found []*ientry
	for i, site := range sites {
		for _, cmd := range cmds {
			b := ixs[i].buckets[string(keyspace.LessonsByCommand(site, cmd))]
			if b == nil {
				continue
			}
			for _, k := range b.bad {
				if err := dmg.skip([]byte(k), errBadEntry); err != nil {
					return nil, err
				}
			}
			found = b.hits(et, found[:0])
			for _, e := range found {
				if sc := errorScore(&e.matchEntry, cmd != "", et, host); sc > 0 {
					hits = append(hits, hit{e, sc})
				}
			}
		}
	}
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Or(cmp.Compare(b.score, a.score), rankCmp(a.e, b.e)) })
	var w walk
	if verb != "" && !hitsOnly {
		var doms []string
		if host != "" {
			doms = domainsOf(host, domain.Site(host))
		}
		for i, site := range sites {
			b := ixs[i].buckets[string(keyspace.LessonsByCommand(site, verb))]
			if b == nil {
				continue
			}
			// The verb's entries whose pattern the error does not hold
			// (those that do are hits, taken first): the command's weight,
			// and the site's for those bound to the host.
			w.addDomain(b, "", weightCommand)
			for _, d := range doms {
				if domain.Within(host, d) {
					w.addDomain(b, d, weightCommand+weightSite)
				}
			}
		}
	}
	out := make([]Lesson, 0, min(s.opts.MaxRecall, len(hits)+8))
	take := func(e *ientry) error {
		if l := e.lesson.Load(); l != nil {
			out = append(out, copyOf(l))
			return nil
		}
		site, err := keyspace.SiteOf([]byte(e.key))
		if err != nil {
			return dmg.skip([]byte(e.key), errBadEntry)
		}
		l, err := readRecord(r, site, e.id)
		if err != nil {
			return dmg.skip(keyspace.Lesson(site, e.id), err)
		}
		e.lesson.Store(l)
		out = append(out, copyOf(l))
		return nil
	}
	for _, h := range hits {
		if len(out) == s.opts.MaxRecall {
			return out, nil
		}
		if err := take(h.e); err != nil {
			return nil, err
		}
	}
	for len(out) < s.opts.MaxRecall {
		e, _ := w.next()
		if e == nil {
			break
		}
		if slices.ContainsFunc(hits, func(h hit) bool { return h.e == e }) {
			continue // a pattern hit, taken above
		}
		if err := take(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// recallDomain is RecallDomain in r: from the site's compiled index, or by
// scanning when it has none.
func (s *Store) recallDomain(r kv.Reader, h, site string, dmg *damage) ([]Lesson, error) {
	ix, err := indexOf(r, site, partHosts)
	if err != nil {
		return nil, err
	}
	if ix == nil {
		return s.scanDomain(r, h, site, dmg)
	}
	var out, late []Lesson // late: unhelpful ones (rankedAppend)
	for _, d := range domainsOf(h, site) {
		var err error
		full := false
		ix.hosts[string(keyspace.LessonsByHost(site, d))].each(func(ref *hostRef) bool {
			if len(out) == s.opts.MaxRecall {
				full = true
				return false
			}
			if l := ref.lesson.Load(); l != nil {
				out, late = rankedAppend(out, late, copyOf(l))
				return true
			}
			l, lerr := loadAt(r, site, ref.id)
			if lerr != nil {
				err = dmg.skip([]byte(ref.key), lerr)
				return err == nil
			}
			ref.lesson.Store(l)
			out, late = rankedAppend(out, late, copyOf(l))
			return true
		})
		if err != nil {
			return nil, err
		}
		if full {
			return out, nil
		}
	}
	return withLate(out, late, s.opts.MaxRecall), nil
}

// gens reads the lesson generation tokens of sites in r ("" for none).
func gens(r kv.Reader, sites ...string) ([]string, error) {
	out := make([]string, len(sites))
	for i, site := range sites {
		g, err := r.Get(keyspace.LessonGen(site))
		if err != nil && !errors.Is(err, kv.ErrNotFound) {
			return nil, err
		}
		out[i] = string(g)
	}
	return out, nil
}

// ownWrite is one lesson write this process made, for advance: the
// lesson before (nil for a new one) and after, and the tokens of the
// sites it touched before and after the transaction.
type ownWrite struct {
	old, new         *Lesson
	sites            []string
	oldGens, newGens []string
	// written is new as a recall decodes it from the record the write
	// stored, decoded once for both parts of the index (nil if it does
	// not decode: the recall reads it then).
	written func() *Lesson
}

// begin reads, in tx before the write, the tokens of the sites a write of
// old → n touches.
func begin(tx kv.Txn, old, n *Lesson) (*ownWrite, error) {
	w := &ownWrite{old: old, new: n, sites: []string{siteOf(n.Domain)}}
	if old != nil && siteOf(old.Domain) != w.sites[0] {
		w.sites = append(w.sites, siteOf(old.Domain))
	}
	var err error
	w.oldGens, err = gens(tx, w.sites...)
	return w, err
}

// end reads, in tx after the write, the tokens it wrote.
func (w *ownWrite) end(tx kv.Txn) error {
	var err error
	w.newGens, err = gens(tx, w.sites...)
	return err
}

// advance applies a committed write to the cached indexes of its sites,
// so a run's own uses and new lessons do not force a rebuild of a big
// site: each cached index still at the token the write read is replaced
// by a copy with the lesson's entries changed, at the token it wrote.
// An index at another token keeps the write until it reaches the token
// the write read (sitecache.Cache.Advance).
func (w *ownWrite) advance() { w.apply((*sitecache.Cache[*siteIndex]).Advance) }

// prepare announces the write before its commit, so a recall whose
// snapshot already holds it applies it rather than rebuilding the site
// (sitecache.Cache.Prepare).
func (w *ownWrite) prepare() { w.apply((*sitecache.Cache[*siteIndex]).Prepare) }

func (w *ownWrite) apply(to func(c *sitecache.Cache[*siteIndex], key, oldGen, newGen string, fn func(*siteIndex) *siteIndex)) {
	if w == nil || w.newGens == nil {
		return
	}
	for i, site := range w.sites {
		var old, n *Lesson
		if w.old != nil && siteOf(w.old.Domain) == site {
			old = w.old
		}
		if siteOf(w.new.Domain) == site {
			n = w.new
		}
		for part, c := range indexes {
			to(c, site, w.oldGens[i], w.newGens[i], func(ix *siteIndex) *siteIndex {
				return ix.with(site, part, old, n, w.written)
			})
		}
	}
}

// with returns a copy of ix with old's entries (if any) replaced by n's
// (if any), whose entries hold stored() as their decoded lesson; ix itself
// is shared and never changed.
func (ix *siteIndex) with(site string, part int, old, n *Lesson, stored func() *Lesson) *siteIndex {
	out := &siteIndex{n: ix.n, gen: ix.gen, buckets: ix.buckets, hosts: ix.hosts}
	if old != nil {
		out.n--
	}
	if n != nil {
		out.n++
	}
	if part == partHosts {
		out.hosts = cloneMap(ix.hosts)
		if old != nil && old.Domain != "" {
			key := string(keyspace.LessonByHost(site, old.Domain, old.UseCount, old.ID))
			rng := string(keyspace.LessonsByHost(site, old.Domain))
			out.hosts[rng] = out.hosts[rng].without(key)
		}
		if n != nil && n.Domain != "" {
			key := string(keyspace.LessonByHost(site, n.Domain, n.UseCount, n.ID))
			rng := string(keyspace.LessonsByHost(site, n.Domain))
			ref := &hostRef{key: key, id: n.ID}
			ref.lesson.Store(stored())
			out.hosts[rng] = out.hosts[rng].with(ref)
		}
		return out
	}
	out.buckets = cloneMap(ix.buckets)
	bucketOf := func(rng string) *bucket {
		b := out.buckets[rng]
		if b == nil {
			b = &bucket{byDomain: map[string][]*ientry{}}
		} else {
			c := *b
			b = &c
		}
		out.buckets[rng] = b
		return b
	}
	var changed []*bucket
	if old != nil {
		e := entryFor(site, old)
		b := bucketOf(string(keyspace.LessonsByCommand(site, old.FailedCommand)))
		b.remove(e)
		changed = append(changed, b)
	}
	if n != nil {
		e := entryFor(site, n)
		e.lesson.Store(stored())
		b := bucketOf(string(keyspace.LessonsByCommand(site, n.FailedCommand)))
		b.add(e)
		changed = append(changed, b)
	}
	for _, b := range changed {
		if len(b.gone)+b.nAdded > overlayMax(b.size) {
			since := time.Now()
			*b = *b.fold()
			countFold(since)
		}
	}
	return out
}

// written is the lesson id as a recall would decode it from the record b
// the write stored (exactly what a read gives), so the recall after a use
// reads nothing from the store; nil if it does not decode, and the recall
// reads it then.
func written(b []byte, id string) *Lesson {
	l, err := decode(b, id)
	if err != nil {
		return nil
	}
	return l
}

// entryFor is the error-recall index entry of l in site, as buildIndex
// compiles it from l's stored entry.
func entryFor(site string, l *Lesson) *ientry {
	return &ientry{key: string(keyspace.LessonByCommand(site, l.FailedCommand, l.UseCount, l.ID)), matchEntry: matchEntry{id: l.ID,
		useCount: l.UseCount, helped: l.Helped, shown: l.Shown, lastUsed: l.LastUsed, domain: l.Domain, pattern: strings.ToLower(l.ErrorPattern)}}
}

// overlayMax is how many overlay entries a bucket of size compiled
// entries holds before a write folds them in: √size, at least overlayMin,
// which balances a write's copy of the overlay against the fold's O(size).
func overlayMax(size int) int {
	return max(overlayMin, int(math.Sqrt(float64(size))))
}

// overlayMin is overlayMax's floor (a variable for the tests).
var overlayMin = 64

// remove takes the entry like e (same key) out of b, which is a copy the
// caller owns: from the overlay's added entries, else by marking the
// compiled one gone. The compiled lists are found by rank (binary
// search), never copied.
func (b *bucket) remove(e *ientry) {
	if b.added != nil {
		if x := b.added.find(e); x != nil {
			b.added = b.added.cowWithout(x)
			b.nAdded--
			return
		}
	}
	x := b.find(e)
	if x == nil {
		return
	}
	if _, g := b.gone[x]; g {
		return
	}
	gone := make(map[*ientry]struct{}, len(b.gone)+1)
	for k := range b.gone {
		gone[k] = struct{}{}
	}
	gone[x] = struct{}{}
	b.gone = gone
}

// add files e in b's overlay; b is a copy the caller owns.
func (b *bucket) add(e *ientry) {
	if b.added == nil {
		b.added = &bucket{byDomain: map[string][]*ientry{}}
	}
	b.added = b.added.cowWith(e)
	b.nAdded++
}

// find returns b's compiled entry with e's key (not looking in the
// overlay), by rank in e's domain list, or nil.
func (b *bucket) find(e *ientry) *ientry {
	es := b.byDomain[e.domain]
	i, _ := slices.BinarySearchFunc(es, e, rankCmp)
	for _, x := range es[i:min(i+1, len(es))] {
		if x.key == e.key {
			return x
		}
	}
	// Not where its rank puts it (an entry stored by an older version):
	// look everywhere.
	for _, es := range b.byDomain {
		if j := slices.IndexFunc(es, func(x *ientry) bool { return x.key == e.key }); j >= 0 {
			return es[j]
		}
	}
	return nil
}

// cowWith returns a copy of b (an overlay's small bucket) with e filed.
func (b *bucket) cowWith(e *ientry) *bucket {
	c := *b
	c.byDomain = cloneMap(b.byDomain)
	es := c.byDomain[e.domain]
	i, _ := slices.BinarySearchFunc(es, e, rankCmp)
	c.byDomain[e.domain] = slices.Insert(slices.Clone(es), i, e)
	if e.pattern != "" {
		// Checked one by one (always), as a small bucket's: an overlay
		// holds at most overlayMax entries, and filing each by anchor
		// word would copy a postings map per write.
		c.always = append(slices.Clip(b.always), e)
	}
	c.size++
	return &c
}

// cowWithout returns a copy of b (an overlay's small bucket) without its
// entry x.
func (b *bucket) cowWithout(x *ientry) *bucket {
	c := *b
	c.byDomain = cloneMap(b.byDomain)
	es := c.byDomain[x.domain]
	if i := slices.Index(es, x); i >= 0 {
		c.byDomain[x.domain] = slices.Delete(slices.Clone(es), i, i+1)
	}
	c.postings = b.postings
	unfile(&c, x)
	c.size--
	return &c
}

// fold compiles b's live entries (compiled and not gone, and added) into
// a fresh bucket without overlay.
func (b *bucket) fold() *bucket {
	isGone := func(e *ientry) bool {
		_, g := b.gone[e]
		return g
	}
	live := func(e *ientry) bool { return !isGone(e) }
	out := &bucket{byDomain: make(map[string][]*ientry, len(b.byDomain)), bad: b.bad}
	var added map[string][]*ientry
	if b.added != nil {
		added = b.added.byDomain
	}
	for d, es := range b.byDomain {
		out.byDomain[d] = mergeLive(es, added[d], live)
	}
	for d, es := range added {
		if _, ok := b.byDomain[d]; !ok && len(es) > 0 {
			out.byDomain[d] = slices.Clone(es)
		}
	}
	for d, es := range out.byDomain {
		if len(es) == 0 {
			delete(out.byDomain, d)
		}
		out.size += len(es)
	}
	// Postings: the maps are cloned, their lists shared with b until one
	// changes (owned: the lists this fold made). Only the lists a gone
	// entry is filed in (under one of its anchors) are filtered, so a
	// fold costs O(overlay) besides the clone, however many words.
	owned := map[anchorWord]bool{}
	for kind, m := range b.postings {
		if m != nil {
			out.postings[kind] = maps.Clone(m)
		}
	}
	var buf []anchorWord
	for e := range b.gone {
		for _, a := range appendAnchors(buf[:0], e.pattern) {
			m := out.postings[a.kind]
			if owned[a] || !slices.ContainsFunc(m[a.word], isGone) {
				continue
			}
			if kept := filterLive(m[a.word], live); len(kept) > 0 {
				m[a.word], owned[a] = kept, true
			} else {
				delete(m, a.word)
			}
		}
	}
	out.always = filterLive(b.always, live)
	if b.added != nil {
		for _, es := range b.added.byDomain {
			for _, e := range es {
				buf = appendAnchors(buf[:0], e.pattern)
				switch {
				case e.pattern == "":
				case len(buf) == 0:
					out.always = append(out.always, e)
				default:
					a := bestAnchor(out, buf, nil)
					m := out.postings[a.kind]
					if m == nil {
						m = map[string][]*ientry{}
						out.postings[a.kind] = m
					}
					if !owned[a] {
						m[a.word], owned[a] = slices.Clip(m[a.word]), true // an append copies b's list
					}
					m[a.word] = append(m[a.word], e)
				}
			}
		}
	}
	return out
}

// mergeLive merges the ranked lists a (only its live entries) and b.
func mergeLive(a, b []*ientry, live func(*ientry) bool) []*ientry {
	out := make([]*ientry, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(a) > 0 && !live(a[0]):
			a = a[1:]
		case len(b) == 0 || (len(a) > 0 && rankCmp(a[0], b[0]) <= 0):
			out, a = append(out, a[0]), a[1:]
		default:
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

func filterLive(es []*ientry, live func(*ientry) bool) []*ientry {
	out := make([]*ientry, 0, len(es))
	for _, e := range es {
		if live(e) {
			out = append(out, e)
		}
	}
	return out
}
