package etcd

import (
	"bytes"
	"container/list"
	"context"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/connectivity"
)

// DefaultMaxWatched is how many keys a store watches at most when
// Options.MaxWatched is zero: generation tokens are a few per site, and an
// agent visits far fewer sites than this at a time.
const DefaultMaxWatched = 4096

// watches keeps local copies of the keys Watched was asked for (kv.Watcher).
// Each key has its own etcd watch, started lazily from the revision after
// an initial linearizable Get, so no commit between the two is missed; the
// client multiplexes them on one gRPC stream (they share one context's
// metadata). A copy is served only while its watch is established and the
// connection is up: a watch that errs (compaction, no leader, cancelled)
// drops its key, and the connection leaving Ready drops them all; the next
// Watched starts again.
type watches struct {
	s      *store
	ctx    context.Context // WithRequireLeader; cancelled by Close
	cancel context.CancelFunc
	max    int
	start  sync.Once // the connection monitor

	mu  sync.Mutex
	m   map[string]*watched
	lru list.List // of *watched, most recently used first
}

// watched is one key's copy.
type watched struct {
	key    string
	elem   *list.Element
	value  []byte
	exists bool
	rev    int64 // the revision the copy is known at
	synced bool  // the watch is established: the copy follows every commit
	cancel context.CancelFunc
}

func newWatches(s *store, max int) *watches {
	if max <= 0 {
		max = DefaultMaxWatched
	}
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(context.Background()))
	return &watches{s: s, ctx: ctx, cancel: cancel, max: max, m: map[string]*watched{}}
}

// Watched implements kv.Watcher.
func (s *store) Watched(key []byte) ([]byte, bool) {
	if s.isClosed.Load() {
		return nil, false
	}
	return s.watch.get(key)
}

func (ws *watches) get(key []byte) ([]byte, bool) {
	ws.start.Do(func() { go ws.monitor() })
	up := ws.s.cli.ActiveConnection().GetState() == connectivity.Ready
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w := ws.m[string(key)]
	if w == nil {
		ws.add(string(key))
		return nil, false
	}
	ws.lru.MoveToFront(w.elem)
	if !w.synced || !up {
		return nil, false
	}
	if !w.exists {
		return nil, true
	}
	return w.value, true
}

// add starts watching key, evicting the least recently used key past max.
// ws.mu is held.
func (ws *watches) add(key string) {
	ctx, cancel := context.WithCancel(ws.ctx)
	w := &watched{key: key, cancel: cancel}
	w.elem = ws.lru.PushFront(w)
	ws.m[key] = w
	for ws.lru.Len() > ws.max {
		ws.remove(ws.lru.Back().Value.(*watched))
	}
	go ws.run(ctx, w)
}

// remove forgets w and cancels its watch. ws.mu is held.
func (ws *watches) remove(w *watched) {
	if ws.m[w.key] == w {
		delete(ws.m, w.key)
		ws.lru.Remove(w.elem)
	}
	w.cancel()
}

func (ws *watches) drop(w *watched) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.remove(w)
}

// run reads w's key, watches it from the next revision and applies its
// events until the watch ends, then drops w.
func (ws *watches) run(ctx context.Context, w *watched) {
	defer ws.drop(w)
	gctx, cancel := context.WithTimeout(ctx, ws.s.opts.RequestTimeout)
	resp, err := ws.s.cli.Get(gctx, w.key)
	cancel()
	if err != nil {
		return
	}
	if len(resp.Kvs) > 0 {
		ws.set(w, resp.Header.Revision, resp.Kvs[0].Value, true)
	} else {
		ws.set(w, resp.Header.Revision, nil, false)
	}
	for wr := range ws.s.cli.Watch(ctx, w.key, clientv3.WithRev(resp.Header.Revision+1), clientv3.WithCreatedNotify()) {
		if wr.Canceled || wr.Err() != nil {
			return
		}
		if wr.Created {
			ws.mu.Lock()
			if ws.m[w.key] == w {
				w.synced = true
			}
			ws.mu.Unlock()
			continue
		}
		for _, ev := range wr.Events {
			ws.set(w, ev.Kv.ModRevision, ev.Kv.Value, ev.Type == clientv3.EventTypePut)
		}
	}
}

// set makes value w's copy as of revision rev, unless the copy is known at
// a later one already (a copy never goes back).
func (ws *watches) set(w *watched, rev int64, value []byte, exists bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	setLocked(w, rev, value, exists)
}

func setLocked(w *watched, rev int64, value []byte, exists bool) {
	if rev <= w.rev {
		return
	}
	w.rev, w.exists = rev, exists
	w.value = nil
	if exists {
		w.value = bytes.Clone(value)
	}
}

// committed updates the copies of watched keys that this process's commit
// at revision rev wrote, so its next Watched sees them.
func (ws *watches) committed(rev int64, writes []write) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if len(ws.m) == 0 {
		return
	}
	for _, wr := range writes {
		if w := ws.m[string(wr.key)]; w != nil {
			setLocked(w, rev, wr.value, !wr.delete)
		}
	}
}

// dropped marks every watched key under prefix missing as of revision rev.
func (ws *watches) dropped(rev int64, prefix []byte) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for k, w := range ws.m {
		if strings.HasPrefix(k, string(prefix)) {
			setLocked(w, rev, nil, false)
		}
	}
}

// reset drops every key: their watches may have missed events.
func (ws *watches) reset() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, w := range ws.m {
		w.cancel()
	}
	clear(ws.m)
	ws.lru.Init()
}

// monitor drops every copy whenever the client's connection leaves Ready
// (a member stopped, a connection reset, or keepalive declaring a silent
// partition): the client resumes a broken watch stream by itself, and the
// copies would be stale, unannounced, meanwhile. Close ends it.
func (ws *watches) monitor() {
	conn := ws.s.cli.ActiveConnection()
	for {
		st := conn.GetState()
		if st != connectivity.Ready {
			ws.reset()
		}
		if !conn.WaitForStateChange(ws.ctx, st) {
			return
		}
		if st == connectivity.Ready {
			ws.reset()
		}
	}
}

// close stops every watch and the monitor.
func (ws *watches) close() {
	ws.cancel()
	ws.reset()
}
