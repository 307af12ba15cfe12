package run

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/listing"
)

func allRunPages(t *testing.T, s *Store, f Filter, n int) []Manifest {
	return runPagesFrom(t, s, f, n, "")
}

func runPagesFrom(t *testing.T, s *Store, f Filter, n int, cursor string) []Manifest {
	t.Helper()
	var out []Manifest
	req := listing.Request{Limit: n, Cursor: cursor}
	for i := 0; ; i++ {
		p, err := s.Page(context.Background(), f, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) > n || i > 1000 {
			t.Fatalf("page %d: %d items at limit %d", i, len(p.Items), n)
		}
		out = append(out, p.Items...)
		if req.Cursor = p.Next; p.Next == "" {
			return out
		}
	}
}

func TestPagesConcatenateToList(t *testing.T) {
	s, c, _ := newStore(t)
	ctx := context.Background()
	for i := range 30 {
		m, err := s.Start(ctx, Start{RunID: fmt.Sprintf("r%02d", i), Goal: "g", SessionID: fmt.Sprintf("s%d", i%3),
			Domain: []string{"a.com", "www.a.com", "b.org"}[i%3]})
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if _, err := s.Complete(ctx, m.RunID, Completion{Success: i%4 == 0}); err != nil {
				t.Fatal(err)
			}
		}
		if i%5 != 0 { // some runs start in the same nanosecond
			c.tick(time.Second)
		}
	}
	for _, f := range []Filter{{}, {Domain: "a.com"}, {Domain: "www.a.com"}, {Status: Completed}, {Status: Running}, {SessionID: "s1"}, {SessionID: "s2", Status: Failed}} {
		want, err := s.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 4, 100} {
			if got := allRunPages(t, s, f, n); ids(got) != ids(want) {
				t.Fatalf("pages of %d of %+v = %s\nwant %s", n, f, ids(got), ids(want))
			}
		}
	}

	// A cursor survives writes: new runs (newer than the cursor) and
	// status changes do not repeat or skip the runs after it.
	first, err := s.Page(ctx, Filter{}, listing.Request{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		c.tick(time.Second)
		if _, err := s.Start(ctx, Start{RunID: fmt.Sprintf("new%d", i), Goal: "g", Domain: "a.com"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Complete(ctx, "r03", Completion{Success: true}); err != nil {
		t.Fatal(err)
	}
	rest := runPagesFrom(t, s, Filter{}, 7, first.Next)
	all, _ := s.List(ctx, Filter{})
	if got, want := ids(append(first.Items, rest...)), ids(all[3:]); got != want {
		t.Fatalf("pages across writes = %s\nwant %s", got, want)
	}

	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, bad := range []string{"%%", enc("lesson:x"), enc("run:nothex/r1"), enc("run:0000000000000001/"), enc("run:0000000000000001/a/b")} {
		if _, err := s.Page(ctx, Filter{}, listing.Request{Cursor: bad}); !engine.IsInvalid(err) {
			t.Errorf("cursor %q: %v, want ErrInvalid", bad, err)
		}
	}
}
