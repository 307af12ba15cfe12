package badger

import (
	"container/list"
	"errors"
	"strings"
	"sync"
	"time"

	badgerdb "github.com/dgraph-io/badger/v4"
)

// DefaultMaxWatched is how many keys a store keeps copies of at most
// (generation tokens: a few per site). A copy costs about 100 bytes and
// no watch, so it is sized for the recall index caches' sites, not for
// what an agent visits at a time.
const DefaultMaxWatched = 1 << 16

// watches keeps in-process copies of the keys Watched was asked for
// (kv.Watcher). The directory lock keeps every other writer out, so every
// commit of the store goes through this process's Update, Batch and
// DropPrefix, which re-read the watched keys they wrote once committed:
// a copy follows every commit with no watch stream at all. A copy is
// ordered by badger's commit version, so two commits whose re-reads finish
// out of order never take a key back. A read-only open has no writers,
// and its copies never change.
type watches struct {
	db  *badgerdb.DB
	max int

	mu  sync.Mutex
	m   map[string]*watched
	lru list.List // of *watched, most recently used first
}

// watched is one key's copy.
type watched struct {
	key     string
	elem    *list.Element
	value   []byte
	exists  bool
	expires uint64 // unix seconds, 0 for none: missing from then on, as badger reads it
	version uint64 // the commit version of value, or the read version it was found missing at
	synced  bool   // read once since added
}

func newWatches(db *badgerdb.DB, max int) *watches {
	if max <= 0 {
		max = DefaultMaxWatched
	}
	return &watches{db: db, max: max, m: map[string]*watched{}}
}

// Watched implements kv.Watcher: key's value as of this process's last
// commit that wrote it. The first call for a key reads it (a local read,
// so it answers at once); later calls read nothing. A key past its TTL is
// missing, as badger's own reads treat it.
func (s *store) Watched(key []byte) ([]byte, bool) {
	if s.isClosed.Load() {
		return nil, false
	}
	ws := s.watch
	ws.mu.Lock()
	w := ws.m[string(key)]
	if w != nil && w.synced {
		ws.lru.MoveToFront(w.elem)
		v, ok := w.get()
		ws.mu.Unlock()
		return v, ok
	}
	if w == nil {
		// Added before it is read: a commit that writes the key after
		// this point re-reads it, and one committed before is seen by
		// the read below.
		w = &watched{key: string(key)}
		w.elem = ws.lru.PushFront(w)
		ws.m[w.key] = w
		for ws.lru.Len() > ws.max {
			old := ws.lru.Back().Value.(*watched)
			delete(ws.m, old.key)
			ws.lru.Remove(old.elem)
		}
	}
	ws.mu.Unlock()
	if err := ws.refresh([]*watched{w}); err != nil {
		return nil, false
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.m[w.key] != w || !w.synced {
		return nil, false
	}
	return w.get()
}

// get is w's value now; ws.mu is held.
func (w *watched) get() ([]byte, bool) {
	if !w.exists || (w.expires != 0 && uint64(time.Now().Unix()) >= w.expires) {
		return nil, true
	}
	return w.value, true
}

// refresh re-reads ws's copies of ws in one snapshot, each taken only when
// newer than the copy.
func (ws *watches) refresh(list []*watched) error {
	return ws.db.View(func(bt *badgerdb.Txn) error {
		for _, w := range list {
			item, err := bt.Get([]byte(w.key))
			var value []byte
			var expires, version uint64
			exists := err == nil
			switch {
			case exists:
				version, expires = item.Version(), item.ExpiresAt()
				if value, err = item.ValueCopy(nil); err != nil {
					return err
				}
			case errors.Is(err, badgerdb.ErrKeyNotFound):
				// Missing as of the snapshot: no live version at or
				// before its read version.
				version = bt.ReadTs()
			default:
				return err
			}
			ws.mu.Lock()
			// A missing read at the version of the copy's value means
			// the value was dropped (DropPrefix leaves no tombstone).
			if version > w.version || (!exists && version == w.version) || !w.synced {
				w.value, w.exists, w.expires, w.version = value, exists, expires, version
			}
			w.synced = true
			ws.mu.Unlock()
		}
		return nil
	})
}

// committed re-reads the watched keys among keys, which a commit of this
// process wrote; the next Watched sees them. A failed re-read drops the
// copies, so they are read afresh.
func (ws *watches) committed(keys [][]byte) {
	ws.mu.Lock()
	if len(ws.m) == 0 {
		ws.mu.Unlock()
		return
	}
	var hit []*watched
	for _, k := range keys {
		if w := ws.m[string(k)]; w != nil && !containsWatched(hit, w) {
			hit = append(hit, w)
		}
	}
	ws.mu.Unlock()
	ws.reread(hit)
}

// any reports whether any key is watched.
func (ws *watches) any() bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return len(ws.m) > 0
}

// dropped re-reads every watched key under prefix, after a DropPrefix.
func (ws *watches) dropped(prefix []byte) {
	ws.mu.Lock()
	var hit []*watched
	for k, w := range ws.m {
		if strings.HasPrefix(k, string(prefix)) {
			hit = append(hit, w)
		}
	}
	ws.mu.Unlock()
	ws.reread(hit)
}

func (ws *watches) reread(hit []*watched) {
	if len(hit) == 0 {
		return
	}
	if err := ws.refresh(hit); err != nil {
		ws.mu.Lock()
		for _, w := range hit {
			if ws.m[w.key] == w {
				delete(ws.m, w.key)
				ws.lru.Remove(w.elem)
			}
		}
		ws.mu.Unlock()
	}
}

func containsWatched(ws []*watched, w *watched) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}
