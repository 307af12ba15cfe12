package decoded

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/engine-dev/engine/engine/memory/internal/touch"
)

type rec struct {
	Name  string   `json:"name"`
	Tags  []string `json:"tags"`
	Inner *struct {
		N int `json:"n"`
	} `json:"inner"`
}

func cloneRec(r rec) rec {
	r.Tags = slices.Clone(r.Tags)
	if r.Inner != nil {
		in := *r.Inner
		r.Inner = &in
	}
	return r
}

func decode(t *testing.T, raw string) rec {
	t.Helper()
	var r rec
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// Unmarshal answers what json.Unmarshal answers, whether the bytes were
// decoded before or not, and what it returns is the caller's to change.
func TestUnmarshal(t *testing.T) {
	c := New(2, cloneRec)
	a, b := `{"name":"a","tags":["x"],"inner":{"n":1}}`, `{"name":"b","tags":["y","z"]}`
	for i, step := range []struct{ key, raw string }{
		{"k1", a}, {"k1", a}, {"k1", a}, {"k1", b}, {"k1", b}, {"k1", b}, {"k2", a}, {"k3", b}, {"k1", a}, {"k2", a}, {"k2", a}, {"k2", a},
	} {
		got, err := c.Unmarshal([]byte(step.key), []byte(step.raw))
		if want := decode(t, step.raw); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: %+v, %v; want %+v", i, got, err, want)
		}
		touch.All(&got) // the caller changes it: the cache's copy stays
		if len(c.m) > 2 {
			t.Fatalf("step %d: %d values held", i, len(c.m))
		}
	}
	if _, err := c.Unmarshal([]byte("k1"), []byte(`{"name":`)); err == nil {
		t.Fatal("bad JSON decoded")
	}
	raw := []byte(a)
	c.Unmarshal([]byte("k4"), raw)
	raw[9] = 'q' // the store's buffer, reused
	if got, _ := c.Unmarshal([]byte("k4"), []byte(a)); got.Name != "a" {
		t.Fatalf("the cache kept the caller's buffer: %+v", got)
	}
}
