package session

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/listing"
)

func sessionGoals(ss []Session) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Goal
	}
	return out
}

func TestPagesConcatenateToList(t *testing.T) {
	ctx := context.Background()
	st := New(openDisk(t), Options{Keep: 50})
	for i := range 40 {
		host := []string{"a.com", "www.a.com", "b.org", "c.net"}[i%4]
		// Some sessions end at the same instant on different sites.
		at := t0.Add(time.Duration(i/3) * time.Minute)
		if _, err := st.Record(ctx, Session{ID: fmt.Sprintf("s%d", i%3), Domain: host, Goal: fmt.Sprintf("g%d", i), Success: i%2 == 0, Timestamp: at}); err != nil {
			t.Fatal(err)
		}
	}
	yes := true
	for _, f := range []Filter{{}, {Domain: "a.com"}, {Domain: "b.org", SessionID: "s1"}, {Success: &yes}, {SessionID: "s2"}} {
		want, err := st.List(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Fatalf("%+v lists nothing", f)
		}
		for i := 1; i < len(want); i++ {
			if want[i].Timestamp.After(want[i-1].Timestamp) {
				t.Fatalf("List(%+v) is not newest first", f)
			}
		}
		for _, n := range []int{1, 3, 100} {
			var got []Session
			req := listing.Request{Limit: n}
			for {
				p, err := st.Page(ctx, f, req)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, p.Items...)
				if req.Cursor = p.Next; p.Next == "" {
					break
				}
			}
			if !slices.Equal(sessionGoals(got), sessionGoals(want)) {
				t.Fatalf("pages of %d of %+v = %v\nwant %v", n, f, sessionGoals(got), sessionGoals(want))
			}
		}
	}
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	p, err := st.Page(ctx, Filter{}, listing.Request{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f      Filter
		cursor string
	}{{Filter{}, "!"}, {Filter{}, enc("session:zz")}, {Filter{}, enc("run:x")}, {Filter{Domain: "a.com"}, p.Next /* c.net's */},
		{Filter{Domain: "a.com"}, enc("session:ffffffffffffffff/%61.com/ffffffffffffffff")}} {
		if _, err := st.Page(ctx, c.f, listing.Request{Cursor: c.cursor}); !engine.IsInvalid(err) {
			t.Errorf("cursor %q: %v, want ErrInvalid", c.cursor, err)
		}
	}
}
