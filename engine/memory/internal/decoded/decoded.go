// Package decoded keeps what a record's stored bytes last decoded to, for
// records a store reads again and again unchanged (the reference
// trajectory and a site's sessions, at every step of a run): the same
// bytes are not decoded again. A value is trusted only for the very bytes
// it was decoded from, so no write can leave a stale one.
package decoded

import (
	"bytes"
	"encoding/json"
	"sync"
)

// Cache maps a key to the bytes last decoded under it and their value. It
// holds up to max keys (dropping an arbitrary one to take another) and is
// safe for concurrent use.
type Cache[T any] struct {
	max   int
	clone func(T) T
	mu    sync.Mutex
	m     map[string]entry[T]
}

type entry[T any] struct {
	raw []byte
	v   T
}

// New returns a cache of up to max values; clone copies a value so that
// the copy shares nothing with it (nil for a T that holds no pointer,
// slice or map: a T is copied whole).
func New[T any](max int, clone func(T) T) *Cache[T] {
	if clone == nil {
		clone = func(v T) T { return v }
	}
	return &Cache[T]{max: max, clone: clone, m: map[string]entry[T]{}}
}

// Unmarshal is json.Unmarshal of raw, the bytes stored under key, into a
// new T: the value decoded the last time key held these bytes, when it
// did. The caller may change what it returns.
func (c *Cache[T]) Unmarshal(key, raw []byte) (T, error) {
	c.mu.Lock()
	e, ok := c.m[string(key)]
	c.mu.Unlock()
	if ok && bytes.Equal(e.raw, raw) {
		return c.clone(e.v), nil
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, err
	}
	kept := entry[T]{raw: bytes.Clone(raw), v: c.clone(v)}
	c.mu.Lock()
	if _, ok := c.m[string(key)]; !ok && len(c.m) >= c.max {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[string(key)] = kept
	c.mu.Unlock()
	return v, nil
}
