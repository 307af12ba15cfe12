package lesson

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// One damaged record or index entry never fails a recall or a list: it is
// skipped and reported (records_damaged); Check finds it and Repair
// rebuilds the indexes from the records, moving a record that does not
// decode aside, byte for byte.
func TestDamagedRecordsAreSkippedThenRepaired(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	good := e.record(Lesson{Lesson: "Press Escape to close the overlay, then click again.", Category: ErrorRecovery,
		FailedCommand: "click", ErrorPattern: "another element would receive the click", Domain: "shop.example"}, "")
	broken := e.record(Lesson{Lesson: "Scroll the button into view before clicking it.", Category: ErrorRecovery,
		FailedCommand: "click", ErrorPattern: "not visible", Domain: "shop.example"}, "")
	if h, err := e.s.Check(ctx); err != nil || !h.OK() || h.Records != 5 {
		t.Fatalf("Check on a sound store = %+v, %v", h, err)
	}

	// Damage: the second lesson's record no longer decodes, a stray entry
	// sits in the click index, and a list entry points at no lesson.
	recKey := keyspace.Lesson("shop.example", broken.ID)
	stray := append(keyspace.LessonsByCommand("shop.example", "click"), "garbage"...)
	dangling := keyspace.LessonList(keyspace.LessonPos(2, 0, false, "lecnosuchid"))
	err := e.db.Update(ctx, func(tx kv.Txn) error {
		if err := tx.Set(recKey, []byte(`{"id": "`+broken.ID+`", "lesson": tru`), 0); err != nil {
			return err
		}
		if err := tx.Set(stray, []byte("a\x00b"), 0); err != nil {
			return err
		}
		return tx.Set(dangling, []byte("-"), 0)
	})
	if err != nil {
		t.Fatal(err)
	}

	e.events = nil
	got, err := e.s.RecallError(ctx, "click e12", "another element would receive the click", "shop.example")
	if err != nil || len(got) == 0 || got[0].ID != good.ID {
		t.Fatalf("recall with a damaged entry = %v, %v; want %s first", got, err, good.ID)
	}
	// The stray entry, and the record that no longer decodes (a recall
	// reads the records it returns).
	dmg := e.eventsNamed(event.RecordsDamaged)
	if len(dmg) != 1 || dmg[0].Fields["op"] != "recall_error" || dmg[0].Fields["skipped"] != 2 ||
		!strings.Contains(strings.Join(dmg[0].Fields["keys"].([]string), " "), "garbage") ||
		!slices.Contains(dmg[0].Fields["keys"].([]string), string(recKey)) {
		t.Fatalf("records_damaged events = %+v", dmg)
	}
	if got, err := e.s.RecallDomain(ctx, "shop.example"); err != nil || len(got) != 1 || got[0].ID != good.ID {
		t.Fatalf("domain recall with a damaged record = %v, %v", got, err)
	}
	list, err := e.s.List(ctx, Filter{})
	if err != nil || len(list) != 4 {
		t.Fatalf("list with damage = %d lessons, %v; want the 4 sound ones", len(list), err)
	}

	h, err := e.s.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.OK() || h.Records != 5 || h.Damaged != 1 || h.DamagedKeys[0] != string(recKey) || h.BadEntries < 2 {
		t.Fatalf("Check = %+v; want 1 damaged record and the stray entries", h)
	}

	h, err = e.s.Repair(ctx)
	if err != nil || !h.OK() || h.Records != 4 || h.MovedAside != 1 {
		t.Fatalf("Repair = %+v, %v; want a sound store of 4 and 1 record moved aside", h, err)
	}
	raw, err := kv.Get(ctx, e.db, keyspace.Damaged(recKey))
	if err != nil || !strings.HasSuffix(string(raw), `"lesson": tru`) {
		t.Fatalf("moved-aside record = %q, %v", raw, err)
	}
	e.events = nil
	got, err = e.s.RecallError(ctx, "click e12", "another element would receive the click", "shop.example")
	if err != nil || len(got) == 0 || got[0].ID != good.ID || len(e.eventsNamed(event.RecordsDamaged)) != 0 {
		t.Fatalf("recall after repair = %v, %v, events %+v", got, err, e.events)
	}
	if _, err := e.s.Get(ctx, broken.ID); err == nil {
		t.Fatal("the damaged lesson is still readable by id after repair")
	}
	// Repair is idempotent.
	if h, err := e.s.Repair(ctx); err != nil || !h.OK() || h.Records != 4 || h.MovedAside != 1 {
		t.Fatalf("second Repair = %+v, %v", h, err)
	}
}

// Repair rebuilds indexes that were lost entirely (a store whose index
// entries were deleted, as a crash part way through a repair leaves it).
func TestRepairRebuildsLostIndexes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	l := e.record(Lesson{Lesson: "Wait for the results list before clicking a result.", Category: ErrorRecovery,
		FailedCommand: "click", ErrorPattern: "no such element", Domain: "shop.example"}, "")
	for _, p := range keyspace.LessonIndexPrefixes() {
		if err := e.db.DropPrefix(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.db.DropPrefix(ctx, keyspace.LessonsByCommand("shop.example", "click")); err != nil {
		t.Fatal(err)
	}
	if h, err := e.s.Check(ctx); err != nil || h.MissingEntries == 0 {
		t.Fatalf("Check after losing the indexes = %+v, %v", h, err)
	}
	if h, err := e.s.Repair(ctx); err != nil || !h.OK() {
		t.Fatalf("Repair = %+v, %v", h, err)
	}
	got, err := e.s.RecallError(ctx, "click", "no such element", "shop.example")
	if err != nil || len(got) == 0 || got[0].ID != l.ID {
		t.Fatalf("recall after repair = %v, %v", got, err)
	}
	if _, err := e.s.Get(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
}

// An error-recall entry holds what ranking needs, not the lesson: a recall
// reads the records it returns. A store written before schema 3, whose
// entries end with a copy of the lesson, recalls the same lessons, passes
// Check, and Repair rewrites its entries without the copy.
func TestMatchEntriesHoldNoCopyOfTheLesson(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i, p := range []string{"not visible", "another element would receive the click", "detached from the dom"} {
		e.record(Lesson{Lesson: fmt.Sprintf("Lesson %d: scroll, wait, then click again.", i), Category: ErrorRecovery,
			FailedCommand: "click", ErrorPattern: p, Domain: "shop.example"}, "")
	}
	recall := func(s *Store) []Lesson {
		t.Helper()
		got, err := s.RecallError(ctx, "click e12", "element is not visible: another element would receive the click", "shop.example")
		if err != nil || len(got) < 3 {
			t.Fatalf("recall = %v, %v", got, err)
		}
		return got
	}
	want := recall(e.s)

	// entries reads every error-recall entry of the site, and the
	// record each points at.
	type pair struct{ key, value, record []byte }
	entries := func() []pair {
		t.Helper()
		var out []pair
		err := e.db.View(ctx, func(r kv.Reader) error {
			return r.Scan(keyspace.LessonCmdIndex("shop.example"), kv.ScanOptions{}, func(k, v []byte) error {
				rec, err := r.Get(keyspace.Lesson("shop.example", keyspace.LastPart(k)))
				out = append(out, pair{bytes.Clone(k), bytes.Clone(v), rec})
				return err
			})
		})
		if err != nil || len(out) != 3 {
			t.Fatalf("entries = %d, %v", len(out), err)
		}
		return out
	}
	for _, p := range entries() {
		if bytes.Contains(p.value, []byte(`"lesson"`)) || p.value[len(p.value)-1] != 0 {
			t.Fatalf("entry %s = %q: holds more than what ranking needs", p.key, p.value)
		}
	}

	// As schema 2 wrote them: the lesson's JSON after the last NUL.
	err := e.db.Update(ctx, func(tx kv.Txn) error {
		for _, p := range entries() {
			if err := tx.Set(p.key, append(p.value, p.record...), 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	old := New(e.db, Options{Now: func() time.Time { return e.now }})
	if got := recall(old); !reflect.DeepEqual(got, want) {
		t.Fatalf("recall over schema-2 entries = %+v\nwant %+v", got, want)
	}
	if h, err := old.Check(ctx); err != nil || !h.OK() {
		t.Fatalf("Check over schema-2 entries = %+v, %v", h, err)
	}
	if h, err := old.Repair(ctx); err != nil || !h.OK() {
		t.Fatalf("Repair = %+v, %v", h, err)
	}
	for _, p := range entries() {
		if bytes.Contains(p.value, []byte(`"lesson"`)) {
			t.Fatalf("entry %s after Repair = %q: still holds the lesson", p.key, p.value)
		}
	}
	if got := recall(New(e.db, Options{Now: func() time.Time { return e.now }})); !reflect.DeepEqual(got, want) {
		t.Fatalf("recall after Repair = %+v\nwant %+v", got, want)
	}
}
