package selector

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/listing"
)

func TestPagesConcatenateToList(t *testing.T) {
	ctx := context.Background()
	db := openDisk(t, t.TempDir())
	defer db.Close()
	s := New(db, Options{})
	for i := range 30 {
		o := Observation{Domain: []string{"www.a.com", "a.com", "b.org"}[i%3], Role: "button", Name: fmt.Sprintf("n%d", i%5),
			Selector: fmt.Sprintf("#s%d", i), Failed: i%4 == 0}
		for range 1 + i%3 {
			if _, err := s.Record(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, host := range []string{"", "a.com", "www.a.com", "b.org"} {
		want, err := s.List(ctx, host)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 4, 100} {
			var got []Selector
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
				t.Fatalf("pages of %d of %q differ from List (%d vs %d)", n, host, len(got), len(want))
			}
		}
	}
	if _, err := s.Page(ctx, "", listing.Request{Cursor: listing.Encode(CursorKind, "zz")}); !engine.IsInvalid(err) {
		t.Fatalf("damaged cursor: %v", err)
	}
}
