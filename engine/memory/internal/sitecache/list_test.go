package sitecache

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

type thing struct {
	Domain string
	N      int
}

func thingKind() *Kind[thing] {
	return &Kind[thing]{
		Cache:  New[[]thing](4),
		Gen:    func(site string) []byte { return []byte("site/" + site + "/thing-gen") },
		Prefix: func(site string) []byte { return []byte("site/" + site + "/thing/") },
		Is:     func(k []byte) bool { return strings.Contains(string(k), "/thing/") },
		Domain: func(t *thing) string { return t.Domain },
		Pos:    func(t *thing) string { return fmt.Sprintf("%03d", t.N) },
	}
}

// List gives one site's records that match the host, or every site's, in
// Pos order; a site's records are cached at its generation.
func TestKindList(t *testing.T) {
	ctx := context.Background()
	db := badgertest.OpenMemory(t)
	k := thingKind()
	put := func(site string, ts ...thing) {
		err := db.Update(ctx, func(tx kv.Txn) error {
			for _, th := range ts {
				b, _ := json.Marshal(th)
				if err := tx.Set([]byte(fmt.Sprintf("site/%s/thing/%d", site, th.N)), b, 0); err != nil {
					return err
				}
			}
			return tx.Set(k.Gen(site), []byte(Gen()), 0)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	put("a.example", thing{"a.example", 3}, thing{"sub.a.example", 1}, thing{"a.example", 2})
	put("b.example", thing{"b.example", 0})
	exact := func(h, r string) bool { return h == r }

	got, err := k.List(ctx, db, "a.example", exact)
	if want := []thing{{"a.example", 2}, {"a.example", 3}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("List(a.example) = %v, %v; want %v", got, err, want)
	}
	if !k.Cache.Has("a.example") {
		t.Error("the site read was not cached")
	}
	got, err = k.List(ctx, db, "", exact)
	if want := []thing{{"b.example", 0}, {"sub.a.example", 1}, {"a.example", 2}, {"a.example", 3}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("List(\"\") = %v, %v; want %v", got, err, want)
	}

	if err := db.Update(ctx, func(tx kv.Txn) error { return tx.Set([]byte("site/b.example/thing/9"), []byte("{"), 0) }); err != nil {
		t.Fatal(err)
	}
	if _, err := k.List(ctx, db, "", exact); err == nil || !strings.HasPrefix(err.Error(), "decode site/b.example/thing/9: ") {
		t.Fatalf("a record that is not JSON: %v", err)
	}
}
