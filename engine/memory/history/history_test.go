package history

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

func TestKeepListGetForget(t *testing.T) {
	ctx := context.Background()
	db := badgertest.Open(t)
	at := time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)
	by := engine.Provenance{Source: engine.SourceManual, Run: "r1"}
	for i := range 5 {
		rec := []byte(`{"n":` + string(rune('0'+i)) + `}`)
		if err := db.Update(ctx, func(tx kv.Txn) error { return Keep(tx, Fact, "fact_a", Change{At: at, By: by, Op: OpEdit}, rec, 3) }); err != nil {
			t.Fatal(err)
		}
	}
	err := db.View(ctx, func(r kv.Reader) error {
		es, err := Entries(r, Fact, "fact_a")
		if err != nil {
			return err
		}
		if len(es) != 3 || es[0].Version != 4 || es[2].Version != 2 || string(es[0].Record) != `{"n":4}` || es[0].By != by || !es[0].At.Equal(at) {
			t.Fatalf("entries = %+v, want versions 4, 3, 2 newest first", es)
		}
		b, err := Get(r, Fact, "fact_a", -1)
		if err != nil {
			return err
		}
		// The envelope is what json.Marshal of the typed version gives.
		want, _ := json.Marshal(struct {
			Version uint64            `json:"version"`
			At      time.Time         `json:"at"`
			By      engine.Provenance `json:"by"`
			Op      string            `json:"op"`
			Fact    json.RawMessage   `json:"fact"`
		}{4, at, by, OpEdit, json.RawMessage(`{"n":4}`)})
		if string(b) != string(want) {
			t.Fatalf("envelope %s, want %s", b, want)
		}
		// A missing version is kv.ErrNotFound, and says which in words
		// of its own (the store's "key not found" is no help to a reader).
		if _, err := Get(r, Fact, "fact_a", 0); !errors.Is(err, kv.ErrNotFound) || err.Error() != "fact fact_a has no version 0" {
			t.Fatalf("version 0 (dropped) = %v", err)
		}
		if _, err := Get(r, Fact, "fact_b", -1); !errors.Is(err, kv.ErrNotFound) || err.Error() != "fact fact_b has no earlier version" {
			t.Fatalf("newest version of a record with none = %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(tx kv.Txn) error { return Forget(tx, Fact, "fact_a") }); err != nil {
		t.Fatal(err)
	}
	db.View(ctx, func(r kv.Reader) error {
		n := 0
		Each(r, Fact, func(string, uint64, []byte) error { n++; return nil })
		if _, found, _ := Last(r, Fact, "fact_a"); found || n != 0 {
			t.Fatalf("after forget: %d versions, counter %v", n, found)
		}
		return nil
	})
}

func TestPutKeepsLaterCounter(t *testing.T) {
	ctx := context.Background()
	db := badgertest.Open(t)
	env := func(v uint64) []byte { b, _ := Encode(Selector, v, Change{Op: OpUse}, []byte(`{}`)); return b }
	err := db.Update(ctx, func(tx kv.Txn) error {
		for _, v := range []uint64{7, 2} { // an import's versions, out of order
			if err := Put(tx, Selector, "sel_x", v, env(v), 20); err != nil {
				return err
			}
		}
		last, found, err := Last(tx, Selector, "sel_x")
		if err != nil || !found || last != 7 {
			t.Fatalf("last = %d %v %v, want 7", last, found, err)
		}
		return Keep(tx, Selector, "sel_x", Change{Op: OpUse}, Absent, 20)
	})
	if err != nil {
		t.Fatal(err)
	}
	db.View(ctx, func(r kv.Reader) error {
		firsts, err := Firsts(r, Selector, func(engine.Provenance) bool { return true })
		if err != nil || firsts["sel_x"].Version != 2 {
			t.Fatalf("firsts = %+v, %v", firsts, err)
		}
		b, _ := Get(r, Selector, "sel_x", -1)
		e, _ := Decode(Selector, "sel_x", b)
		if e.Version != 8 || !IsAbsent(e.Record) {
			t.Fatalf("newest = %+v, want the absent version 8", e)
		}
		return nil
	})
}

// RevertBy decides each record by its earliest version the writer made or
// that holds the writer's own record: restore to what was there before, or
// remove what the writer created — found by its versions, or, with none,
// by the live record's provenance.
func TestRevertByRun(t *testing.T) {
	ctx := context.Background()
	db := badgertest.Open(t)
	r := engine.Provenance{Source: engine.SourceLearned, Run: "r"}
	other := engine.Provenance{Source: engine.SourceLearned, Run: "s"}
	keep := func(id string, by engine.Provenance, rec string) {
		t.Helper()
		if err := db.Update(ctx, func(tx kv.Txn) error { return Keep(tx, Fact, id, Change{By: by, Op: OpObserve}, []byte(rec), 20) }); err != nil {
			t.Fatal(err)
		}
	}
	// Each version is the record as it was before the change by by.
	keep("fact_changed", r, `{"v":"before","provenance":{"run":"s"}}`)  // r changed it: back to this
	keep("fact_changed", other, `{"v":"r's","provenance":{"run":"s"}}`) // s changed it after r
	keep("fact_ontop", other, `{"v":"r's","provenance":{"run":"r"}}`)   // r created it, s changed it after
	keep("fact_other", other, `{"v":"s's","provenance":{"run":"s"}}`)   // none of r's
	// Live records: one r created that nobody changed, and the others'.
	live := map[string]string{
		"site/x/fact/a": `{"id":"fact_created","provenance":{"run":"r"}}`,
		"site/x/fact/b": `{"id":"fact_other","provenance":{"run":"s"}}`,
		"site/x/misc":   `{"id":"not_a_fact","provenance":{"run":"r"}}`,
	}
	if err := db.Update(ctx, func(tx kv.Txn) error {
		for k, v := range live {
			if err := tx.Set([]byte(k), []byte(v), 0); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	l := &Live{Prefix: []byte("site/"), Is: func(k []byte) bool { return string(k) != "site/x/misc" }, ID: func(_, rec []byte) (string, error) {
		var v struct{ ID string }
		return v.ID, json.Unmarshal(rec, &v)
	}}
	got := map[string]string{}
	out, err := RevertRun(ctx, db, Fact, "r", l, func(_ context.Context, id string, rec []byte) error {
		got[id] = string(rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"fact_changed": `{"v":"before","provenance":{"run":"s"}}`, "fact_ontop": "null", "fact_created": "null"}
	if len(got) != len(want) {
		t.Fatalf("restored %v, want %v", got, want)
	}
	for id, rec := range want {
		if got[id] != rec {
			t.Fatalf("%s restored to %s, want %s", id, got[id], rec)
		}
	}
	if len(out.Restored) != 1 || len(out.Removed) != 2 || out.Removed[0] != "fact_created" {
		t.Fatalf("reverted = %+v", out)
	}
	if _, err := RevertRun(ctx, db, Fact, " ", l, nil); !engine.IsInvalid(err) {
		t.Fatalf("empty run: %v", err)
	}
}
