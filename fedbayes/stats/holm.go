package stats

import (
	"math"
	"sort"
)

// Holm returns Holm's step-down adjusted p-values of a family of comparisons (Holm 1979), in the
// order of p: with the m finite p-values sorted increasingly, p_(1) <= ... <= p_(m), the adjusted
// value of p_(i) is max_{j <= i} min(1, (m - j + 1) p_(j)). Rejecting every hypothesis whose adjusted
// p-value is below the level controls the family-wise error rate at that level under any dependence
// between the tests. A NaN p-value (a comparison that could not be made) is no member of the family:
// it stays NaN and does not count in m.
func Holm(p []float64) []float64 {
	adj := make([]float64, len(p))
	var idx []int
	for i, v := range p {
		adj[i] = math.NaN()
		if !math.IsNaN(v) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	m := len(idx)
	running := 0.0
	for j, i := range idx {
		running = math.Max(running, math.Min(1, float64(m-j)*p[i]))
		adj[i] = running
	}
	return adj
}

// HolmReject reports, for each p-value, whether Holm's procedure at level rejects it (see Holm).
func HolmReject(p []float64, level float64) []bool {
	adj := Holm(p)
	out := make([]bool, len(p))
	for i, a := range adj {
		out[i] = a < level
	}
	return out
}
