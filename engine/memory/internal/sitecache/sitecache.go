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
	"slices"
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
	// orphans are advances of keys with nothing cached, kept for the
	// build that may be on its way (Advance).
	orphans map[string][]pendingAdvance[T]
	lru     list.List // of *item[T], most recently used first
}

type item[T any] struct {
	key     string
	gen     string
	v       T
	w       int
	elem    *list.Element
	pending []pendingAdvance[T] // advances from tokens not reached yet (Advance)
	recent  []version[T]        // the values it held before, newest first
}

// version is a value a cache entry held at a token before its current
// one.
type version[T any] struct {
	gen string
	v   T
}

// maxRecent bounds the earlier values an entry keeps. A reader whose
// snapshot is a few writes behind the cache's (the writes committed and
// advanced the entry while it was on its way) is answered from the value
// at its own token, as a build would, instead of compiling it again and
// putting the older value back over the newer. Values are never changed
// once cached (an advance makes a copy that shares what it did not
// change), so an earlier one costs what it does not share.
const maxRecent = 8

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
	if it == nil || gen == "" {
		var zero T
		return zero, false
	}
	if it.gen == gen {
		c.lru.MoveToFront(it.elem)
		return it.v, true
	}
	for _, r := range it.recent {
		if r.gen == gen {
			c.lru.MoveToFront(it.elem)
			return r.v, true
		}
	}
	if it.reach(gen) {
		c.total -= it.w
		it.w = c.weigh(it.v)
		c.total += it.w
		c.lru.MoveToFront(it.elem)
		return it.v, true
	}
	var zero T
	return zero, false
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
	it := c.m[key]
	if it == nil {
		it = &item[T]{key: key, pending: c.orphans[key]}
		delete(c.orphans, key)
		it.elem = c.lru.PushFront(it)
		c.m[key] = it
	} else {
		c.total -= it.w
		c.lru.MoveToFront(it.elem)
	}
	it.set(gen, v)
	it.catchUp()
	it.w = c.weigh(it.v)
	c.total += it.w
	// The value just put stays even when it alone is over the budget (a
	// huge site): dropping it would rebuild it on every read.
	for c.total > c.max && c.lru.Len() > 1 {
		old := c.lru.Back().Value.(*item[T])
		c.lru.Remove(old.elem)
		delete(c.m, old.key)
		c.total -= old.w
	}
}

// weigh is v's weight in the budget.
func (c *Cache[T]) weigh(v T) int {
	if c.weight == nil {
		return 1
	}
	// A value counts for at most half the budget, so a huge site (over
	// the budget alone) and the sites read beside it are all kept,
	// instead of evicting each other on every read.
	return min(max(1, c.weight(v)), max(1, c.max/2))
}

// Advance replaces the value cached under key at oldGen by fn's result at
// newGen: a writer that read oldGen and wrote newGen in one transaction
// applies its own write, once committed, without reading the store back.
//
// Writers commit in token order but call Advance in any order (two
// writers of one site both return from their commits, then race here),
// and a reader may see a write's token before its writer gets here. So an
// advance from a token the cache is not at yet is kept, and applied as
// soon as the cache reaches that token, by the advance before it or by a
// build read at it; and a write is announced before its commit (Prepare),
// so a reader whose snapshot holds its token applies it instead of
// compiling the site again. A site's tokens form one chain (each write
// reads the token it replaces, and the store refuses a second write from
// the same token), so the advances from the cache's token to a token a
// snapshot holds are exactly the writes between them. At most maxPending
// advances wait per key, the oldest dropped first.
func (c *Cache[T]) Advance(key, oldGen, newGen string, fn func(T) T) {
	c.advance(key, oldGen, newGen, fn, true)
}

// Prepare announces a write from oldGen to newGen that is about to
// commit: a Get at newGen, or at a token after it, applies fn, since a
// snapshot holding newGen proves the write committed. A write that does
// not commit leaves an announcement no snapshot leads to; it is dropped
// with the oldest. The writer still calls Advance once committed.
func (c *Cache[T]) Prepare(key, oldGen, newGen string, fn func(T) T) {
	c.advance(key, oldGen, newGen, fn, false)
}

func (c *Cache[T]) advance(key, oldGen, newGen string, fn func(T) T, committed bool) {
	if oldGen == "" || newGen == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := pendingAdvance[T]{oldGen, newGen, fn, committed}
	it := c.m[key]
	if it != nil && it.gen == oldGen && committed {
		// fn runs outside the lock, which every site's readers and
		// writers share: on a big site it copies and may fold an
		// overlay. Only this write advances from oldGen (the chain is
		// one), so the entry is still at oldGen afterwards unless a
		// build replaced it or a recall applied this write's
		// announcement meanwhile.
		v := it.v
		c.mu.Unlock()
		nv := fn(v)
		c.mu.Lock()
		it = c.m[key]
		if it != nil && it.gen == oldGen {
			it.pending = slices.DeleteFunc(it.pending, func(q pendingAdvance[T]) bool { return q.newGen == newGen })
			c.put(key, newGen, nv)
			return
		}
	}
	if it == nil {
		// A build may be on its way, read before this write: keep the
		// advance for it.
		if c.orphans == nil {
			c.orphans = map[string][]pendingAdvance[T]{}
		}
		if _, ok := c.orphans[key]; !ok && len(c.orphans) >= maxOrphans {
			clear(c.orphans)
		}
		c.orphans[key] = addPending(c.orphans[key], p)
		return
	}
	it.pending = addPending(it.pending, p)
	it.catchUp()
}

// addPending adds p to ps, marking an announced advance of the same write
// committed, and drops the oldest beyond maxPending.
func addPending[T any](ps []pendingAdvance[T], p pendingAdvance[T]) []pendingAdvance[T] {
	for i := range ps {
		if ps[i].newGen == p.newGen && ps[i].oldGen == p.oldGen {
			ps[i].committed = ps[i].committed || p.committed
			return ps
		}
	}
	ps = append(ps, p)
	if len(ps) > maxPending {
		ps = slices.Delete(ps, 0, 1)
	}
	return ps
}

// maxOrphans bounds the keys with advances kept while nothing is cached
// for them: past it they are all dropped (a key no one reads gets
// advances, and never a build to apply them to).
const maxOrphans = 256

// maxPending bounds the advances kept per key, waiting for the cache to
// reach the token they start from.
const maxPending = 32

// pendingAdvance is an advance from a token the cache was not at.
type pendingAdvance[T any] struct {
	oldGen, newGen string
	fn             func(T) T
	committed      bool // Advance, not only Prepare, was called
}

// set makes v at gen the entry's value, keeping the one before among the
// recent ones.
func (it *item[T]) set(gen string, v T) {
	if it.gen != "" && it.gen != gen {
		it.recent = slices.DeleteFunc(it.recent, func(r version[T]) bool { return r.gen == gen })
		it.recent = slices.Insert(it.recent, 0, version[T]{it.gen, it.v})
		if len(it.recent) > maxRecent {
			clear(it.recent[maxRecent:])
			it.recent = it.recent[:maxRecent]
		}
	}
	it.gen, it.v = gen, v
}

// catchUp applies the committed pending advances that start from the
// entry's token, in chain order.
func (it *item[T]) catchUp() {
	for applied := true; applied; {
		applied = false
		for i, p := range it.pending {
			if p.committed && p.oldGen == it.gen {
				it.pending = slices.Delete(it.pending, i, i+1)
				it.set(p.newGen, p.fn(it.v))
				applied = true
				break
			}
		}
	}
}

// reach applies the pending advances, committed or announced, that lead
// from the entry's token to gen, and reports whether there were any: a
// snapshot at gen proves every write on the way committed.
func (it *item[T]) reach(gen string) bool {
	if len(it.pending) == 0 {
		return false
	}
	var path []int
	var walk func(from string, depth int) bool
	walk = func(from string, depth int) bool {
		if from == gen {
			return true
		}
		if depth > len(it.pending) {
			return false
		}
		for i, p := range it.pending {
			if p.oldGen == from {
				path = append(path, i)
				if walk(p.newGen, depth+1) {
					return true
				}
				path = path[:len(path)-1]
			}
		}
		return false
	}
	if !walk(it.gen, 0) {
		return false
	}
	steps := make([]pendingAdvance[T], len(path))
	for k, i := range path {
		steps[k] = it.pending[i]
	}
	it.pending = slices.DeleteFunc(it.pending, func(p pendingAdvance[T]) bool {
		return slices.ContainsFunc(steps, func(q pendingAdvance[T]) bool { return q.newGen == p.newGen })
	})
	for _, p := range steps {
		it.set(p.newGen, p.fn(it.v))
	}
	return true
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
	clear(c.orphans)
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
