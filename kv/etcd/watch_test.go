package etcd_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/etcd"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
)

// watchDeadline bounds how long a test waits for a watch to deliver; on a
// loaded 2-vCPU machine it takes milliseconds, the deadline is for safety.
const watchDeadline = 20 * time.Second

// waitWatched polls s.Watched(key) until cond holds, failing after
// watchDeadline; it returns how long that took.
func waitWatched(t *testing.T, s kv.Store, key string, what string, cond func(v []byte, ok bool) bool) time.Duration {
	t.Helper()
	w, isW := s.(kv.Watcher)
	if !isW {
		t.Fatalf("%T is not a kv.Watcher", s)
	}
	start := time.Now()
	for {
		v, ok := w.Watched([]byte(key))
		if cond(v, ok) {
			return time.Since(start)
		}
		if time.Since(start) > watchDeadline {
			t.Fatalf("%s: Watched(%q) = %q, %v after %v", what, key, v, ok, watchDeadline)
		}
		time.Sleep(time.Millisecond) // polling, not synchronisation: the deadline decides
	}
}

func is(want string) func([]byte, bool) bool {
	return func(v []byte, ok bool) bool { return ok && v != nil && string(v) == want }
}

func missing(v []byte, ok bool) bool { return ok && v == nil }

func set(t *testing.T, s kv.Store, key, value string) {
	t.Helper()
	if err := s.Update(context.Background(), func(tx kv.Txn) error { return tx.Set([]byte(key), []byte(value), 0) }); err != nil {
		t.Fatal(err)
	}
}

// This process's own commits (Update, Batch, DropPrefix) are seen by the
// next Watched, no wait; another client's once its event arrives.
func TestWatched(t *testing.T) {
	eps := etcdtest.Start(t)
	a := open(t, eps)
	b, err := etcd.Open(context.Background(), etcd.Options{Endpoints: eps})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	w := a.(kv.Watcher)
	ctx := context.Background()

	if _, ok := w.Watched([]byte("site/x/gen")); ok {
		t.Fatal("a key is synced before it was ever watched")
	}
	waitWatched(t, a, "site/x/gen", "a missing key", missing)

	set(t, a, "site/x/gen", "g1")
	if v, ok := w.Watched([]byte("site/x/gen")); !ok || string(v) != "g1" {
		t.Errorf("after own Update: %q %v, want g1 at once", v, ok)
	}
	if err := a.Batch(ctx, []kv.Op{{Key: []byte("site/x/gen"), Value: []byte("g2")}}); err != nil {
		t.Fatal(err)
	}
	if v, ok := w.Watched([]byte("site/x/gen")); !ok || string(v) != "g2" {
		t.Errorf("after own Batch: %q %v, want g2 at once", v, ok)
	}
	if err := a.DropPrefix(ctx, []byte("site/x/")); err != nil {
		t.Fatal(err)
	}
	if v, ok := w.Watched([]byte("site/x/gen")); !ok || v != nil {
		t.Errorf("after own DropPrefix: %q %v, want missing at once", v, ok)
	}

	set(t, b, "site/x/gen", "g3")
	lag := waitWatched(t, a, "site/x/gen", "another client's Update", is("g3"))
	t.Logf("another client's write seen after %v", lag)
	if err := b.DropPrefix(ctx, []byte("site/")); err != nil {
		t.Fatal(err)
	}
	waitWatched(t, a, "site/x/gen", "another client's DropPrefix", missing)

	// A value never goes back: an own write then the (older) events.
	set(t, b, "site/x/gen", "g4")
	set(t, a, "site/x/gen", "g5")
	for range 100 {
		if v, ok := w.Watched([]byte("site/x/gen")); !ok || string(v) != "g5" {
			t.Fatalf("after b's g4 then a's g5: %q %v", v, ok)
		}
	}
	a.Close()
	if _, ok := w.Watched([]byte("site/x/gen")); ok {
		t.Error("a closed store serves a copy")
	}
}

// A view is a Watcher exactly when its base is, and its Watched is the
// base's of the prefixed key.
func TestPrefixedWatched(t *testing.T) {
	base := open(t, etcdtest.Start(t))
	ns := kv.Prefixed(base, []byte("ns/a/"))
	waitWatched(t, ns, "gen", "a key in a view", missing)
	set(t, ns, "gen", "g1")
	if v, ok := ns.(kv.Watcher).Watched([]byte("gen")); !ok || string(v) != "g1" {
		t.Errorf("view after own write: %q %v", v, ok)
	}
	if v, ok := base.(kv.Watcher).Watched([]byte("ns/a/gen")); !ok || string(v) != "g1" {
		t.Errorf("base: %q %v", v, ok)
	}
	if _, ok := kv.Prefixed(struct{ kv.Store }{base}, []byte("ns/")).(kv.Watcher); ok {
		t.Error("a view over a store that does not watch is a Watcher")
	}
	ns.Close()
	if _, ok := ns.(kv.Watcher).Watched([]byte("gen")); ok {
		t.Error("a closed view serves a copy")
	}
}

// Past MaxWatched keys the least recently used one is no longer watched.
func TestWatchedEvicts(t *testing.T) {
	eps := etcdtest.Start(t)
	etcdtest.Wipe(t, eps)
	s, err := etcd.Open(context.Background(), etcd.Options{Endpoints: eps, MaxWatched: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waitWatched(t, s, "k1", "k1", missing)
	waitWatched(t, s, "k2", "k2", missing)
	waitWatched(t, s, "k3", "k3", missing)
	if _, ok := s.(kv.Watcher).Watched([]byte("k1")); ok {
		t.Error("k1 is still watched after k2 and k3 with MaxWatched 2")
	}
	if _, ok := s.(kv.Watcher).Watched([]byte("k3")); !ok {
		t.Error("k3 is no longer watched")
	}
}

// A lost connection unsyncs every key (ok false, the caller reads the
// store) until it is back; a write made meanwhile by another client is
// then seen.
func TestWatchedConnectionLost(t *testing.T) {
	eps := etcdtest.Start(t)
	etcdtest.Wipe(t, eps)
	p := newProxy(t, strings.TrimPrefix(eps[0], "http://"))
	s, err := etcd.Open(context.Background(), etcd.Options{Endpoints: []string{"http://" + p.addr()}, DialTimeout: 2 * time.Second, RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other := open(t, eps)
	set(t, other, "gen", "g1")
	waitWatched(t, s, "gen", "before the cut", is("g1"))

	p.cut()
	lag := waitWatched(t, s, "gen", "connection lost", func(_ []byte, ok bool) bool { return !ok })
	t.Logf("unsynced %v after the connection was cut", lag)
	set(t, other, "gen", "g2")
	for range 20 {
		if v, ok := s.(kv.Watcher).Watched([]byte("gen")); ok {
			t.Fatalf("synced while the connection is down: %q", v)
		}
	}

	p.restore()
	lag = waitWatched(t, s, "gen", "connection back", is("g2"))
	t.Logf("synced again, with the write made meanwhile, %v after the connection came back", lag)
}

// proxy forwards TCP connections to target until cut, then refuses them
// until restored: a lost connection as the client sees it.
type proxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, target: target}
	t.Cleanup(func() { l.Close(); p.cut() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.down {
				p.mu.Unlock()
				c.Close()
				continue
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				p.mu.Unlock()
				c.Close()
				continue
			}
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close(); c.Close() }()
			go func() { io.Copy(c, u); u.Close(); c.Close() }()
		}
	}()
	return p
}

func (p *proxy) addr() string { return p.l.Addr().String() }

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// BenchmarkWatched: one synced Watched call, what a warm cache pays on
// etcd instead of a View's round trip.
func BenchmarkWatched(b *testing.B) {
	s := open(b, etcdtest.Start(b))
	if err := s.Update(context.Background(), func(tx kv.Txn) error { return tx.Set([]byte("gen"), []byte("g1"), 0) }); err != nil {
		b.Fatal(err)
	}
	w := s.(kv.Watcher)
	for start := time.Now(); ; time.Sleep(time.Millisecond) { // polling; the deadline decides
		if _, ok := w.Watched([]byte("gen")); ok {
			break
		}
		if time.Since(start) > watchDeadline {
			b.Fatal("not synced")
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, ok := w.Watched([]byte("gen")); !ok {
			b.Fatal("unsynced")
		}
	}
}

// A stopped member unsyncs every key; restarted on its data, the keys
// resync, with a write made while the client was away from it.
func TestWatchedMemberRestart(t *testing.T) {
	dir := t.TempDir()
	cport, pport := freePort(t), freePort(t)
	m := startMember(t, dir, cport, pport)
	eps := []string{fmt.Sprintf("http://127.0.0.1:%d", cport)}
	s := open(t, eps)
	set(t, s, "gen", "g1")
	waitWatched(t, s, "gen", "before the stop", is("g1"))

	m.Close()
	lag := waitWatched(t, s, "gen", "member stopped", func(_ []byte, ok bool) bool { return !ok })
	t.Logf("unsynced %v after the member stopped", lag)

	m = startMember(t, dir, cport, pport)
	defer m.Close()
	other, err := etcd.Open(context.Background(), etcd.Options{Endpoints: eps})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	set(t, other, "gen", "g2") // another client writes first
	lag = waitWatched(t, s, "gen", "member restarted", is("g2"))
	t.Logf("synced again %v after the restart", lag)
}

// startMember starts a single-member etcd keeping its data in dir.
func startMember(t *testing.T, dir string, cport, pport int) *embed.Etcd {
	t.Helper()
	curl, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", cport))
	purl, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", pport))
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = "m0", dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*curl}, []url.URL{*curl}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*purl}, []url.URL{*purl}
	cfg.InitialCluster = "m0=" + purl.String()
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		t.Fatal(err)
	case <-time.After(60 * time.Second):
		t.Fatal("etcd not ready after 60 s")
	}
	return e
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
