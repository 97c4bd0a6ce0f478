package plots

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// CurveCoincide is the largest difference between two curves' means, as a share of the larger of the
// range and the largest magnitude of every mean the chart draws, under which buildCurves' caption names them as drawn on top of each
// other (recorded metrics of rules that gave the same models coincide to rounding).
const CurveCoincide = 1e-6

// curveCoincidence says which series of a curve chart are drawn on top of each other: series with the
// same x values whose means differ nowhere by more than CurveCoincide of the values drawn ("" when
// none do). labels, xs and means are the series' display names, x values and means, in drawing order.
func curveCoincidence(labels []string, xs, means [][]float64) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range means {
		for _, v := range m {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	tol := CurveCoincide * math.Max(hi-lo, math.Abs(hi))
	var groups [][]int
	for j := range labels {
		joined := false
		for g := range groups {
			f := groups[g][0]
			if slices.Equal(xs[f], xs[j]) && maxDiff(means[f], means[j]) <= tol {
				groups[g], joined = append(groups[g], j), true
				break
			}
		}
		if !joined {
			groups = append(groups, []int{j})
		}
	}
	var parts []string
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		names := make([]string, len(g))
		for k, j := range g {
			names[k] = labels[j]
		}
		parts = append(parts, joinAnd(names))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Drawn on top of each other (the same means at every point, to %g of the values drawn): %s.",
		CurveCoincide, strings.Join(parts, "; "))
}
