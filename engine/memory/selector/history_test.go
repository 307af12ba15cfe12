package selector

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

func TestHistoryRevertAndImport(t *testing.T) {
	ctx := context.Background()
	db := badgertest.Open(t)
	now := func() time.Time { return t0 }
	s := New(db, Options{Now: now})
	o := Observation{Domain: "example.com", Role: "button", Name: "Search", Selector: "#go"}
	for _, failed := range []bool{false, true} {
		o.Failed = failed
		if _, err := s.Record(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	ls, _ := s.List(ctx, "")
	id := IDOf(ls[0])
	vs, err := s.History(ctx, id)
	if err != nil || len(vs) != 1 || vs[0].Op != "use" || vs[0].Selector.Failures != 0 {
		t.Fatalf("history = %+v, %v", vs, err)
	}
	back, err := s.Revert(ctx, id, 0)
	if err != nil || back.Successes != 1 || back.Failures != 0 {
		t.Fatalf("revert = %+v, %v", back, err)
	}
	if vs, _ := s.History(ctx, id); len(vs) != 2 || vs[0].Op != "revert" || vs[0].Selector.Failures != 1 {
		t.Fatalf("history after revert = %+v", vs)
	}

	before, _ := s.List(ctx, "")
	imp := New(db, Options{Now: now, Provenance: engine.Provenance{Source: engine.SourceImported, SHA256: "abc"}})
	changed := before[0]
	changed.Successes = 9
	for _, sl := range []Selector{changed, {Domain: "example.com", Role: "link", Name: "Home", Selector: "a.home", Successes: 2}} {
		if _, err := imp.Put(ctx, sl); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.RevertImport(ctx, "abc")
	if err != nil || len(r.Restored) != 1 || len(r.Removed) != 1 {
		t.Fatalf("revert import = %+v, %v", r, err)
	}
	if after, _ := s.List(ctx, ""); !reflect.DeepEqual(after, before) {
		t.Fatalf("after revert --import:\n%+v\nwant\n%+v", after, before)
	}
}
