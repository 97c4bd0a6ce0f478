package metrics

import (
	"fmt"
	"math"
	"sort"
)

// RetentionPoint is one point of an accuracy-versus-data-retained curve.
type RetentionPoint struct {
	// Fraction is the requested fraction of inputs kept, in (0, 1].
	Fraction float64
	// Retained is the number of inputs kept: round(Fraction x N), at least 1.
	Retained int
	// Accuracy is the accuracy on the kept inputs, as a fraction.
	Accuracy float64
	// Threshold is the largest uncertainty score among the kept inputs.
	Threshold float64
}

// DefaultRetentionFractions returns steps evenly spaced fractions 1/steps, 2/steps, ..., 1.
func DefaultRetentionFractions(steps int) []float64 {
	if steps < 1 {
		steps = 1
	}
	f := make([]float64, steps)
	for i := range f {
		f[i] = float64(i+1) / float64(steps)
	}
	f[steps-1] = 1
	return f
}

// RetentionCurve returns accuracy on the retained inputs when the most uncertain inputs are
// discarded first, for each fraction of inputs retained: the calibration plot of Fischer et al.
// (2024), Sec. 3.3 and Figs. 2, 4, 6 (after Filos et al.). A well-calibrated uncertainty gives
// accuracy that rises as fewer inputs are retained. Inputs are ranked by score, lowest first; equal
// scores keep input order, so the curve is deterministic. fractions nil means
// DefaultRetentionFractions(20).
func RetentionCurve(scores []float64, correct []bool, fractions []float64) ([]RetentionPoint, error) {
	if len(scores) == 0 {
		return nil, fmt.Errorf("metrics: retention: no inputs")
	}
	if len(scores) != len(correct) {
		return nil, fmt.Errorf("metrics: retention: %d scores but %d correctness flags", len(scores), len(correct))
	}
	for i, s := range scores {
		if math.IsNaN(s) {
			return nil, fmt.Errorf("metrics: retention: uncertainty score of input %d is NaN", i)
		}
	}
	if fractions == nil {
		fractions = DefaultRetentionFractions(20)
	}
	if len(fractions) == 0 {
		return nil, fmt.Errorf("metrics: retention: empty list of fractions")
	}
	for i, f := range fractions {
		if !(f > 0 && f <= 1) {
			return nil, fmt.Errorf("metrics: retention: fraction %d is %v, want a value in (0, 1]", i, f)
		}
	}
	n := len(scores)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] < scores[order[b]] })
	hits := make([]int, n+1) // hits[k]: correct among the k least uncertain
	for k, i := range order {
		hits[k+1] = hits[k]
		if correct[i] {
			hits[k+1]++
		}
	}
	points := make([]RetentionPoint, len(fractions))
	for j, f := range fractions {
		k := max(1, int(math.Round(f*float64(n))))
		points[j] = RetentionPoint{
			Fraction: f, Retained: k,
			Accuracy:  float64(hits[k]) / float64(k),
			Threshold: scores[order[k-1]],
		}
	}
	return points, nil
}
