package listing

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/engine-dev/engine/engine"
)

func TestCursorRoundTripAndRefusal(t *testing.T) {
	c := Encode("run", "0001/r1")
	if p, err := Decode("run", c); err != nil || p != "0001/r1" {
		t.Fatalf("Decode = %q, %v", p, err)
	}
	if p, err := Decode("run", ""); err != nil || p != "" {
		t.Fatalf("empty cursor: %q, %v", p, err)
	}
	for _, bad := range []string{"***", Encode("lesson", "x"), Encode("run", "")} {
		if _, err := Decode("run", bad); !engine.IsInvalid(err) {
			t.Fatalf("Decode(%q) = %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := (Request{Limit: -1}).Size(); !engine.IsInvalid(err) {
		t.Fatal("negative limit accepted")
	}
	if n, _ := (Request{}).Size(); n != DefaultLimit {
		t.Fatalf("default size %d", n)
	}
	if n, _ := (Request{Limit: MaxLimit + 5}).Size(); n != MaxLimit {
		t.Fatalf("capped size %d", n)
	}
}

func TestPositionPartsSortDescending(t *testing.T) {
	t0 := time.Date(1960, 1, 1, 0, 0, 0, 5, time.UTC)
	times := []time.Time{t0.AddDate(100, 0, 0), t0.Add(1), t0, {}}
	for i := 1; i < len(times); i++ {
		if !(TimeDesc(times[i-1]) < TimeDesc(times[i])) {
			t.Fatalf("TimeDesc order wrong at %d", i)
		}
	}
	ints := []int{math.MaxInt64, 5, 0, -3, math.MinInt64}
	floats := []float64{math.Inf(1), 2.5, 0.1, 0, -0.5, math.Inf(-1)}
	for i := 1; i < len(ints); i++ {
		if !(IntDesc(ints[i-1]) < IntDesc(ints[i])) {
			t.Fatalf("IntDesc order wrong at %d", i)
		}
	}
	for i := 1; i < len(floats); i++ {
		if !(FloatDesc(floats[i-1]) < FloatDesc(floats[i])) {
			t.Fatalf("FloatDesc order wrong at %d", i)
		}
	}
	if HexDesc("09af") != "f650" {
		t.Fatalf("HexDesc = %s", HexDesc("09af"))
	}
}

func TestSlice(t *testing.T) {
	items := []string{"e", "a", "c", "b", "d"}
	pos := func(s *string) string { return *s }
	SortBy(items, pos)
	var got []string
	req := Request{Limit: 2}
	for {
		r, err := Slice("x", items, req, pos)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Items...)
		if req.Cursor = r.Next; r.Next == "" {
			break
		}
	}
	if !slices.Equal(got, []string{"a", "b", "c", "d", "e"}) {
		t.Fatalf("pages = %v", got)
	}
	// A cursor stays valid when its item is gone.
	r, _ := Slice("x", []string{"a", "c", "d"}, Request{Limit: 1, Cursor: Encode("x", "b")}, pos)
	if !slices.Equal(r.Items, []string{"c"}) || r.Next == "" {
		t.Fatalf("after a removed item: %+v", r)
	}
}
