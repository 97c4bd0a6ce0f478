package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Equivalent is the two one-sided tests (TOST) of Schuirmann (1987) for |mean(a) - mean(b)| < Margin:
// the difference is shown to lie within ±Margin when both H0: diff <= -Margin and H0: diff >= +Margin
// are rejected at the level, that is when P = max(PLower, PUpper) is below it; equivalently when the
// (1 - 2·level) confidence interval of the difference lies inside (-Margin, +Margin) (Lakens 2017).
type Equivalent struct {
	// Test is the t-test whose statistic both one-sided tests use (paired or Welch).
	Test Test
	// Diff, SE and DF are the difference, its standard error and degrees of freedom, as in Result.
	Diff, SE, DF float64
	// Margin is the equivalence margin, in the metric's units.
	Margin float64
	// PLower is P(T_DF >= (Diff + Margin) / SE), the p-value of H0: diff <= -Margin.
	PLower float64
	// PUpper is P(T_DF <= (Diff - Margin) / SE), the p-value of H0: diff >= +Margin.
	PUpper float64
	// P is max(PLower, PUpper), the TOST p-value.
	P float64
}

// Shown reports whether equivalence within the margin is shown at level (P < level).
func (e Equivalent) Shown(level float64) bool { return e.P < level }

// String prints the test, difference, margin and p-value.
func (e Equivalent) String() string {
	return fmt.Sprintf("TOST (%s): diff %.4g ± %.4g within ±%.4g, df %.3g, p %.3g", e.Test, e.Diff, e.SE, e.Margin, e.DF, e.P)
}

// Equivalence runs the TOST of a and b within ±margin (margin > 0, in the metric's units), paired by
// seed when both samples hold the same seeds and with Welch's statistic otherwise (as Compare picks).
// It fails, wrapping ErrNotTestable, where Compare would: a claim of "no difference" is then not
// shown, never passed by default.
func Equivalence(a, b Sample, margin float64) (Equivalent, error) {
	if !(margin > 0) || math.IsInf(margin, 0) {
		return Equivalent{}, fmt.Errorf("stats: equivalence margin %v; want a positive finite number", margin)
	}
	r, err := Compare(a, b)
	if err != nil {
		return Equivalent{}, err
	}
	return tost(r, margin), nil
}

// tost applies the two one-sided tests to the statistic of r.
func tost(r Result, margin float64) Equivalent {
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: r.DF}
	e := Equivalent{Test: r.Test, Diff: r.Diff, SE: r.SE, DF: r.DF, Margin: margin}
	e.PLower = t.Survival((r.Diff + margin) / r.SE)
	e.PUpper = t.CDF((r.Diff - margin) / r.SE)
	e.P = math.Max(e.PLower, e.PUpper)
	return e
}
