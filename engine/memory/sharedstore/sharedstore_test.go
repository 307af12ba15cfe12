package sharedstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/sharedstore"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
)

// A URL or certificate setting the opener cannot use is bad input; the
// settings come from the getenv it is given.
func TestOpenerRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{}
	open := sharedstore.Opener(func(k string) string { return env[k] })
	for _, u := range []string{"http://127.0.0.1:2379", "etcd://", "etcd://host/path"} {
		if _, err := open(ctx, u); !engine.IsInvalid(err) {
			t.Errorf("open %q: %v, want bad input", u, err)
		}
	}
	env["ENGINE_ETCD_CA"] = "ca.pem"
	if _, err := open(ctx, "etcd://127.0.0.1:2379"); !engine.IsInvalid(err) || !strings.Contains(err.Error(), "etcds://") {
		t.Errorf("a CA for a plain etcd:// store: %v, want bad input", err)
	}
}

// The store at an etcd:// URL opens and holds what is written to it.
func TestOpenerOpensEtcd(t *testing.T) {
	ctx := context.Background()
	eps := etcdtest.Start(t)
	open := sharedstore.Opener(func(string) string { return "" })
	s, err := open(ctx, "etcd://"+strings.TrimPrefix(eps[0], "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Update(ctx, func(tx kv.Txn) error { return tx.Set([]byte("k"), []byte("v"), 0) }); err != nil {
		t.Fatal(err)
	}
	if v, err := kv.Get(ctx, s, []byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("read back %q, %v", v, err)
	}
}
