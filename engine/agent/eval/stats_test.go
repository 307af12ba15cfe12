package eval

import (
	"math"
	"testing"
)

// The bootstrap interval of a mean holds the mean, lies within the data's
// range, and is the same on every call (fixed seed).
func TestBootstrapCIHoldsTheMean(t *testing.T) {
	for _, xs := range [][]float64{
		{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		{4, 0, 0, 0},
		{11, 7, 7, 9, 11, 7},
		{0.5, 0.5},
	} {
		ci := BootstrapCI(xs)
		m := Mean(xs)
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range xs {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		if !(ci[0] <= m && m <= ci[1]) {
			t.Errorf("%v: ci95 %v does not hold the mean %v", xs, ci, m)
		}
		if ci[0] < lo || ci[1] > hi {
			t.Errorf("%v: ci95 %v leaves the data's range [%v, %v]", xs, ci, lo, hi)
		}
		if again := BootstrapCI(xs); again != ci {
			t.Errorf("%v: ci95 %v then %v: not reproducible", xs, ci, again)
		}
	}
	// Spread data gives a real interval; one case gives its value.
	if ci := BootstrapCI([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}); !(ci[0] < 5.5 && ci[1] > 5.5) {
		t.Errorf("ci95 %v is not an interval around 5.5", ci)
	}
	if ci := BootstrapCI([]float64{3}); ci != [2]float64{3, 3} {
		t.Errorf("one case: ci95 %v, want [3, 3]", ci)
	}
}

// The paired bootstrap's intervals hold the observed difference and
// relative change; a baseline of zeros has no relative change.
func TestPairedBootstrap(t *testing.T) {
	a := []float64{0, 1, 0, 0, 2, 0}
	b := []float64{4, 3, 4, 5, 4, 2}
	diff, rel, ok := PairedBootstrap(a, b)
	d := Mean(a) - Mean(b)
	r := d / Mean(b)
	if !ok || !(diff[0] <= d && d <= diff[1]) || !(rel[0] <= r && r <= rel[1]) {
		t.Fatalf("diff %v (observed %v), rel %v (observed %v), ok %v", diff, d, rel, r, ok)
	}
	if diff[1] >= 0 {
		t.Errorf("every case improves, yet the interval %v reaches 0", diff)
	}
	if _, rel, ok := PairedBootstrap([]float64{1, 2}, []float64{0, 0}); ok || !math.IsNaN(rel[0]) {
		t.Errorf("baseline 0: rel %v, ok %v; want undefined", rel, ok)
	}
}

// The sign-flip test's p-value on inputs whose 2^n assignments are
// counted by hand.
func TestSignFlipPExact(t *testing.T) {
	for _, tc := range []struct {
		a, b []float64
		want float64
	}{
		// Only all-plus and all-minus reach |sum| 5: 2 of 32.
		{[]float64{1, 1, 1, 1, 1}, []float64{0, 0, 0, 0, 0}, 2.0 / 32},
		// ±1±2±3: |sum| 6 twice in 8.
		{[]float64{1, 2, 3}, []float64{0, 0, 0}, 2.0 / 8},
		// Differences 3 and -1: every assignment reaches |2|.
		{[]float64{5, 1}, []float64{2, 2}, 1},
		// No difference at all.
		{[]float64{2, 2, 2}, []float64{2, 2, 2}, 1},
		// Fewer errors with memory on 4 cases of 4: 2 of 16.
		{[]float64{0, 0, 1, 0}, []float64{4, 2, 3, 4}, 2.0 / 16},
	} {
		p, exact := SignFlipP(tc.a, tc.b)
		if !exact || math.Abs(p-tc.want) > 1e-12 {
			t.Errorf("SignFlipP(%v, %v) = %v (exact %v), want %v", tc.a, tc.b, p, exact, tc.want)
		}
	}
}

// Above exactLimit cases the test samples assignments, with the fixed seed.
func TestSignFlipPSampled(t *testing.T) {
	n := exactLimit + 4
	a, b := make([]float64, n), make([]float64, n)
	for i := range a {
		a[i] = 1
	}
	p, exact := SignFlipP(a, b)
	if exact {
		t.Fatal("exact above the limit")
	}
	// 2 of 2^20 assignments reach it: essentially none of the samples.
	if p <= 0 || p > 5.0/(Resamples+1) {
		t.Errorf("p = %v, want about 1/%d", p, Resamples+1)
	}
	if p2, _ := SignFlipP(a, b); p2 != p {
		t.Errorf("p %v then %v: not reproducible", p, p2)
	}
	// Alternating signs: no effect, p near 1.
	for i := range a {
		if i%2 == 1 {
			a[i] = -1
		}
	}
	if p, _ := SignFlipP(a, b); p < 0.9 {
		t.Errorf("no effect, yet p = %v", p)
	}
}
