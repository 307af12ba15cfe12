package sitecache

import (
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
