// Package kv is the interface of an ordered, transactional key-value store
// and its contract; it knows nothing of what the keys mean (the engine's key
// layout lives in engine/memory/keyspace) and nothing of any one store: badger is
// in kv/badger, etcd in kv/etcd, and kv/kvtest.Run is the conformance suite
// every store passes. What a store implements beyond the interface (Apply's journal,
// Staging) is written here once, against Store.
//
// The contract, as kvtest.Run pins it:
//
//   - Keys are non-empty byte strings of at most MaxKeySize bytes, ordered
//     bytewise (bytes.Compare: 0x00 sorts first, 0xff last). A longer key is
//     refused with ErrKeyTooLarge and nothing of its write lands.
//   - View reads one snapshot: a commit made after it began is not seen.
//   - Update runs fn in a transaction that sees its own writes (Get and Scan)
//     and commits all of it or none. It is serialisable for the keys it
//     read: when another commit since its snapshot wrote a key it read
//     (with Get, a missing key included, or returned by a Scan), fn runs
//     again on a fresh snapshot, so N concurrent read-modify-writes of one
//     key are all counted. It is not promised to conflict with a key that
//     another commit inserted into a range it scanned but that the scan did
//     not return (a phantom): badger does not track ranges. A transaction
//     that must not miss such an insert reads a guard key that every
//     inserter writes (engine/memory/session's per-site write counter). A
//     transaction too large for the store fails with ErrTooBig, nothing
//     written. A context cancelled before the commit fails it, nothing
//     written.
//   - Batch applies blind writes of any number, never conflicts, and is not
//     atomic (it may be split into several commits).
//   - Get returns a copy; Scan's key and value are valid only during the
//     callback, and ErrStop from the callback ends the scan with nil.
//   - A TTL makes a key disappear from Get and Scan no later than the TTL
//     after its write (a store may round expiry down to a whole second).
//   - DropPrefix deletes every key with a non-empty prefix.
//   - After Close every method returns ErrClosed; Close twice is harmless.
//   - A store that implements Watcher (etcd, badger) keeps watched keys'
//     values in process: a commit by this process is seen by its next
//     Watched call (read-your-writes), another process's once its watch
//     event arrives (bounded staleness, not a linearizable read; badger's
//     directory lock admits no other writer), and a key never goes back
//     to a value older than one Watched already returned. While a watch
//     is not established or broke, Watched says so (ok false) and the
//     caller reads the store as before.
package kv

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNotFound is returned by Get when the key does not exist.
var ErrNotFound = errors.New("kv: key not found")

// MaxKeySize is the longest key a store takes (badger's limit is 65,000
// bytes; etcd's request limit is far above it). Callers bound what they put
// into keys well below it; a longer key is refused with ErrKeyTooLarge
// before the store sees it.
const MaxKeySize = 65000

// ErrKeyTooLarge is returned by Set, Delete and Batch for a key longer than
// MaxKeySize.
var ErrKeyTooLarge = errors.New("kv: key too large")

// ErrClosed is returned by every method of a store after its Close.
var ErrClosed = errors.New("kv: store is closed")

// ErrNoSpace is returned (wrapped, with the figures) by a write while the
// store has too little room left to take it; reads still work.
var ErrNoSpace = errors.New("no space left on the data dir's disk")

// CheckKey refuses a key longer than MaxKeySize with ErrKeyTooLarge, naming
// op and the key's start. Stores call it in Set, Delete and Batch.
func CheckKey(op string, key []byte) error {
	if len(key) > MaxKeySize {
		return fmt.Errorf("kv: %s: key of %d bytes (%s) is longer than the limit of %d: %w", op, len(key), Short(key), MaxKeySize, ErrKeyTooLarge)
	}
	return nil
}

// Short quotes key for an error message, cut to its first 100 bytes.
func Short(key []byte) string {
	if len(key) <= 100 {
		return fmt.Sprintf("%q", key)
	}
	return fmt.Sprintf("%q… (%d bytes)", key[:100], len(key))
}

// ErrStop may be returned from a Scan callback to end the scan early; Scan
// then returns nil.
var ErrStop = errors.New("kv: stop scan")

// Store is an ordered key-value store (see the package comment for the
// contract). All methods are safe for concurrent use.
type Store interface {
	// View runs fn in a read-only snapshot.
	View(ctx context.Context, fn func(Reader) error) error
	// Update runs fn in a read-write transaction and commits it. When the
	// commit conflicts with a concurrent transaction, fn runs again on a
	// fresh snapshot, so fn must not have side effects outside tx.
	Update(ctx context.Context, fn func(Txn) error) error
	// Batch applies blind writes without reading; it never conflicts and is
	// not atomic across ops (it may be split into several commits).
	Batch(ctx context.Context, ops []Op) error
	// DropPrefix deletes every key that starts with prefix, which must not
	// be empty.
	DropPrefix(ctx context.Context, prefix []byte) error
	// Close flushes and releases the store (for badger, its directory
	// lock). Later calls of any method return ErrClosed; Close itself
	// returns nil when called again.
	Close() error
}

// Watcher is a store that keeps local copies of chosen keys current, so a
// cache can check a generation token without reading the store: etcd
// watches them; badger, whose directory lock keeps every other writer out,
// re-reads the watched keys each of its own commits wrote.
type Watcher interface {
	// Watched returns key's value as this process last saw it. ok is
	// false while the key is not yet watched and synced (the first call
	// starts watching it) or after its watch broke; the caller then reads
	// the store. A missing key is (nil, true). A commit by this process
	// that wrote the key is seen by the next call. The value is shared:
	// the caller must not modify it.
	Watched(key []byte) (value []byte, ok bool)
}

// Reader reads a consistent snapshot.
type Reader interface {
	// Get returns a copy of the value at key, or ErrNotFound.
	Get(key []byte) ([]byte, error)
	// Scan calls fn for each key with the given prefix in key order (or in
	// reverse order with opts.Reverse). key and value are only valid during
	// the call. Returning ErrStop ends the scan without error.
	Scan(prefix []byte, opts ScanOptions, fn func(key, value []byte) error) error
}

// ScanOptions tune a Scan.
type ScanOptions struct {
	// Reverse scans from the last key of the prefix to the first.
	Reverse bool
	// KeysOnly skips reading values; fn then gets a nil value.
	KeysOnly bool
	// Start, when set, begins the scan at this key (which must carry the
	// prefix) instead of the prefix's first (or, reversed, last) key.
	Start []byte
	// Limit stops after this many keys; 0 means no limit.
	Limit int
}

// Txn is a read-write transaction.
type Txn interface {
	Reader
	// Set writes value at key. A TTL greater than zero makes the key expire.
	Set(key, value []byte, ttl time.Duration) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(key []byte) error
}

// Op is one blind write of a Batch: a Set (with optional TTL) or a Delete.
type Op struct {
	Key    []byte
	Value  []byte
	TTL    time.Duration
	Delete bool
}

// Get reads one key in its own snapshot.
func Get(ctx context.Context, s Store, key []byte) ([]byte, error) {
	var v []byte
	err := s.View(ctx, func(r Reader) error {
		var err error
		v, err = r.Get(key)
		return err
	})
	return v, err
}

// PrefixEnd returns the first key after every key with the given prefix, or
// nil when there is none (the prefix is all 0xff).
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
