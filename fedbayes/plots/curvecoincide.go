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
	groups := Coincident(len(labels), func(f, j int) bool {
		return slices.Equal(xs[f], xs[j]) && maxDiff(means[f], means[j]) <= tol
	})
	parts := make([]string, len(groups))
	for g, members := range groups {
		parts[g] = joinAnd(pick(labels, members))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Drawn on top of each other (the same means at every point, to %g of the values drawn): %s.",
		CurveCoincide, strings.Join(parts, "; "))
}

// Coincident groups the items 0..n-1 of a chart by same(first, j): each item joins the first group
// whose first member it coincides with, else starts a group. It returns the groups of two or more
// (indices in order), the curves a caption names as drawn on top of each other.
func Coincident(n int, same func(first, j int) bool) [][]int {
	var groups [][]int
	for j := range n {
		joined := false
		for g := range groups {
			if same(groups[g][0], j) {
				groups[g], joined = append(groups[g], j), true
				break
			}
		}
		if !joined {
			groups = append(groups, []int{j})
		}
	}
	out := groups[:0]
	for _, g := range groups {
		if len(g) > 1 {
			out = append(out, g)
		}
	}
	return out
}

// pick returns names[i] for each i of idx.
func pick(names []string, idx []int) []string {
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = names[i]
	}
	return out
}
