package selector

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

// A success records what the selector was checked against (path and
// fingerprints); a failure keeps the last success's; an observation
// without fingerprints leaves it alone; a bad fingerprint is bad input.
func TestCheckedRecordedBySuccess(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	s := New(badgertest.Open(t), Options{Now: func() time.Time { return now }})
	obs := Observation{Domain: "https://shop.example/search?q=padel", Role: "button", Name: "Search", Selector: "button:Search",
		Fingerprint: "a1b2c3d4", Page: "0011aabb"}
	got, err := s.Record(ctx, obs)
	if err != nil {
		t.Fatal(err)
	}
	want := Checked{Path: "/search", Fingerprint: "a1b2c3d4", Page: "0011aabb", At: now}
	if got.Checked == nil || *got.Checked != want {
		t.Fatalf("checked %+v, want %+v", got.Checked, want)
	}
	b, _ := json.Marshal(got)
	if !strings.Contains(string(b), `"checked":{"path":"/search","fingerprint":"a1b2c3d4","page":"0011aabb","at":"2026-11-24T04:00:00Z"}`) {
		t.Fatalf("json %s", b)
	}
	// A scoped observation checks against its scope.
	scoped := obs
	scoped.Path = "https://shop.example/item/12345"
	if got, _ := s.Record(ctx, scoped); got.Checked == nil || got.Checked.Path != "/item/*" {
		t.Fatalf("scoped checked %+v", got.Checked)
	}
	failed := obs
	failed.Failed, failed.Fingerprint, failed.Page = true, "ffffffff", "eeeeeeee"
	now = now.Add(time.Hour)
	if got, _ := s.Record(ctx, failed); got.Checked == nil || *got.Checked != want {
		t.Fatalf("after a failure %+v, want %+v", got.Checked, want)
	}
	plain := obs
	plain.Fingerprint, plain.Page = "", ""
	if got, _ := s.Record(ctx, plain); got.Checked == nil || *got.Checked != want {
		t.Fatalf("after a success without fingerprints %+v", got.Checked)
	}
	bad := obs
	bad.Fingerprint = "not hex"
	if _, err := s.Record(ctx, bad); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("bad fingerprint: %v", err)
	}
	// Put checks and keeps it (imports); a record without one still reads.
	put := Selector{Domain: "shop.example", Role: "link", Name: "Home", Selector: "a", Successes: 1,
		Checked: &Checked{Path: "/", Fingerprint: "zz"}}
	if _, err := s.Put(ctx, put); !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("Put with a bad checked: %v", err)
	}
	put.Checked.Fingerprint = "12345678"
	if got, err := s.Put(ctx, put); err != nil || got.Checked == nil || got.Checked.Fingerprint != "12345678" {
		t.Fatalf("Put: %+v, %v", got.Checked, err)
	}
	put.Checked, put.Name = nil, "About"
	if got, err := s.Put(ctx, put); err != nil || got.Checked != nil {
		t.Fatalf("Put without: %+v, %v", got.Checked, err)
	}
}
