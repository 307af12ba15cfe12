package fact

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/listing"
)

func TestPagesConcatenateToList(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	now := t0
	s := New(db, Options{Now: func() time.Time { return now }})
	for i := range 30 {
		host := []string{"www.a.com", "a.com", "b.org"}[i%3]
		for range 1 + i%4 { // confidence grows with observations
			if _, err := s.Observe(ctx, Observation{Domain: host, Type: Quirk, Key: fmt.Sprintf("k%d", i%7), Value: fmt.Sprintf("v%d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		if i%2 == 0 {
			now = now.Add(time.Minute)
		}
	}
	for _, host := range []string{"", "a.com", "www.a.com", "b.org"} {
		want, err := s.List(ctx, host)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 4, 100} {
			var got []Fact
			req := listing.Request{Limit: n}
			for {
				p, err := s.Page(ctx, host, req)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, p.Items...)
				if req.Cursor = p.Next; p.Next == "" {
					break
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("pages of %d of %q differ from List (%d vs %d facts)", n, host, len(got), len(want))
			}
		}
	}
	if _, err := s.Page(ctx, "", listing.Request{Cursor: listing.Encode(CursorKind, "short")}); !engine.IsInvalid(err) {
		t.Fatalf("damaged cursor: %v", err)
	}
	if _, err := s.Page(ctx, "", listing.Request{Cursor: listing.Encode("selector", "x")}); !engine.IsInvalid(err) {
		t.Fatalf("cursor of another list: %v", err)
	}
}
