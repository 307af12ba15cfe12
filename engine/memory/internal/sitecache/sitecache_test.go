package sitecache

import (
	"fmt"
	"testing"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

func TestGenerations(t *testing.T) {
	c := New[int](2)
	if _, ok := c.Get("a", ""); ok {
		t.Fatal("hit on an empty cache")
	}
	c.Put("a", "", 1)
	if c.Len() != 0 {
		t.Fatal("a value without a generation was cached")
	}
	c.Put("a", "g1", 1)
	if v, ok := c.Get("a", "g1"); !ok || v != 1 {
		t.Fatalf("Get(a, g1) = %v %v", v, ok)
	}
	if _, ok := c.Get("a", "g2"); ok {
		t.Fatal("hit at another generation")
	}
	c.Advance("a", "g0", "g3", func(v int) int { return v + 10 })
	if _, ok := c.Get("a", "g3"); ok {
		t.Fatal("advanced from a generation the cache was not at")
	}
	c.Advance("a", "g1", "g2", func(v int) int { return v + 10 })
	if v, ok := c.Get("a", "g2"); !ok || v != 11 {
		t.Fatalf("after Advance: %v %v", v, ok)
	}
}

func TestLeastRecentlyUsedGoes(t *testing.T) {
	c := New[int](2)
	c.Put("a", "g", 1)
	c.Put("b", "g", 2)
	c.Get("a", "g")
	c.Put("c", "g", 3)
	if !c.Has("a") || c.Has("b") || !c.Has("c") || c.Len() != 2 {
		t.Fatalf("a %v b %v c %v len %d", c.Has("a"), c.Has("b"), c.Has("c"), c.Len())
	}
}

func TestWeighted(t *testing.T) {
	c := NewWeighted[int](10, func(v int) int { return v })
	c.Put("a", "g", 4)
	c.Put("b", "g", 4)
	c.Get("a", "g")
	c.Put("c", "g", 3) // 11: b, the least recently used, goes
	if !c.Has("a") || c.Has("b") || !c.Has("c") || c.Weight() != 7 {
		t.Fatalf("a %v b %v c %v weight %d", c.Has("a"), c.Has("b"), c.Has("c"), c.Weight())
	}
	c.Advance("a", "g", "g2", func(v int) int { return 6 }) // counts 5 (half the budget): 8
	if c.Weight() != 8 || !c.Has("c") {
		t.Fatalf("after Advance: weight %d", c.Weight())
	}
	c.Put("d", "g", 20) // counts 5: c, the least recently used, goes; a stays beside it
	if c.Len() != 2 || !c.Has("d") || !c.Has("a") || c.Weight() != 10 {
		t.Fatalf("after a value over the budget: %d values, weight %d", c.Len(), c.Weight())
	}
}

func TestGenIsFresh(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		g := Gen()
		if len(g) != 16 || seen[g] {
			t.Fatalf("token %q (seen before: %v)", g, seen[g])
		}
		seen[g] = true
	}
}

// watching is a store that watches: one key, synced or not.
type watching struct {
	kv.Store
	key, value string
	synced     bool
}

func (w *watching) Watched(key []byte) ([]byte, bool) {
	if !w.synced {
		return nil, false
	}
	if string(key) != w.key {
		return nil, true
	}
	return []byte(w.value), true
}

func TestTokenAndCached(t *testing.T) {
	c := New[int](4)
	c.Put("site", "g1", 1)
	if _, ok := Token(struct{ kv.Store }{badgertest.OpenMemory(t)}, []byte("gen")); ok {
		t.Error("a store that does not watch gave a token")
	}
	w := &watching{key: "gen", value: "g1"}
	if _, ok := Cached(c, w, "site", []byte("gen")); ok {
		t.Error("a hit while the token is not synced")
	}
	w.synced = true
	if v, ok := Cached(c, w, "site", []byte("gen")); !ok || v != 1 {
		t.Errorf("Cached at the watched token: %v %v", v, ok)
	}
	w.value = "g2"
	if _, ok := Cached(c, w, "site", []byte("gen")); ok {
		t.Error("a hit at another generation")
	}
	if g, ok := Token(w, []byte("other")); !ok || g != "" {
		t.Errorf("a missing token: %q %v", g, ok)
	}
	if _, ok := Cached(c, w, "site", []byte("other")); ok {
		t.Error("a hit with no token")
	}
}

// Advances that arrive out of order (two writers of a site race after
// their commits) are applied in chain order once the cache reaches the
// token they start from, by an advance or by a build read at it.
func TestAdvanceOutOfOrder(t *testing.T) {
	c := New[[]string](4)
	c.Put("a", "g1", nil)
	add := func(s string) func([]string) []string {
		return func(v []string) []string { return append(append([]string(nil), v...), s) }
	}
	c.Advance("a", "g3", "g4", add("w4"))
	c.Advance("a", "g2", "g3", add("w3"))
	if _, ok := c.Get("a", "g3"); ok {
		t.Fatal("advanced before the cache reached the first token")
	}
	c.Advance("a", "g1", "g2", add("w2"))
	if v, ok := c.Get("a", "g4"); !ok || len(v) != 3 || v[0] != "w2" || v[1] != "w3" || v[2] != "w4" {
		t.Fatalf("after the chain: %v %v, want [w2 w3 w4] at g4", v, ok)
	}

	// A build read at g5 picks up the advance from g5 that came first.
	c.Advance("a", "g5", "g6", add("w6"))
	c.Put("a", "g5", []string{"built"})
	if v, ok := c.Get("a", "g6"); !ok || len(v) != 2 || v[1] != "w6" {
		t.Fatalf("after a build at g5: %v %v, want [built w6] at g6", v, ok)
	}

	// Advances from tokens the cache never reaches are bounded.
	for i := range 3 * maxPending {
		c.Advance("a", fmt.Sprint("x", i), fmt.Sprint("y", i), add("never"))
	}
	c.mu.Lock()
	n := len(c.m["a"].pending)
	c.mu.Unlock()
	if n > maxPending {
		t.Fatalf("%d advances waiting, want at most %d", n, maxPending)
	}
	if v, ok := c.Get("a", "g6"); !ok || len(v) != 2 {
		t.Fatalf("advances from other tokens changed the entry: %v %v", v, ok)
	}
}

// A write announced before its commit (Prepare) is applied by a Get at its
// token or a later one (the snapshot proves it committed), never by the
// chain of committed advances alone: an announced write that did not
// commit leaves the entry as it was.
func TestPrepare(t *testing.T) {
	c := New[[]string](4)
	add := func(s string) func([]string) []string {
		return func(v []string) []string { return append(append([]string(nil), v...), s) }
	}
	c.Put("a", "g1", nil)
	c.Prepare("a", "g1", "lost", add("lost")) // its transaction conflicted
	c.Prepare("a", "g1", "g2", add("w2"))
	c.Prepare("a", "g2", "g3", add("w3"))
	if v, ok := c.Get("a", "g1"); !ok || len(v) != 0 {
		t.Fatalf("at g1 before any commit: %v %v", v, ok)
	}
	if v, ok := c.Get("a", "g3"); !ok || len(v) != 2 || v[0] != "w2" || v[1] != "w3" {
		t.Fatalf("a snapshot at g3: %v %v, want [w2 w3]", v, ok)
	}
	c.Advance("a", "g1", "g2", add("w2")) // the writers return, late
	c.Advance("a", "g2", "g3", add("w3"))
	if v, ok := c.Get("a", "g3"); !ok || len(v) != 2 {
		t.Fatalf("after the late advances: %v %v, want [w2 w3] once", v, ok)
	}
	if v, ok := c.Get("a", "g2"); !ok || len(v) != 1 {
		t.Fatalf("a snapshot at g2, among the recent values: %v %v", v, ok)
	}

	c.Put("b", "h1", nil)
	c.Prepare("b", "h1", "h2", add("w2"))  // committed; its writer is not back yet
	c.Advance("b", "h0", "h1", add("old")) // from before the build: never applied
	if v, ok := c.Get("b", "h2"); !ok || len(v) != 1 || v[0] != "w2" {
		t.Fatalf("a snapshot at h2: %v %v, want [w2]", v, ok)
	}
	c.Put("c", "k1", nil)
	c.Prepare("c", "k1", "k2", add("never committed"))
	c.Put("c", "k1", nil) // a build at k1 again: the announcement is not applied
	if v, ok := c.Get("c", "k1"); !ok || len(v) != 0 {
		t.Fatalf("an uncommitted announcement was applied: %v %v", v, ok)
	}
}
