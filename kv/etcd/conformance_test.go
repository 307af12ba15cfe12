package etcd_test

import (
	"context"
	"testing"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/etcd"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// open connects a store to endpoints after emptying the server, closed
// when t ends.
func open(t testing.TB, endpoints []string) kv.Store {
	t.Helper()
	etcdtest.Wipe(t, endpoints)
	s, err := etcd.Open(context.Background(), etcd.Options{Endpoints: endpoints})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The etcd store honours kv's whole contract, on one real server shared by
// the clauses (each starts from an empty server).
func TestConformance(t *testing.T) {
	eps := etcdtest.Start(t)
	kvtest.Run(t, func(t *testing.T) kv.Store { return open(t, eps) })
}
