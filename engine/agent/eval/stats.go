package eval

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Seed seeds every resampling, so the same runs always give the same report.
const Seed = 24

// Resamples is the number of bootstrap resamples behind each interval.
const Resamples = 10000

// exactLimit is the largest number of cases whose sign-flip test
// enumerates all 2^n sign assignments; above it the test samples
// Resamples of them.
const exactLimit = 16

// Mean is the arithmetic mean of xs (0 for none).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// newRand is the fixed-seed source of one resampling.
func newRand() *rand.Rand { return rand.New(rand.NewPCG(Seed, Seed)) }

// percentile is the p-quantile (0..1) of sorted xs, linearly interpolated.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := p * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	frac := pos - float64(lo)
	return sorted[lo]*(1-frac) + sorted[hi]*frac
}

// BootstrapCI is the 95 % percentile bootstrap interval of the mean of xs
// (one value per case): cases are resampled with replacement. One value
// gives the value itself.
func BootstrapCI(xs []float64) [2]float64 {
	if len(xs) == 0 {
		return [2]float64{math.NaN(), math.NaN()}
	}
	if len(xs) == 1 {
		return [2]float64{xs[0], xs[0]}
	}
	r := newRand()
	means := make([]float64, Resamples)
	for i := range means {
		s := 0.0
		for range xs {
			s += xs[r.IntN(len(xs))]
		}
		means[i] = s / float64(len(xs))
	}
	sort.Float64s(means)
	return [2]float64{percentile(means, 0.025), percentile(means, 0.975)}
}

// PairedBootstrap resamples the pairs (a[i], b[i]) (one per case) and
// returns the 95 % percentile intervals of mean(a)-mean(b) and of the
// relative change (mean(a)-mean(b))/mean(b). ok is false when the
// relative change is undefined (the baseline's mean is 0); resamples
// whose baseline mean is 0 are left out of its interval.
func PairedBootstrap(a, b []float64) (diff, rel [2]float64, ok bool) {
	n := len(a)
	if n == 0 || n != len(b) {
		nan := [2]float64{math.NaN(), math.NaN()}
		return nan, nan, false
	}
	ma, mb := Mean(a), Mean(b)
	ok = mb != 0
	if n == 1 {
		d := ma - mb
		rel = [2]float64{math.NaN(), math.NaN()}
		if ok {
			rel = [2]float64{d / mb, d / mb}
		}
		return [2]float64{d, d}, rel, ok
	}
	r := newRand()
	diffs := make([]float64, 0, Resamples)
	rels := make([]float64, 0, Resamples)
	for range Resamples {
		sa, sb := 0.0, 0.0
		for range n {
			j := r.IntN(n)
			sa += a[j]
			sb += b[j]
		}
		diffs = append(diffs, (sa-sb)/float64(n))
		if sb != 0 {
			rels = append(rels, (sa-sb)/sb)
		}
	}
	sort.Float64s(diffs)
	diff = [2]float64{percentile(diffs, 0.025), percentile(diffs, 0.975)}
	rel = [2]float64{math.NaN(), math.NaN()}
	if ok && len(rels) > 0 {
		sort.Float64s(rels)
		rel = [2]float64{percentile(rels, 0.025), percentile(rels, 0.975)}
	}
	return diff, rel, ok
}

// SignFlipP is the two-sided p-value of the paired sign-flip permutation
// test of mean(a-b) = 0: under the null each case's difference is as
// likely negative as positive, so the p-value is the share of the 2^n
// sign assignments whose |mean| is at least the observed one. It is exact
// up to exactLimit cases, and above that estimated from Resamples random
// assignments as (hits+1)/(Resamples+1). exact says which.
func SignFlipP(a, b []float64) (p float64, exact bool) {
	n := len(a)
	if n == 0 || n != len(b) {
		return math.NaN(), true
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = a[i] - b[i]
	}
	obs := math.Abs(sum(d))
	// Sums that differ only by float rounding count as equal.
	tol := 1e-9 * (1 + obs)
	if n <= exactLimit {
		hits := 0
		total := 1 << n
		for mask := range total {
			s := 0.0
			for i, x := range d {
				if mask&(1<<i) != 0 {
					s -= x
				} else {
					s += x
				}
			}
			if math.Abs(s) >= obs-tol {
				hits++
			}
		}
		return float64(hits) / float64(total), true
	}
	r := newRand()
	hits := 0
	for range Resamples {
		s := 0.0
		for _, x := range d {
			if r.IntN(2) == 0 {
				s -= x
			} else {
				s += x
			}
		}
		if math.Abs(s) >= obs-tol {
			hits++
		}
	}
	return float64(hits+1) / float64(Resamples+1), false
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}
