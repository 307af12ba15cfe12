package token_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/token"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
	"github.com/engine-dev/engine/kv/etcd"
	"github.com/engine-dev/engine/kv/etcd/etcdtest"
)

// The same behaviour on badger and on etcd: a token is stored as its
// hash alone, resolves to its scope until it expires or is revoked, and
// bad specs are bad input.
func TestTokens(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) kv.Store{
		"badger": func(t *testing.T) kv.Store { return badgertest.Open(t) },
		"etcd": func(t *testing.T) kv.Store {
			db, err := etcd.Open(context.Background(), etcd.Options{Endpoints: etcdtest.Start(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
	} {
		t.Run(name, func(t *testing.T) { testTokens(t, open(t)) })
	}
}

func testTokens(t *testing.T, db kv.Store) {
	ctx := context.Background()
	now := time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)
	s := token.New(db, func() time.Time { return now })
	exp := now.Add(time.Hour)
	a, secretA, err := s.Create(ctx, token.Spec{Namespace: "a", Role: token.Read, Name: "reader", ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	all, secretAll, err := s.Create(ctx, token.Spec{Namespace: token.AllNamespaces, Role: token.Admin})
	if err != nil {
		t.Fatal(err)
	}
	if len(secretA) != 64 || secretA == secretAll || a.ID == all.ID {
		t.Fatalf("secrets %q %q, ids %s %s", secretA, secretAll, a.ID, all.ID)
	}

	// The store holds the hash, never the token.
	sum := sha256.Sum256([]byte(secretA))
	var held string
	db.View(ctx, func(r kv.Reader) error {
		return r.Scan([]byte("token/"), kv.ScanOptions{}, func(k, v []byte) error {
			held += string(k) + "=" + string(v) + "\n"
			return nil
		})
	})
	if strings.Contains(held, secretA) || strings.Contains(held, secretAll) || !strings.Contains(held, hex.EncodeToString(sum[:])) {
		t.Fatalf("stored tokens:\n%s", held)
	}

	got, ok, err := s.Resolve(ctx, secretA)
	if err != nil || !ok || got.ID != a.ID || got.Namespace != "a" || got.Role != token.Read || !got.Opens("a") || got.Opens("b") {
		t.Fatalf("resolve a: %+v, %v, %v", got, ok, err)
	}
	if got, ok, _ := s.Resolve(ctx, secretAll); !ok || !got.All() || !got.Opens("b") || !got.Role.Allows(token.Admin) {
		t.Fatalf("resolve all: %+v, %v", got, ok)
	}
	for _, wrong := range []string{"", secretA[:63], secretA + "0", strings.ToUpper(secretA)} {
		if _, ok, err := s.Resolve(ctx, wrong); ok || err != nil {
			t.Errorf("resolve %q: %v, %v", wrong, ok, err)
		}
	}

	ls, err := s.List(ctx)
	if err != nil || len(ls) != 2 {
		t.Fatalf("list: %+v, %v", ls, err)
	}
	if ls[0].ID != a.ID {
		ls[0], ls[1] = ls[1], ls[0] // made in the same second: in id order
	}
	if ls[0].Name != "reader" || ls[0].ExpiresAt == nil || !ls[0].ExpiresAt.Equal(exp) || ls[1].ExpiresAt != nil {
		t.Fatalf("list: %+v", ls)
	}

	// Expired: refused, still listed.
	now = exp
	if _, ok, _ := s.Resolve(ctx, secretA); ok {
		t.Error("an expired token resolved")
	}
	now = exp.Add(-time.Hour)

	// Revoked: refused, gone from the list; a second revoke is not found.
	if err := s.Revoke(ctx, all.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Resolve(ctx, secretAll); ok {
		t.Error("a revoked token resolved")
	}
	if err := s.Revoke(ctx, all.ID); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("revoke again: %v", err)
	}
	if ls, _ := s.List(ctx); len(ls) != 1 {
		t.Errorf("list after revoke: %+v", ls)
	}

	past := now.Add(-time.Second)
	for _, bad := range []token.Spec{
		{Namespace: "a", Role: "owner"},
		{Namespace: "", Role: token.Read},
		{Namespace: "a", Role: token.Read, Name: "a\nb"},
		{Namespace: "a", Role: token.Read, Name: strings.Repeat("x", token.MaxName+1)},
		{Namespace: "a", Role: token.Read, ExpiresAt: &past},
	} {
		if _, _, err := s.Create(ctx, bad); !engine.IsInvalid(err) {
			t.Errorf("create %+v: %v", bad, err)
		}
	}
}

func TestRoles(t *testing.T) {
	for _, c := range []struct {
		have, need token.Role
		ok         bool
	}{
		{token.Read, token.Read, true}, {token.Read, token.Write, false}, {token.Read, token.Admin, false},
		{token.Write, token.Read, true}, {token.Write, token.Write, true}, {token.Write, token.Admin, false},
		{token.Admin, token.Admin, true}, {"", token.Read, false}, {token.Admin, "", false},
	} {
		if got := c.have.Allows(c.need); got != c.ok {
			t.Errorf("%q allows %q = %v", c.have, c.need, got)
		}
	}
}

// A store whose token records were written before the hash index (the
// record alone at token/<id>) still resolves them: the first Resolve
// indexes every record. Revoking one through another Store over the same
// data refuses it at once.
func TestResolveRecordsWrittenBeforeTheIndex(t *testing.T) {
	ctx := context.Background()
	db := badgertest.Open(t)
	secrets := map[string]string{} // id → secret
	err := db.Update(ctx, func(tx kv.Txn) error {
		for i := range 3 {
			id, secret := fmt.Sprintf("t%012x", i), strings.Repeat(fmt.Sprint(i), 64)
			sum := sha256.Sum256([]byte(secret))
			v := fmt.Sprintf(`{"id":%q,"namespace":"a","role":"write","name":"old %d","created_at":"2026-03-01T00:00:00Z","expires_at":null,"hash":%q}`,
				id, i, hex.EncodeToString(sum[:]))
			secrets[id] = secret
			if err := tx.Set([]byte("token/"+id), []byte(v), 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := token.New(db, nil)
	for id, secret := range secrets {
		got, ok, err := s.Resolve(ctx, secret)
		if err != nil || !ok || got.ID != id || got.Role != token.Write || !got.Opens("a") {
			t.Fatalf("resolve the old token %s: %+v, %v, %v", id, got, ok, err)
		}
	}
	if _, ok, err := s.Resolve(ctx, strings.Repeat("9", 64)); ok || err != nil {
		t.Errorf("an unknown secret: %v, %v", ok, err)
	}
	if ls, err := s.List(ctx); err != nil || len(ls) != 3 {
		t.Errorf("list: %+v, %v", ls, err)
	}

	// Another Store (another request's, another process's) sees the
	// index, and a revoke through it is refused here at once.
	other := token.New(db, nil)
	if err := other.Revoke(ctx, "t000000000001"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Resolve(ctx, secrets["t000000000001"]); ok || err != nil {
		t.Errorf("a token revoked elsewhere resolved: %v, %v", ok, err)
	}
	if _, ok, _ := other.Resolve(ctx, secrets["t000000000000"]); !ok {
		t.Error("a token indexed by another Store did not resolve")
	}
	// A token created now resolves through both.
	_, secret, err := other.Create(ctx, token.Spec{Namespace: "b", Role: token.Read})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := s.Resolve(ctx, secret); !ok || got.Namespace != "b" {
		t.Errorf("a new token: %+v, %v", got, ok)
	}
}

// A record whose hash key names it but whose stored hash is another's
// (a damaged or hand-edited store) does not resolve: the record found is
// checked against the secret.
func TestResolveChecksTheRecordFound(t *testing.T) {
	ctx := context.Background()
	db := badgertest.Open(t)
	s := token.New(db, nil)
	a, _, err := s.Create(ctx, token.Spec{Namespace: "a", Role: token.Admin})
	if err != nil {
		t.Fatal(err)
	}
	guess := strings.Repeat("ab", 32)
	sum := sha256.Sum256([]byte(guess))
	if err := db.Update(ctx, func(tx kv.Txn) error {
		return tx.Set([]byte("token-hash/"+hex.EncodeToString(sum[:])), []byte(a.ID), 0)
	}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Resolve(ctx, guess); ok || err != nil {
		t.Errorf("a hash key pointing at another token's record resolved: %v, %v", ok, err)
	}
}

// Resolving a token among n on badger: what a request carrying a scoped
// token pays before its handler runs (one hash key and one record read).
func BenchmarkResolve(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ctx := context.Background()
			s := token.New(badgertest.Open(b), nil)
			var secret string
			for range n {
				_, sec, err := s.Create(ctx, token.Spec{Namespace: "a", Role: token.Read})
				if err != nil {
					b.Fatal(err)
				}
				secret = sec
			}
			b.ResetTimer()
			for range b.N {
				if _, ok, err := s.Resolve(ctx, secret); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
