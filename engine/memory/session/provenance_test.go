package session

import (
	"context"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

func TestProvenanceStampedAndNotPartOfIdentity(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t)
	now := func() time.Time { return t0 }
	run := New(db, Options{Now: now, Provenance: engine.Provenance{Source: engine.SourceLearned, Run: "run-a", Model: "p/m"}})
	s, err := run.Record(ctx, Session{Domain: "app.example.com", Goal: "find x", Timestamp: t0})
	want := engine.Provenance{Source: engine.SourceLearned, Run: "run-a", Model: "p/m", Site: "example.com", At: t0}
	if err != nil || s.Provenance != want {
		t.Fatalf("record: %+v, %v", s, err)
	}
	// The same session imported twice (stamped differently each time) is
	// stored once, and one that carries provenance keeps it.
	in := Session{Domain: "app.example.com", Goal: "find y", Timestamp: t0}
	for i := range 2 {
		imp := New(db, Options{Now: func() time.Time { return t0.Add(time.Duration(i) * time.Hour) },
			Provenance: engine.Provenance{Source: engine.SourceImported, File: "x.json"}})
		ss, err := imp.Prepare([]Session{in, s})
		if err != nil {
			t.Fatal(err)
		}
		if ss[0].Provenance.Source != engine.SourceImported || ss[1].Provenance != want {
			t.Fatalf("prepared: %+v", ss)
		}
		if err := imp.Import(ctx, ss); err != nil {
			t.Fatal(err)
		}
	}
	all, err := run.Recent(ctx, "example.com", 0)
	if err != nil || len(all) != 2 {
		t.Fatalf("sessions: %+v, %v", all, err)
	}
	// A record from before provenance keeps its key and reads as none. It
	// is written as an engine before the kept list wrote it: the record,
	// and session-gen a bare counter.
	old := Session{ID: "s1", Domain: "example.com", Goal: "old", Timestamp: t0.Add(-time.Hour)}
	b := `{"id":"s1","domain":"example.com","goal":"old","outcome":"","success":false,"final_url":"","timestamp":"2026-03-12T09:00:00Z","turns_used":0,"duration_ms":0}`
	if err := db.Update(ctx, func(tx kv.Txn) error {
		if err := tx.Set(keyspace.SessionGen("example.com"), []byte("7"), 0); err != nil {
			return err
		}
		return tx.Set(key(&old), []byte(b), 0)
	}); err != nil {
		t.Fatal(err)
	}
	if all, err = run.Recent(ctx, "example.com", 0); err != nil || len(all) != 3 || all[2].Provenance != (engine.Provenance{}) {
		t.Fatalf("with an old record: %+v, %v", all, err)
	}
	imp := New(db, Options{Now: now})
	ss, _ := imp.Prepare([]Session{all[2]})
	if err := imp.Import(ctx, ss); err != nil {
		t.Fatal(err)
	}
	if all, _ = run.Recent(ctx, "example.com", 0); len(all) != 3 {
		t.Fatalf("old record imported again is stored twice: %+v", all)
	}
}
