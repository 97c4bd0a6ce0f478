package stats

import (
	"fmt"
	"sort"
)

// Sample is a metric's value per seed: Values[i] comes from the run of seed Seeds[i]. Seeds may be
// nil when they are not known; such a sample is never paired.
type Sample struct {
	// Seeds are the runs' seeds, one per value, or nil when unknown.
	Seeds []int64
	// Values are the metric's values.
	Values []float64
}

// N is the number of values.
func (s Sample) N() int { return len(s.Values) }

// bySeed returns the values keyed by seed, or false when the seeds are unknown, do not match the
// values in number, or hold a seed twice.
func (s Sample) bySeed() (map[int64]float64, bool) {
	if len(s.Seeds) == 0 || len(s.Seeds) != len(s.Values) {
		return nil, false
	}
	m := make(map[int64]float64, len(s.Seeds))
	for i, seed := range s.Seeds {
		if _, dup := m[seed]; dup {
			return nil, false
		}
		m[seed] = s.Values[i]
	}
	return m, true
}

// Pair returns the values of a and b matched by seed, in increasing seed order, when both samples
// hold exactly the same seeds (each once); ok is false otherwise. Matching is by seed, never by
// position.
func Pair(a, b Sample) (x, y []float64, ok bool) {
	ma, okA := a.bySeed()
	mb, okB := b.bySeed()
	if !okA || !okB || len(ma) != len(mb) {
		return nil, nil, false
	}
	seeds := make([]int64, 0, len(ma))
	for s := range ma {
		if _, in := mb[s]; !in {
			return nil, nil, false
		}
		seeds = append(seeds, s)
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
	x, y = make([]float64, len(seeds)), make([]float64, len(seeds))
	for i, s := range seeds {
		x[i], y[i] = ma[s], mb[s]
	}
	return x, y, true
}

// Compare tests mean(a) = mean(b), two-sided: by the paired t-test when both samples hold the same
// seeds (matched by seed), by Welch's t-test otherwise. Result.Test says which was used. An error
// wrapping ErrNotTestable says why the comparison cannot be made (too few seeds, a non-finite value,
// no spread).
func Compare(a, b Sample) (Result, error) {
	if len(a.Seeds) != 0 && len(a.Seeds) != len(a.Values) || len(b.Seeds) != 0 && len(b.Seeds) != len(b.Values) {
		return Result{}, fmt.Errorf("stats: a sample has %d seeds for %d values, the other %d for %d", len(a.Seeds), len(a.Values), len(b.Seeds), len(b.Values))
	}
	if x, y, ok := Pair(a, b); ok {
		return PairedT(x, y)
	}
	return WelchT(a.Values, b.Values)
}

// TestFor names the test Compare applies to a and b, without running it.
func TestFor(a, b Sample) Test {
	if _, _, ok := Pair(a, b); ok {
		return Paired
	}
	return Welch
}
