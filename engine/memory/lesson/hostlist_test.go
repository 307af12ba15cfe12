package lesson

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHostListMatchesASortedSet checks the domain-recall list's overlay
// against a plain sorted set through random writes (replacing, removing,
// adding) with folds forced often, and that a list once shared never
// changes.
func TestHostListMatchesASortedSet(t *testing.T) {
	old := overlayMin
	overlayMin = 3
	defer func() { overlayMin = old }()
	rng := rand.New(rand.NewPCG(1, 2))
	var base []*hostRef
	want := map[string]string{}
	for i := range 50 {
		k := fmt.Sprintf("k%03d", i*2)
		base = append(base, &hostRef{key: k, id: "base"})
		want[k] = "base"
	}
	h := &hostList{base: base}
	for step := range 2000 {
		before := h
		snapshot := keysOf(before)
		k := fmt.Sprintf("k%03d", rng.IntN(120))
		if rng.IntN(3) == 0 {
			h = h.without(k)
			delete(want, k)
		} else {
			id := fmt.Sprint(step)
			h = h.with(&hostRef{key: k, id: id})
			want[k] = id
		}
		if got := keysOf(before); !slices.Equal(got, snapshot) {
			t.Fatalf("step %d: a shared list changed", step)
		}
		var got []string
		h.each(func(r *hostRef) bool {
			if want[r.key] != r.id {
				t.Fatalf("step %d: %s is %s, want %s", step, r.key, r.id, want[r.key])
			}
			got = append(got, r.key)
			return true
		})
		keys := make([]string, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(got, keys) {
			t.Fatalf("step %d: keys %v, want %v", step, got, keys)
		}
		if len(h.gone)+len(h.added) > overlayMax(len(h.base)) {
			t.Fatalf("step %d: overlay of %d over %d never folded", step, len(h.gone)+len(h.added), len(h.base))
		}
	}
	var nilList *hostList
	nilList.each(func(*hostRef) bool { t.Fatal("a nil list has entries"); return false })
	if l := nilList.with(&hostRef{key: "a"}); len(keysOf(l)) != 1 {
		t.Fatal("with on a nil list")
	}
}

func keysOf(h *hostList) []string {
	var out []string
	h.each(func(r *hostRef) bool { out = append(out, r.key+"="+r.id); return true })
	return out
}
