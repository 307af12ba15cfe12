// Package sitecache keeps decoded per-site memory in process memory,
// trusted only while the site's generation token in the store is the one
// it was read at.
//
// A store that caches a kind of memory writes a fresh random token (Gen)
// in the same transaction as every write of that kind, and reads the token
// in the same snapshot as it consults the cache. A token is random and 64
// bits wide, so a cached value is never served for another database or
// after any write; a site without a token (nothing written, or forgotten
// with DropPrefix) is never cached.
//
// On a store that watches keys (kv.Watcher: etcd, badger), a warm read checks the
// token without a round trip: Token gives the watched copy, and when the
// cache holds that generation the store answers without opening a View.
// The copy follows this process's commits at once and other processes'
// as their watch events arrive, so another machine's write is seen within
// the watch's delivery lag instead of at the next read's revision.
package sitecache

import (
	"container/list"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/engine-dev/engine/kv"
)

// Gen returns a fresh generation token.
func Gen() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Token returns the generation token at genKey as db's watch last saw it,
// when db is a kv.Watcher whose copy of genKey is synced; ok is false
// otherwise (a store that does not watch, a key not yet watched, a broken watch), and the caller
// reads the token in its snapshot as before. A missing token is ("", true),
// which no cache entry matches.
func Token(db kv.Store, genKey []byte) (gen string, ok bool) {
	w, isW := db.(kv.Watcher)
	if !isW {
		return "", false
	}
	v, ok := w.Watched(genKey)
	if !ok {
		return "", false
	}
	return string(v), true
}

// Cached returns the value c holds under key when it is at the generation
// Token reads at genKey: a warm read with no store read at all. ok is false
// when db does not watch, the token is not synced, or the cache is at
// another generation; the caller then reads in a View.
func Cached[T any](c *Cache[T], db kv.Store, key string, genKey []byte) (T, bool) {
	gen, ok := Token(db, genKey)
	if !ok {
		var zero T
		return zero, false
	}
	return c.Get(key, gen)
}

// Cache holds up to Max values, or values of up to a total weight
// (NewWeighted), dropping the least recently used.
type Cache[T any] struct {
	mu     sync.Mutex
	max    int
	weight func(T) int // nil: each value weighs 1
	total  int
	m      map[string]*item[T]
	lru    list.List // of *item[T], most recently used first
}

type item[T any] struct {
	key  string
	gen  string
	v    T
	w    int
	elem *list.Element
}

// New returns a cache of at most max values.
func New[T any](max int) *Cache[T] { return &Cache[T]{max: max, m: map[string]*item[T]{}} }

// NewWeighted returns a cache of values whose weights (weight(v), at
// least 1 each) add up to at most max: a cache bounded by what its values
// hold rather than by how many there are. A value counts for at most
// half of max, so one heavier than that is kept beside others.
func NewWeighted[T any](max int, weight func(T) int) *Cache[T] {
	return &Cache[T]{max: max, weight: weight, m: map[string]*item[T]{}}
}

// Get returns the value cached under key when it was read at gen.
func (c *Cache[T]) Get(key, gen string) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it := c.m[key]
	if it == nil || gen == "" || it.gen != gen {
		var zero T
		return zero, false
	}
	c.lru.MoveToFront(it.elem)
	return it.v, true
}

// Put caches v under key as read at gen (a no-op for gen "").
func (c *Cache[T]) Put(key, gen string, v T) {
	if gen == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.put(key, gen, v)
}

func (c *Cache[T]) put(key, gen string, v T) {
	w := 1
	if c.weight != nil {
		// A value counts for at most half the budget, so a huge site
		// (over the budget alone) and the sites read beside it are
		// all kept, instead of evicting each other on every read.
		w = min(max(1, c.weight(v)), max(1, c.max/2))
	}
	it := c.m[key]
	if it == nil {
		it = &item[T]{key: key}
		it.elem = c.lru.PushFront(it)
		c.m[key] = it
	} else {
		c.total -= it.w
		c.lru.MoveToFront(it.elem)
	}
	it.gen, it.v, it.w = gen, v, w
	c.total += w
	// The value just put stays even when it alone is over the budget (a
	// huge site): dropping it would rebuild it on every read.
	for c.total > c.max && c.lru.Len() > 1 {
		old := c.lru.Back().Value.(*item[T])
		c.lru.Remove(old.elem)
		delete(c.m, old.key)
		c.total -= old.w
	}
}

// Advance replaces the value cached under key at oldGen by fn's result at
// newGen: a writer that read oldGen and wrote newGen in one transaction
// applies its own write without reading the store back. When the cache is
// not at oldGen (another writer came between), the entry is left alone and
// the next Get misses.
func (c *Cache[T]) Advance(key, oldGen, newGen string, fn func(T) T) {
	if oldGen == "" || newGen == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	it := c.m[key]
	if it == nil || it.gen != oldGen {
		return
	}
	c.put(key, newGen, fn(it.v))
}

// Weight is the total weight of the cached values (their number, for a
// cache made by New).
func (c *Cache[T]) Weight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Len is the number of cached values.
func (c *Cache[T]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Has reports whether a value is cached under key, at any generation.
func (c *Cache[T]) Has(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[key]
	return ok
}

// Clear empties the cache.
func (c *Cache[T]) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
	c.lru.Init()
	c.total = 0
}

// LoadJSON returns every JSON record under prefix as of r's snapshot,
// decoded, from c when the token at genKey is the one they were read at;
// otherwise it scans, decodes and caches them under key.
func LoadJSON[T any](c *Cache[[]T], r kv.Reader, key string, genKey, prefix []byte) ([]T, error) {
	g, err := r.Get(genKey)
	if err != nil && !errors.Is(err, kv.ErrNotFound) {
		return nil, err
	}
	gen := string(g)
	if vs, ok := c.Get(key, gen); ok {
		return vs, nil
	}
	var vs []T
	err = r.Scan(prefix, kv.ScanOptions{}, func(k, v []byte) error {
		rec, err := decode[T](k, v)
		if err != nil {
			return err
		}
		vs = append(vs, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.Put(key, gen, vs)
	return vs, nil
}

// decode decodes the JSON record v kept at key k.
func decode[T any](k, v []byte) (T, error) {
	var rec T
	if err := json.Unmarshal(v, &rec); err != nil {
		return rec, fmt.Errorf("decode %s: %w", k, err)
	}
	return rec, nil
}
