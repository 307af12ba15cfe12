package trajectory

import (
	"context"
	"errors"
	"testing"

	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// idEntry returns the site trajectory id's id entry names, "" for none.
func idEntry(t *testing.T, db kv.Store, id string) string {
	t.Helper()
	v, err := kv.Get(context.Background(), db, keyspace.TrajectoryID(id))
	if errors.Is(err, kv.ErrNotFound) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

// TestGetByID finds a trajectory from its id alone, through the id entry
// every write path keeps: record, delete, retract, revert, an import and
// its revert. Get and Delete without a host answer as with one.
func TestGetByID(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	rec := e.record(searchRun())
	if got := idEntry(t, e.db, rec.ID); got != "shop.example" {
		t.Fatalf("id entry after record: %q, want the site", got)
	}
	got, err := e.s.Get(ctx, "", rec.ID)
	if err != nil || got.ID != rec.ID || got.Domain != "www.shop.example" || len(got.Steps) != 4 {
		t.Fatalf("get by id: %+v, %v", got, err)
	}
	if _, err := e.s.Get(ctx, "", "traj_0000000000000000"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get of an unknown id: %v, want ErrNotFound", err)
	}

	if _, err := e.s.Retract(ctx, rec.ID, "wrong site"); err != nil {
		t.Fatal(err)
	}
	if got := idEntry(t, e.db, rec.ID); got != "" {
		t.Fatalf("id entry after retract: %q", got)
	}
	if _, err := e.s.Get(ctx, "", rec.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get of a retracted trajectory: %v", err)
	}
	if _, err := e.s.Revert(ctx, rec.ID, -1); err != nil {
		t.Fatal(err)
	}
	if got := idEntry(t, e.db, rec.ID); got != "shop.example" {
		t.Fatalf("id entry after revert: %q", got)
	}

	if err := e.s.Delete(ctx, "", rec.ID); err != nil {
		t.Fatal(err)
	}
	if got := idEntry(t, e.db, rec.ID); got != "" {
		t.Fatalf("id entry after delete: %q", got)
	}
	if err := e.s.Delete(ctx, "", rec.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete of a deleted trajectory: %v", err)
	}
}

// TestGetByIDWithoutEntries reads a store written before the id entries
// (removed here by hand): Get by id scans the site keys and finds it.
func TestGetByIDWithoutEntries(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	rec := e.record(searchRun())
	other := e.record(Trajectory{Domain: "example.com", Goal: "open settings page", Steps: []Step{{Action: "click", Name: "Settings"}}})
	if err := e.db.Update(ctx, func(tx kv.Txn) error {
		if err := tx.Delete(keyspace.TrajectoryID(rec.ID)); err != nil {
			return err
		}
		return tx.Delete(keyspace.TrajectoryID(other.ID))
	}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []Trajectory{rec, other} {
		got, err := e.s.Get(ctx, "", want.ID)
		if err != nil || got.ID != want.ID || got.Goal != want.Goal {
			t.Fatalf("get %s without its id entry: %+v, %v", want.ID, got, err)
		}
	}
	if err := e.s.Delete(ctx, "", other.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Get(ctx, "", other.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	// Writing it again brings the entry.
	e.record(searchRun())
	if got := idEntry(t, e.db, rec.ID); got != "shop.example" {
		t.Fatalf("id entry after a new record: %q", got)
	}
}

// TestForgetSiteDropsIDEntries: forgetting a site deletes its trajectories'
// id entries (outside its range) and no other site's.
func TestForgetSiteDropsIDEntries(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	rec := e.record(searchRun())
	other := e.record(Trajectory{Domain: "example.com", Goal: "open settings page", Steps: []Step{{Action: "click", Name: "Settings"}}})
	n, err := e.s.ForgetSite(ctx, "shop.example")
	if err != nil || n != 1 {
		t.Fatalf("forget site: %d, %v", n, err)
	}
	if got := idEntry(t, e.db, rec.ID); got != "" {
		t.Fatalf("id entry after forget: %q", got)
	}
	if got := idEntry(t, e.db, other.ID); got != "example.com" {
		t.Fatalf("another site's id entry after forget: %q", got)
	}
}
