package results

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"fedbayes.dev/fedbayes/stats"
)

// markSignificant applies BoldSignificant to column j, whose best cell is best (on sign*mean): every
// other present cell with a finite mean is compared with it by stats.Compare (paired by seed when
// both ran the same seeds, Welch otherwise), the column's p-values are Holm-corrected, and a cell whose
// corrected p-value is below the level and whose mean is on the worse side is significantly worse. The
// cells that are not are bold, where at least one is. The comparisons made are counted in t.Tests and
// t.Untestable for the note.
func (t *Table) markSignificant(j int, sign float64, best *Cell) {
	var idx []int
	var p []float64
	for i := range t.Rows {
		c := &t.Rows[i].Cells[j]
		if c == best || !c.Present || !finite(c.Mean) {
			continue
		}
		r, err := stats.Compare(c.Sample, best.Sample)
		switch {
		case err == nil:
			t.Tests[r.Test]++
		case errors.Is(err, stats.ErrNotTestable):
			t.Untestable++
			r.P = math.NaN() // no member of the family (stats.Holm)
		default:
			r.P = math.NaN() // seeds and values out of step: cannot happen for cells built by NewTable
			t.Untestable++
		}
		if sign*(best.Mean-c.Mean) <= 0 {
			r.P = math.NaN() // a tie with the best is never worse
		}
		idx, p = append(idx, i), append(p, r.P)
	}
	reject := stats.HolmReject(p, t.Spec.Level)
	someWorse := false
	for _, w := range reject {
		someWorse = someWorse || w
	}
	if !someWorse {
		return
	}
	best.Bold = true
	for k, i := range idx {
		t.Rows[i].Cells[j].Bold = !reject[k]
	}
}

// significanceNote says how BoldSignificant bolded: the test and how many comparisons each
// pairing made, the level, the correction, and the comparisons that could not be made.
func (t *Table) significanceNote() string {
	var used []string
	for _, test := range []stats.Test{stats.Paired, stats.Welch} {
		if n := t.Tests[test]; n > 0 {
			what := "runs of the same seeds"
			if test == stats.Welch {
				what = "runs of different seeds"
			}
			used = append(used, fmt.Sprintf("%s (%d %s, %s)", test, n, plural(n, "comparison"), what))
		}
	}
	how := "two-sided t-test (paired by seed where two cells ran the same seeds, Welch's otherwise)"
	if len(used) > 0 {
		how = "two-sided " + strings.Join(used, " and ")
	}
	note := fmt.Sprintf("Bold: cells not significantly worse than their column's best, only where some cell is;"+
		" each cell is compared with the best by a %s at level %g, Holm-corrected within each column.", how, t.Spec.Level)
	if t.Untestable > 0 {
		note += fmt.Sprintf(" %d %s could not be tested (one seed, or no spread in the differences) and count as not worse.",
			t.Untestable, plural(t.Untestable, "comparison"))
	}
	return note
}

// plural returns word with an "s" unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
