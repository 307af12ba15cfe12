package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Staging is a Store that keeps every write in memory, over a base store it
// reads through: reads see the base as it is plus the staged writes, and
// nothing reaches the base until Commit, which writes them all or nothing
// (Apply). Code written against Store (the engine's stores) runs unchanged
// on a Staging, so a many-transaction job such as an import becomes one
// atomic write.
//
// Transactions on a Staging never conflict: they run one at a time (an
// Update waits for open Views), so it passes kvtest.Run except the clauses
// that need a commit while a transaction is open. The base is read in a
// fresh snapshot per View or Update; Commit does not check that what was
// read is still current (the caller holds the store alone, as engine import
// does).
type Staging struct {
	base   Store
	mu     sync.RWMutex
	list   skiplist
	n      int // staged keys
	closed bool
}

// NewStaging returns an empty Staging over base.
func NewStaging(base Store) *Staging {
	return &Staging{base: base, list: newSkiplist()}
}

// staged is one staged write: a value (with its expiry) or a delete.
type staged struct {
	value   []byte
	expires time.Time // zero: none
	deleted bool
}

// Len is the number of keys staged.
func (s *Staging) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.n
}

// Ops returns the staged writes in key order.
func (s *Staging) Ops() []Op {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ops := make([]Op, 0, s.n)
	now := time.Now()
	for n := s.list.head.next[0]; n != nil; n = n.next[0] {
		op := Op{Key: []byte(n.key), Value: n.v.value, Delete: n.v.deleted}
		if !n.v.expires.IsZero() {
			op.TTL = n.v.expires.Sub(now)
			if op.TTL <= 0 {
				op.Value, op.TTL, op.Delete = nil, 0, true
			}
		}
		ops = append(ops, op)
	}
	return ops
}

// Commit writes the staged writes to the base with Apply and empties the
// Staging when they are written.
func (s *Staging) Commit(ctx context.Context, opts ApplyOptions) error {
	if err := Apply(ctx, s.base, s.Ops(), opts); err != nil {
		return err
	}
	s.mu.Lock()
	s.list, s.n = newSkiplist(), 0
	s.mu.Unlock()
	return nil
}

// errClosed is ErrClosed for op.
func errClosed(op string) error { return fmt.Errorf("kv: staging: %s: %w", op, ErrClosed) }

func (s *Staging) View(ctx context.Context, fn func(Reader) error) error {
	return s.base.View(ctx, func(r Reader) error {
		s.mu.RLock()
		defer s.mu.RUnlock()
		if s.closed {
			return errClosed("view")
		}
		return fn(&stagingTxn{s: s, base: r})
	})
}

func (s *Staging) Update(ctx context.Context, fn func(Txn) error) error {
	return s.base.View(ctx, func(r Reader) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return errClosed("update")
		}
		tx := &stagingTxn{s: s, base: r, write: true}
		err := fn(tx)
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			tx.undo()
		}
		return err
	})
}

func (s *Staging) Batch(ctx context.Context, ops []Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, op := range ops {
		if err := CheckKey("batch write", op.Key); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed("batch")
	}
	tx := &stagingTxn{s: s}
	for _, op := range ops {
		tx.put(op)
	}
	return nil
}

func (s *Staging) DropPrefix(ctx context.Context, prefix []byte) error {
	if len(prefix) == 0 {
		return errors.New("kv: drop prefix: refusing to drop the empty prefix (every key)")
	}
	return s.Update(ctx, func(tx Txn) error {
		var keys [][]byte
		err := tx.Scan(prefix, ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			keys = append(keys, bytes.Clone(k))
			return nil
		})
		for _, k := range keys {
			if err == nil {
				err = tx.Delete(k)
			}
		}
		return err
	})
}

// Close discards what is staged; it does not close the base. Later calls
// return ErrClosed.
func (s *Staging) Close() error {
	s.mu.Lock()
	s.list, s.n, s.closed = newSkiplist(), 0, true
	s.mu.Unlock()
	return nil
}

// stagingTxn reads the base snapshot through the staged writes and, in an
// Update, stages its own writes (remembering what they replaced, to undo
// them when the transaction's function fails).
type stagingTxn struct {
	s     *Staging
	base  Reader
	write bool
	prev  []undoEntry
}

type undoEntry struct {
	key string
	had bool
	v   staged
}

func (t *stagingTxn) Get(key []byte) ([]byte, error) {
	if v, ok := t.s.list.get(string(key)); ok {
		if v.deleted || (!v.expires.IsZero() && !v.expires.After(time.Now())) {
			return nil, ErrNotFound
		}
		return bytes.Clone(v.value), nil
	}
	return t.base.Get(key)
}

func (t *stagingTxn) Scan(prefix []byte, opts ScanOptions, fn func(key, value []byte) error) error {
	if opts.Start != nil && !bytes.HasPrefix(opts.Start, prefix) {
		return t.base.Scan(prefix, opts, fn) // the base reports the error
	}
	// The staged keys in range, in scan order.
	var mine []*node
	now := time.Now()
	if !opts.Reverse {
		from := prefix
		if opts.Start != nil {
			from = opts.Start
		}
		for n := t.s.list.seek(string(from)); n != nil && bytes.HasPrefix([]byte(n.key), prefix); n = n.next[0] {
			mine = append(mine, n)
		}
	} else {
		for n := t.s.list.seek(string(prefix)); n != nil && bytes.HasPrefix([]byte(n.key), prefix); n = n.next[0] {
			if opts.Start != nil && n.key > string(opts.Start) {
				break
			}
			mine = append(mine, n)
		}
		for i, j := 0, len(mine)-1; i < j; i, j = i+1, j-1 {
			mine[i], mine[j] = mine[j], mine[i]
		}
	}
	before := func(a, b string) bool { // a comes before b in scan order
		if opts.Reverse {
			return a > b
		}
		return a < b
	}
	// The base scan turns ErrStop into nil: stopped says the scan ended.
	emitted, stopped := 0, false
	emit := func(k, v []byte) error {
		if opts.KeysOnly {
			v = nil
		}
		err := fn(k, v)
		emitted++
		if err == nil && opts.Limit > 0 && emitted >= opts.Limit {
			err = ErrStop
		}
		if errors.Is(err, ErrStop) {
			stopped = true
		}
		return err
	}
	emitMine := func(n *node) error {
		if n.v.deleted || (!n.v.expires.IsZero() && !n.v.expires.After(now)) {
			return nil
		}
		return emit([]byte(n.key), n.v.value)
	}
	baseOpts := opts
	baseOpts.Limit = 0
	err := t.base.Scan(prefix, baseOpts, func(k, v []byte) error {
		for len(mine) > 0 && before(mine[0].key, string(k)) {
			if err := emitMine(mine[0]); err != nil {
				return err
			}
			mine = mine[1:]
		}
		if len(mine) > 0 && mine[0].key == string(k) {
			n := mine[0]
			mine = mine[1:]
			return emitMine(n)
		}
		return emit(k, v)
	})
	for err == nil && !stopped && len(mine) > 0 {
		err = emitMine(mine[0])
		mine = mine[1:]
	}
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

func (t *stagingTxn) Set(key, value []byte, ttl time.Duration) error {
	if !t.write {
		return errors.New("kv: set in a read-only view")
	}
	if err := CheckKey("set", key); err != nil {
		return err
	}
	t.put(Op{Key: key, Value: value, TTL: ttl})
	return nil
}

func (t *stagingTxn) Delete(key []byte) error {
	if !t.write {
		return errors.New("kv: delete in a read-only view")
	}
	if err := CheckKey("delete", key); err != nil {
		return err
	}
	t.put(Op{Key: key, Delete: true})
	return nil
}

func (t *stagingTxn) put(op Op) {
	v := staged{deleted: op.Delete}
	if !op.Delete {
		v.value = bytes.Clone(op.Value)
		if v.value == nil {
			v.value = []byte{}
		}
		if op.TTL > 0 {
			v.expires = time.Now().Add(op.TTL)
		}
	}
	old, had := t.s.list.set(string(op.Key), v)
	if !had {
		t.s.n++
	}
	if t.write {
		t.prev = append(t.prev, undoEntry{string(op.Key), had, old})
	}
}

func (t *stagingTxn) undo() {
	for i := len(t.prev) - 1; i >= 0; i-- {
		u := t.prev[i]
		if u.had {
			t.s.list.set(u.key, u.v)
		} else if t.s.list.remove(u.key) {
			t.s.n--
		}
	}
	t.prev = nil
}

// skiplist is an ordered map from string keys to staged writes.
type skiplist struct {
	head  *node
	level int
}

const maxLevel = 24

type node struct {
	key  string
	v    staged
	next []*node
}

func newSkiplist() skiplist {
	return skiplist{head: &node{next: make([]*node, maxLevel)}, level: 1}
}

// path fills prev with the last node before key at each level and returns
// the first node at or after key.
func (l *skiplist) path(key string, prev *[maxLevel]*node) *node {
	x := l.head
	for i := l.level - 1; i >= 0; i-- {
		for x.next[i] != nil && x.next[i].key < key {
			x = x.next[i]
		}
		if prev != nil {
			prev[i] = x
		}
	}
	return x.next[0]
}

func (l *skiplist) seek(key string) *node { return l.path(key, nil) }

func (l *skiplist) get(key string) (staged, bool) {
	if n := l.seek(key); n != nil && n.key == key {
		return n.v, true
	}
	return staged{}, false
}

// set stores v at key and returns what it replaced.
func (l *skiplist) set(key string, v staged) (staged, bool) {
	var prev [maxLevel]*node
	if n := l.path(key, &prev); n != nil && n.key == key {
		old := n.v
		n.v = v
		return old, true
	}
	lvl := 1
	for lvl < maxLevel && rand.IntN(4) == 0 {
		lvl++
	}
	for i := l.level; i < lvl; i++ {
		prev[i] = l.head
	}
	l.level = max(l.level, lvl)
	n := &node{key: key, v: v, next: make([]*node, lvl)}
	for i := range lvl {
		n.next[i] = prev[i].next[i]
		prev[i].next[i] = n
	}
	return staged{}, false
}

func (l *skiplist) remove(key string) bool {
	var prev [maxLevel]*node
	n := l.path(key, &prev)
	if n == nil || n.key != key {
		return false
	}
	for i := range len(n.next) {
		prev[i].next[i] = n.next[i]
	}
	return true
}
