package trajectory

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
	e := newEnv(t, Options{})
	ctx := context.Background()
	for i := range 20 {
		tr := searchRun()
		tr.Domain = []string{"https://www.shop.example/", "https://shop.example/", "https://b.org/"}[i%3]
		tr.Goal = fmt.Sprintf("search item %d", i)
		e.record(tr)
		if i%3 == 0 {
			e.now = e.now.Add(time.Minute)
		}
	}
	for _, host := range []string{"", "shop.example", "b.org"} {
		want, err := e.s.List(ctx, host)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 4, 100} {
			var got []Trajectory
			req := listing.Request{Limit: n}
			for {
				p, err := e.s.Page(ctx, host, req)
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
	if _, err := e.s.Page(ctx, "", listing.Request{Cursor: "***"}); !engine.IsInvalid(err) {
		t.Fatalf("bad cursor: %v", err)
	}
}
