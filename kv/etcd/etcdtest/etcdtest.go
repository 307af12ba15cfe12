// Package etcdtest runs a real, single-member etcd server inside a test
// process (go.etcd.io/etcd/server/v3/embed) on loopback, with free ports and
// a temp dir, stopped when the test ends. Only test code imports it: the
// engine's binaries do not link etcd's server.
package etcdtest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Server is a running single-member etcd.
type Server struct {
	// Endpoints are the client URLs (http://127.0.0.1:PORT).
	Endpoints []string
	e         *embed.Etcd
	stopped   bool
}

// Start runs an etcd server for tb and returns its client endpoints.
func Start(tb testing.TB) []string {
	tb.Helper()
	return StartServer(tb).Endpoints
}

// StartServer runs an etcd server for tb, stopped at cleanup (or by Stop).
func StartServer(tb testing.TB) *Server {
	tb.Helper()
	s, err := New(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// New runs an etcd server keeping its data in dir; the caller stops it
// (for harnesses without a testing.TB, such as testscript's Setup).
func New(dir string) (*Server, error) {
	var lastErr error
	for i := range 5 { // a free port can be taken between the pick and the listen
		s, err := start(fmt.Sprintf("%s/etcd%d", dir, i))
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("etcdtest: start etcd: %w", lastErr)
}

func start(dir string) (*Server, error) {
	c, err := startCluster(dir, 1)
	if err != nil {
		return nil, err
	}
	return &Server{Endpoints: c.Endpoints, e: c.members[0]}, nil
}

// Cluster is a running etcd cluster of several members on loopback.
type Cluster struct {
	// Endpoints are every member's client URL.
	Endpoints []string
	members   []*embed.Etcd
	stopped   map[int]bool
}

// StartCluster runs an n-member etcd cluster for tb, stopped at cleanup.
func StartCluster(tb testing.TB, n int) *Cluster {
	tb.Helper()
	var c *Cluster
	var err error
	for i := range 5 { // a free port can be taken between the pick and the listen
		if c, err = startCluster(fmt.Sprintf("%s/try%d", tb.TempDir(), i), n); err == nil {
			tb.Cleanup(c.Stop)
			return c
		}
	}
	tb.Fatalf("etcdtest: start a cluster of %d: %v", n, err)
	return nil
}

// StopLeader stops the member that leads the cluster now and returns its
// index in Endpoints.
func (c *Cluster) StopLeader() (int, error) {
	for i, e := range c.members {
		if !c.stopped[i] && e.Server.Leader() == e.Server.MemberID() {
			c.stopped[i] = true
			e.Close()
			return i, nil
		}
	}
	return -1, fmt.Errorf("etcdtest: no member leads")
}

// Stop stops every member (again for one already stopped: harmless).
func (c *Cluster) Stop() {
	for i, e := range c.members {
		if !c.stopped[i] {
			c.stopped[i] = true
			e.Close()
		}
	}
}

func startCluster(dir string, n int) (*Cluster, error) {
	var cfgs []*embed.Config
	var initial []string
	c := &Cluster{stopped: map[int]bool{}}
	for i := range n {
		cport, err := freePort()
		if err != nil {
			return nil, err
		}
		pport, err := freePort()
		if err != nil {
			return nil, err
		}
		curl, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", cport))
		purl, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", pport))
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("m%d", i)
		cfg.Dir = fmt.Sprintf("%s/m%d", dir, i)
		cfg.ListenClientUrls = []url.URL{*curl}
		cfg.AdvertiseClientUrls = []url.URL{*curl}
		cfg.ListenPeerUrls = []url.URL{*purl}
		cfg.AdvertisePeerUrls = []url.URL{*purl}
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		cfg.UnsafeNoFsync = true // a test's data need not survive a power cut
		cfgs = append(cfgs, cfg)
		initial = append(initial, cfg.Name+"="+purl.String())
		c.Endpoints = append(c.Endpoints, curl.String())
	}
	for _, cfg := range cfgs {
		cfg.InitialCluster = strings.Join(initial, ",")
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.members = append(c.members, e)
	}
	for _, e := range c.members {
		select {
		case <-e.Server.ReadyNotify():
		case err := <-e.Err():
			c.Stop()
			return nil, err
		case <-time.After(60 * time.Second):
			c.Stop()
			return nil, fmt.Errorf("etcd in %s not ready after 60 s", dir)
		}
	}
	return c, nil
}

// Stop stops the server (a partition, as its clients see it); stopping
// twice is harmless.
func (s *Server) Stop() {
	if !s.stopped {
		s.stopped = true
		s.e.Close()
	}
}

// Wipe deletes every key on the server at endpoints.
func Wipe(tb testing.TB, endpoints []string) {
	tb.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		tb.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cli.Delete(ctx, "\x00", clientv3.WithFromKey()); err != nil {
		tb.Fatalf("etcdtest: wipe: %v", err)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
