package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Prefixed returns a view of s in which every key carries prefix: keys get
// it on the way in (Get, Set, Delete, Scan's prefix and Start, Batch,
// DropPrefix) and lose it on the way out (Scan's keys), so code written
// against Store runs unchanged inside one part of a shared store (a
// namespace, engine/memory.WithNamespace) and sees nothing outside it.
//
// A view adds no allocation per key a Scan returns (the key is a sub-slice
// of the base store's); Get, Set and Delete build the prefixed key (one
// small allocation), Scan one per call and Batch two per batch. Keys in a
// view are shorter than MaxKeySize by len(prefix): the base store refuses
// the longer prefixed key with ErrKeyTooLarge. Close ends the view only
// (later calls return ErrClosed); the base stays open for its owner to
// close, and other views over it keep working. prefix must not be empty.
// When s is a Watcher the view is one too (Watched prefixes the key), and
// only then.
func Prefixed(s Store, prefix []byte) Store {
	if len(prefix) == 0 {
		panic("kv: Prefixed with an empty prefix")
	}
	p := &prefixed{base: s, p: bytes.Clone(prefix)}
	if w, ok := s.(Watcher); ok {
		return &prefixedWatcher{p, w}
	}
	return p
}

// prefixedWatcher is a view over a Watcher.
type prefixedWatcher struct {
	*prefixed
	w Watcher
}

// Watched is the base's Watched of the prefixed key; a closed view has
// nothing watched.
func (s *prefixedWatcher) Watched(key []byte) ([]byte, bool) {
	if s.closed.Load() {
		return nil, false
	}
	return s.w.Watched(s.key(key))
}

type prefixed struct {
	base   Store
	p      []byte
	closed atomic.Bool
}

// key returns p+k in a new slice (a store may keep the key it is given).
func (s *prefixed) key(k []byte) []byte {
	b := make([]byte, len(s.p)+len(k))
	copy(b, s.p)
	copy(b[len(s.p):], k)
	return b
}

func (s *prefixed) View(ctx context.Context, fn func(Reader) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.base.View(ctx, func(r Reader) error { return fn(prefixedReader{s, r}) })
}

func (s *prefixed) Update(ctx context.Context, fn func(Txn) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.base.Update(ctx, func(tx Txn) error { return fn(prefixedTxn{prefixedReader{s, tx}, tx}) })
}

func (s *prefixed) Batch(ctx context.Context, ops []Op) error {
	if s.closed.Load() {
		return ErrClosed
	}
	n := 0
	for _, op := range ops {
		n += len(s.p) + len(op.Key)
	}
	buf := make([]byte, 0, n)
	out := make([]Op, len(ops))
	for i, op := range ops {
		start := len(buf)
		buf = append(append(buf, s.p...), op.Key...)
		op.Key = buf[start:len(buf):len(buf)]
		out[i] = op
	}
	return s.base.Batch(ctx, out)
}

func (s *prefixed) DropPrefix(ctx context.Context, prefix []byte) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if len(prefix) == 0 {
		// The base would take p itself and drop the whole view.
		return errors.New("kv: drop prefix: the prefix is empty")
	}
	return s.base.DropPrefix(ctx, s.key(prefix))
}

func (s *prefixed) Close() error {
	s.closed.Store(true)
	return nil
}

type prefixedReader struct {
	s *prefixed
	r Reader
}

func (r prefixedReader) Get(key []byte) ([]byte, error) { return r.r.Get(r.s.key(key)) }

// GetExpiry lets kv.Apply's journal keep TTLs through a view (a base
// reader without it gives no expiry, as Apply then assumes).
func (r prefixedReader) GetExpiry(key []byte) ([]byte, time.Time, error) {
	if er, ok := r.r.(expiryReader); ok {
		return er.GetExpiry(r.s.key(key))
	}
	v, err := r.r.Get(r.s.key(key))
	return v, time.Time{}, err
}

func (r prefixedReader) Scan(prefix []byte, opts ScanOptions, fn func(key, value []byte) error) error {
	p := r.s.p
	full := make([]byte, 0, 2*len(p)+len(prefix)+len(opts.Start))
	full = append(append(full, p...), prefix...)
	if opts.Start != nil {
		start := len(full)
		full = append(append(full, p...), opts.Start...)
		opts.Start = full[start:]
		full = full[:start:start]
	}
	return r.r.Scan(full, opts, func(k, v []byte) error {
		if !bytes.HasPrefix(k, p) {
			return fmt.Errorf("kv: scan %s: the store returned %s, outside the view", Short(full), Short(k))
		}
		return fn(k[len(p):], v)
	})
}

type prefixedTxn struct {
	prefixedReader
	tx Txn
}

func (t prefixedTxn) Set(key, value []byte, ttl time.Duration) error {
	return t.tx.Set(t.s.key(key), value, ttl)
}

func (t prefixedTxn) Delete(key []byte) error { return t.tx.Delete(t.s.key(key)) }

// MaxTxnOps passes on the base store's operation limit (Limits), so
// Apply through a view journals as it would on the base; 0 when the base
// has none.
func (s *prefixed) MaxTxnOps() int {
	if l, ok := s.base.(Limits); ok {
		return l.MaxTxnOps()
	}
	return 0
}

// Exclusive passes on whether the base store is held by this process alone.
func (s *prefixed) Exclusive() bool { return IsExclusive(s.base) }
