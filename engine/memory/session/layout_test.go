package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

// key is where s is stored.
func key(s *Session) []byte { return keyspace.SessionAt(domain.Site(s.Domain), tail(s)) }

// recordOld writes s as the engine did before the kept list: the record at
// its key, the site's range scanned newest first and all but the newest
// keep deleted, session-gen bumped as a bare counter.
func recordOld(t *testing.T, db kv.Store, s Session, keep int) {
	t.Helper()
	if err := New(db, Options{}).normalize(&s); err != nil {
		t.Fatal(err)
	}
	site := domain.Site(s.Domain)
	b, _ := json.Marshal(s)
	err := db.Update(context.Background(), func(tx kv.Txn) error {
		if err := tx.Set(key(&s), b, 0); err != nil {
			return err
		}
		gen := 0
		if v, err := tx.Get(keyspace.SessionGen(site)); err == nil {
			gen, _ = strconv.Atoi(string(v))
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		if err := tx.Set(keyspace.SessionGen(site), []byte(strconv.Itoa(gen+1)), 0); err != nil {
			return err
		}
		var old [][]byte
		n := 0
		err := tx.Scan(keyspace.Sessions(site), kv.ScanOptions{Reverse: true, KeysOnly: true}, func(k, _ []byte) error {
			if n++; n > keep {
				old = append(old, slices.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range old {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// rangeTails is what a scan of site's range finds, newest first: what an
// engine before the list reads.
func rangeTails(t *testing.T, db kv.Store, site string) []string {
	t.Helper()
	var out []string
	err := db.View(context.Background(), func(r kv.Reader) error {
		var err error
		out, err = scanTails(r, site)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// listed returns site's session-gen as stored and its parsed history.
func listed(t *testing.T, db kv.Store, site string) (string, history) {
	t.Helper()
	v, err := kv.Get(context.Background(), db, keyspace.SessionGen(site))
	if err != nil {
		t.Fatal(err)
	}
	return string(v), parseHistory(v)
}

// checkListed fails unless site's session-gen lists exactly the sessions
// its range holds (so an older engine, which scans the range, reads the
// same history).
func checkListed(t *testing.T, db kv.Store, site string) {
	t.Helper()
	raw, h := listed(t, db, site)
	if !h.listed {
		t.Fatalf("session-gen of %s = %q: not a list", site, raw)
	}
	if r := rangeTails(t, db, site); !slices.Equal(r, h.tails) {
		t.Fatalf("%s: range holds %v, the list %v", site, r, h.tails)
	}
}

func TestStoreWrittenBeforeTheListReadsAndIsListedOnWrite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := badgertest.OpenDir(t, dir)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	for i := range 8 {
		recordOld(t, db, Session{Domain: "x.com", Goal: fmt.Sprintf("g%d", i), Timestamp: at(i)}, DefaultKeep)
	}
	recordOld(t, db, Session{Domain: "y.org", Goal: "y0", Timestamp: at(3).Add(30 * time.Second)}, DefaultKeep)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = badgertest.OpenDir(t, dir)
	st := New(db, Options{})
	recent := func(want string) {
		t.Helper()
		got, err := st.Recent(ctx, "x.com", 0)
		if err != nil {
			t.Fatal(err)
		}
		if g := goals(got); g != want {
			t.Fatalf("recent = %s, want %s", g, want)
		}
	}

	recent("g7,g6,g5,g4,g3")
	all, err := st.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if g := goals(all); g != "g7,g6,g5,g4,y0,g3" {
		t.Fatalf("list = %s", g)
	}
	p, err := st.Page(ctx, Filter{Domain: "x.com"}, listing.Request{Limit: 2})
	if err != nil || goals(p.Items) != "g7,g6" {
		t.Fatalf("page 1 = %s, %v", goals(p.Items), err)
	}
	if p, err = st.Page(ctx, Filter{Domain: "x.com"}, listing.Request{Limit: 5, Cursor: p.Next}); err != nil || goals(p.Items) != "g5,g4,g3" || p.Next != "" {
		t.Fatalf("page 2 = %s (next %q), %v", goals(p.Items), p.Next, err)
	}

	// The first write lists the site; a session older than every kept one
	// is trimmed at once and never written.
	if _, err := st.Record(ctx, Session{Domain: "x.com", Goal: "g8", Timestamp: at(8)}); err != nil {
		t.Fatal(err)
	}
	checkListed(t, db, "x.com")
	if raw, h := listed(t, db, "x.com"); h.gen != 9 || len(h.tails) != DefaultKeep {
		t.Fatalf("session-gen = %q, want counter 9 and 5 sessions", raw)
	}
	recent("g8,g7,g6,g5,g4")
	if _, err := st.Record(ctx, Session{Domain: "x.com", Goal: "ancient", Timestamp: at(-1)}); err != nil {
		t.Fatal(err)
	}
	checkListed(t, db, "x.com")
	recent("g8,g7,g6,g5,g4")

	// An older engine writing the listed store leaves a bare counter: the
	// list is unknown again, reads scan, and the next write lists it.
	recordOld(t, db, Session{Domain: "x.com", Goal: "g9", Timestamp: at(9)}, DefaultKeep)
	if _, h := listed(t, db, "x.com"); h.listed {
		t.Fatal("an old engine's write should leave session-gen unlisted")
	}
	recent("g9,g8,g7,g6,g5")
	if _, err := st.Record(ctx, Session{Domain: "x.com", Goal: "g10", Timestamp: at(10)}); err != nil {
		t.Fatal(err)
	}
	checkListed(t, db, "x.com")
	recent("g10,g9,g8,g7,g6")
}

// scanCounter counts the scans of a range that starts with prefix.
type scanCounter struct {
	kv.Store
	prefix string
	scans  *int
}

type countingTxn struct {
	kv.Txn
	c scanCounter
}

type countingReader struct {
	kv.Reader
	c scanCounter
}

func (c scanCounter) count(prefix []byte) {
	if strings.HasPrefix(string(prefix), c.prefix) {
		*c.scans++
	}
}

func (c scanCounter) View(ctx context.Context, fn func(kv.Reader) error) error {
	return c.Store.View(ctx, func(r kv.Reader) error { return fn(countingReader{r, c}) })
}

func (c scanCounter) Update(ctx context.Context, fn func(kv.Txn) error) error {
	return c.Store.Update(ctx, func(tx kv.Txn) error { return fn(countingTxn{tx, c}) })
}

func (r countingReader) Scan(prefix []byte, opts kv.ScanOptions, fn func(k, v []byte) error) error {
	r.c.count(prefix)
	return r.Reader.Scan(prefix, opts, fn)
}

func (t countingTxn) Scan(prefix []byte, opts kv.ScanOptions, fn func(k, v []byte) error) error {
	t.c.count(prefix)
	return t.Txn.Scan(prefix, opts, fn)
}

// The range of a site's sessions holds the tombstones of every session
// trimmed since the last compaction: Record, Import, Recent and a page of
// one site must not scan it.
func TestListedSiteIsReadWithoutScanningItsRange(t *testing.T) {
	ctx := context.Background()
	scans := 0
	db := scanCounter{badgertest.Open(t), "site/", &scans}
	st := New(db, Options{Keep: 3})
	for i := range 10 {
		if _, err := st.Record(ctx, Session{Domain: "x.com", Goal: fmt.Sprintf("g%d", i), Timestamp: t0.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := st.Prepare([]Session{{Domain: "x.com", Goal: "imported", Timestamp: t0.Add(time.Hour)}, {Domain: "x.com", Goal: "old", Timestamp: t0}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Import(ctx, p); err != nil {
		t.Fatal(err)
	}
	got, err := st.Recent(ctx, "x.com", 2)
	if err != nil || goals(got) != "imported,g9" {
		t.Fatalf("recent 2 = %s, %v", goals(got), err)
	}
	pg, err := st.Page(ctx, Filter{Domain: "x.com"}, listing.Request{Limit: 1})
	if err != nil || goals(pg.Items) != "imported" {
		t.Fatalf("page = %s, %v", goals(pg.Items), err)
	}
	if pg, err = st.Page(ctx, Filter{Domain: "x.com"}, listing.Request{Cursor: pg.Next}); err != nil || goals(pg.Items) != "g9,g8" {
		t.Fatalf("page 2 = %s, %v", goals(pg.Items), err)
	}
	if scans != 0 {
		t.Fatalf("%d scans of a site's range, want none", scans)
	}
	checkListed(t, db.Store, "x.com")
}

func TestDamagedListIsScannedThenRewritten(t *testing.T) {
	ctx := context.Background()
	db := badgertest.Open(t)
	st := New(db, Options{})
	for i := range 3 {
		if _, err := st.Record(ctx, Session{Domain: "x.com", Goal: fmt.Sprintf("g%d", i), Timestamp: t0.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	_, h := listed(t, db, "x.com")
	for _, bad := range []string{"3;zz", "3;" + h.tails[2] + "," + h.tails[0], "3;" + h.tails[0] + "," + h.tails[0], "x;" + h.tails[0] + ","} {
		if err := db.Update(ctx, func(tx kv.Txn) error { return tx.Set(keyspace.SessionGen("x.com"), []byte(bad), 0) }); err != nil {
			t.Fatal(err)
		}
		if got, err := st.Recent(ctx, "x.com", 0); err != nil || goals(got) != "g2,g1,g0" {
			t.Fatalf("session-gen %q: recent = %s, %v", bad, goals(got), err)
		}
	}
	if _, err := st.Record(ctx, Session{Domain: "x.com", Goal: "g3", Timestamp: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	checkListed(t, db, "x.com")
	if got, _ := st.Recent(ctx, "x.com", 0); goals(got) != "g3,g2,g1,g0" {
		t.Fatalf("after a write = %s", goals(got))
	}
}

func TestSmallerKeepTrimsOnNextWrite(t *testing.T) {
	ctx := context.Background()
	db := badgertest.Open(t)
	for i, keep := range []int{10, 10, 10, 10, 10, 10, 2} {
		if _, err := New(db, Options{Keep: keep}).Record(ctx, Session{Domain: "x.com", Goal: fmt.Sprintf("g%d", i), Timestamp: t0.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	checkListed(t, db, "x.com")
	if got, _ := New(db, Options{}).Recent(ctx, "x.com", 0); goals(got) != "g6,g5" {
		t.Fatalf("recent = %s, want the 2 newest", goals(got))
	}
}
