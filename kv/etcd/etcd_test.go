package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/etcd"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
	"github.com/engine-dev/engine/kv/kvtest"
)

// The store says its operation limit (kv.Limits), so kv.Apply of more ops
// than one etcd transaction takes goes through the journal and lands whole,
// with no journal left behind.
func TestApplyPastTheOpLimit(t *testing.T) {
	s := open(t, etcdtest.Start(t))
	if l, ok := s.(kv.Limits); !ok || l.MaxTxnOps() != 128 {
		t.Fatalf("kv.Limits: %v", ok)
	}
	var ops []kv.Op
	for i := range 300 {
		ops = append(ops, kv.Op{Key: fmt.Appendf(nil, "a/%03d", i), Value: []byte("v")})
	}
	if err := kv.Apply(context.Background(), s, ops, kv.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	dump := kvtest.Dump(t, s)
	if len(dump) != 300 {
		t.Errorf("%d keys after the Apply, want 300 (journal left: %v)", len(dump), dump["kv/journal/active"])
	}
}

// An Update that read more keys than etcd compares in one transaction
// fails with kv.ErrTooBig and an error naming the limit; nothing lands.
func TestUpdateReadingTooManyKeys(t *testing.T) {
	s := open(t, etcdtest.Start(t))
	ctx := context.Background()
	var ops []kv.Op
	for i := range 200 {
		ops = append(ops, kv.Op{Key: fmt.Appendf(nil, "r/%03d", i), Value: []byte("v")})
	}
	if err := s.Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	err := s.Update(ctx, func(tx kv.Txn) error {
		if err := tx.Scan([]byte("r/"), kv.ScanOptions{}, func(_, _ []byte) error { return nil }); err != nil {
			return err
		}
		return tx.Set([]byte("out"), []byte("x"), 0)
	})
	if !errors.Is(err, kv.ErrTooBig) || !strings.Contains(err.Error(), "limit of 128 compares") {
		t.Fatalf("Update reading 200 keys: %v", err)
	}
	if _, err := kv.Get(ctx, s, []byte("out")); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("the refused Update wrote: %v", err)
	}
}

func TestParseURL(t *testing.T) {
	o, err := etcd.ParseURL("etcd://a:1,127.0.0.1:2379")
	if err != nil || strings.Join(o.Endpoints, " ") != "http://a:1 http://127.0.0.1:2379" || o.TLS != nil {
		t.Errorf("etcd://: %+v, %v", o, err)
	}
	if o, err := etcd.ParseURL("etcds://h:2379/"); err != nil || o.Endpoints[0] != "https://h:2379" || o.TLS == nil {
		t.Errorf("etcds://: %+v, %v", o, err)
	}
	for _, bad := range []string{"", "h:2379", "badger:///x", "etcd://", "etcd://h", "etcd://u:p@h:1", "etcd://h:1,,h:2"} {
		if _, err := etcd.ParseURL(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A journal on etcd, a shared store, is never an image journal (its
// rollback would undo other processes' writes): it saves each key before
// its Write, even on a store that holds next to nothing.
func TestJournalOnEtcdIsPerKey(t *testing.T) {
	ctx := context.Background()
	s := open(t, etcdtest.Start(t))
	j, err := kv.Begin(ctx, s, kv.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Image() {
		t.Fatal("an image journal on etcd")
	}
	if err := j.Write(ctx, []kv.Op{{Key: []byte("a"), Value: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	if err := j.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if d := kvtest.Dump(t, s); len(d) != 0 {
		t.Fatalf("after the rollback: %v", d)
	}
}
