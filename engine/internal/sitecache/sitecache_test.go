package sitecache

import "testing"

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
