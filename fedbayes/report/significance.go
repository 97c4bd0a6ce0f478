package report

import (
	"fmt"
	"math"
	"strings"

	"fedbayes.dev/fedbayes/internal/words"
	"fedbayes.dev/fedbayes/stats"
)

// markSignificant applies BoldSignificant to column j, whose best cell is best (on sign*mean).
// Every pair of present cells with a finite mean is compared by stats.Compare (paired by seed when
// both ran the same seeds, Welch otherwise) and the column's p-values are Holm-corrected together: a
// cell is significantly worse when its comparison with the best is rejected at the level and its mean
// is on the worse side. The family holds every pair, not only the pairs with the best, because the
// best is picked by its mean: with three or more identical cells, comparing the others with the
// picked one alone flags more than the level (5-9 % of A/A tables of 3-6 cells). The cells
// that are not significantly worse are bold, where at least one is. The comparisons are counted in
// t.Tests and t.Untestable for the note.
func (t *Table) markSignificant(j int, sign float64, best *Cell) {
	var cells []*Cell
	bi := -1
	for i := range t.Rows {
		c := &t.Rows[i].Cells[j]
		if c.Present && finite(c.Mean) {
			if c == best {
				bi = len(cells)
			}
			cells = append(cells, c)
		}
	}
	var p []float64
	withBest := map[int]int{} // cell index -> its pair with the best in p
	for a := range cells {
		for b := a + 1; b < len(cells); b++ {
			r, err := stats.Compare(cells[a].Sample, cells[b].Sample)
			if err != nil { // not testable, or (cannot happen for cells built by NewTable) seeds out of step
				t.Untestable++
				r.P = math.NaN() // no member of the family (stats.Holm)
			} else {
				t.Tests[r.Test]++
			}
			if a == bi {
				withBest[b] = len(p)
			} else if b == bi {
				withBest[a] = len(p)
			}
			p = append(p, r.P)
		}
	}
	reject := stats.HolmReject(p, t.Spec.Level)
	worse := make([]bool, len(cells))
	someWorse := false
	for i, k := range withBest {
		// A tie with the best is never worse.
		worse[i] = reject[k] && sign*(best.Mean-cells[i].Mean) > 0
		someWorse = someWorse || worse[i]
	}
	if !someWorse {
		return
	}
	for i, c := range cells {
		// A cell of one run cannot be compared, so it is not shown to be as good as the best.
		c.Bold = !worse[i] && (c == best || len(c.Sample.Values) > 1)
		t.SingleRun = t.SingleRun || (len(c.Sample.Values) < 2 && c != best)
	}
}

// significanceNote says how BoldSignificant bolded: the test and how many comparisons each
// pairing made, the level, the correction, and the comparisons that could not be made.
func (t *Table) significanceNote() string {
	var used []string
	for _, test := range []stats.Test{stats.Paired, stats.Welch} {
		if n := t.Tests[test]; n > 0 {
			what := "cells of the same seeds"
			if test == stats.Welch {
				what = "cells of different seeds"
			}
			used = append(used, fmt.Sprintf("%s (%d %s, %s)", test, n, words.Plural(n, "comparison"), what))
		}
	}
	how := "two-sided t-test (paired by seed where two cells ran the same seeds, Welch's otherwise)"
	if len(used) > 0 {
		how = "two-sided " + strings.Join(used, " and ")
	}
	note := fmt.Sprintf("Bold: cells not significantly worse than their column's best, only where some cell is;"+
		" every pair of cells in a column is compared by a %s at level %g, Holm-corrected over the pairs of each column.", how, t.Spec.Level)
	if t.Untestable > 0 {
		note += fmt.Sprintf(" %d %s could not be tested (one seed, or no spread in the differences): no difference.",
			t.Untestable, words.Plural(t.Untestable, "comparison"))
	}
	if t.SingleRun {
		note += " A cell of one run is not bold: it cannot be compared."
	}
	return note
}
