package lesson

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/internal/sitecache"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
	"github.com/engine-dev/engine/kv/badger/badgertest"
)

// A site's index that this process's own writes advanced (an overlay of
// the writes over the compiled base, never folded here) answers every
// recall exactly as the index compiled afresh from the store at the same
// token, after each of a random sequence of new lessons, uses, edits,
// removals, forgotten sites and damage.
func TestOverlayMatchesFreshCompile(t *testing.T) {
	defer func(m int) { overlayMin = m }(overlayMin)
	overlayMin = 1 << 20
	defer func(m int) { smallBucket = m }(smallBucket)
	for seed := range 6 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			smallBucket = []int{0, 16}[seed%2]
			r := rand.New(rand.NewPCG(uint64(seed), 29))
			db := badgertest.Open(t)
			now := time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)
			s := New(db, Options{Now: func() time.Time { return now }, Provenance: engine.Provenance{Source: engine.SourceManual},
				MaxRecall: 1 + r.IntN(4)})
			ctx := context.Background()
			ls, err := s.Prepare(randLessons(r, 40+r.IntN(80)), ImportOptions{KeepTrust: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Import(ctx, ls); err != nil {
				t.Fatal(err)
			}
			type query struct{ command, err, host string }
			var qs []query
			for range 30 {
				qs = append(qs, query{randCommand(r), randError(r), randHost(r)})
			}
			answers := func() string {
				t.Helper()
				var out []any
				for _, q := range qs {
					ls, err := s.RecallError(ctx, q.command, q.err, q.host)
					out = append(out, ls, fmt.Sprint(err))
					if q.host != "" {
						ls, err := s.RecallDomain(ctx, q.host)
						out = append(out, ls, fmt.Sprint(err))
					}
				}
				b, err := json.Marshal(out)
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			overlaid := 0
			answers() // compiles and caches the sites' indexes
			for round := range 60 {
				randWrite(t, r, s, db, round)
				got := answers()
				overlaid += overlays(t, db)
				cached := indexes
				indexes = [2]*sitecache.Cache[*siteIndex]{
					sitecache.NewWeighted(indexBudget, (*siteIndex).weight),
					sitecache.NewWeighted(indexBudget, (*siteIndex).weight),
				}
				want := answers()
				indexes = cached
				if got != want {
					t.Fatalf("round %d: recalls from the advanced index differ from a fresh compile's:\n got %s\nwant %s", round, got, want)
				}
			}
			if overlaid == 0 {
				t.Fatal("no recall read an index with an overlay")
			}
		})
	}
}

// overlays counts the overlays (buckets and host lists with own writes
// not folded) in the cached indexes of the test's sites at their tokens.
func overlays(t *testing.T, db kv.Store) int {
	t.Helper()
	sites := []string{keyspace.Global, "shop.example", "other.example", "new.example", "x.co.uk"}
	var gs []string
	err := db.View(context.Background(), func(r kv.Reader) error {
		var err error
		gs, err = gens(r, sites...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, site := range sites {
		for _, c := range indexes {
			ix, ok := c.Get(site, gs[i])
			if !ok {
				continue
			}
			for _, b := range ix.buckets {
				if b.added != nil || len(b.gone) > 0 {
					n++
				}
			}
			for _, h := range ix.hosts {
				if h != nil && (len(h.added) > 0 || len(h.gone) > 0) {
					n++
				}
			}
		}
	}
	return n
}
