package stats

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Test names a two-sample test.
type Test string

const (
	// Paired is Student's t-test on the differences of values matched by seed (Student 1908): t =
	// mean(d) / (sd(d) / sqrt(n)), n - 1 degrees of freedom.
	Paired Test = "paired t-test by seed"
	// Welch is Welch's unequal-variance t-test (Welch 1947): t = (mean(a) - mean(b)) / sqrt(s_a²/n_a +
	// s_b²/n_b), with the Welch-Satterthwaite degrees of freedom.
	Welch Test = "Welch's t-test"
)

// DefaultLevel is the significance level the tables and the report use unless told otherwise.
const DefaultLevel = 0.05

// ErrNotTestable marks a comparison the test cannot make: fewer than two values (or pairs), a
// non-finite value, or no spread at all (every difference equal), where the t statistic is undefined.
// Errors wrap it with the reason; test it with errors.Is.
var ErrNotTestable = errors.New("not testable")

// notTestable returns an error wrapping ErrNotTestable with a reason.
func notTestable(format string, args ...any) error {
	return fmt.Errorf("stats: %w: %s", ErrNotTestable, fmt.Sprintf(format, args...))
}

// Result is a two-sided t-test of the difference mean(a) - mean(b).
type Result struct {
	// Test is the test applied.
	Test Test
	// Diff is the estimated difference: the mean of the paired differences a_i - b_i, or mean(a) -
	// mean(b) for Welch's test (the two are equal when every seed is in both samples).
	Diff float64
	// SE is the standard error of Diff.
	SE float64
	// DF is the degrees of freedom of the t distribution.
	DF float64
	// T is Diff / SE.
	T float64
	// P is the two-sided p-value, 2 P(T_DF > |T|).
	P float64
	// NA and NB are the sample sizes; for the paired test both are the number of pairs.
	NA, NB int
}

// Significant reports whether the two-sided p-value is below level.
func (r Result) Significant(level float64) bool { return r.P < level }

// String prints the test, difference, SE, degrees of freedom, t and p.
func (r Result) String() string {
	return fmt.Sprintf("%s: diff %.4g ± %.4g, df %.3g, t %.3f, p %.3g", r.Test, r.Diff, r.SE, r.DF, r.T, r.P)
}

// checkFinite returns a not-testable error naming the first non-finite value of x.
func checkFinite(name string, x []float64) error {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return notTestable("%s[%d] is %v", name, i, v)
		}
	}
	return nil
}

// RoundingSpread is the one rule for a degenerate sample: a sample (or a set of paired differences)
// whose standard deviation is at most RoundingSpread times the largest magnitude among the values
// compared is constant, its spread float64 rounding (a − b of equal decimal differences differs in
// its last bits), and is not tested; the t statistic of such a spread would be ~1e15 and its p-value 0.
const RoundingSpread = 1e-12

// magnitude is the largest |value| in the samples.
func magnitude(samples ...[]float64) float64 {
	m := 0.0
	for _, x := range samples {
		for _, v := range x {
			m = math.Max(m, math.Abs(v))
		}
	}
	return m
}

// meanVar returns the mean and the sample variance (n - 1 denominator, two passes) of x, len(x) >= 2.
func meanVar(x []float64) (mean, variance float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		variance += (v - mean) * (v - mean)
	}
	return mean, variance / float64(len(x)-1)
}

// twoSided is 2 P(T_df > |t|).
func twoSided(t, df float64) float64 {
	return math.Min(1, 2*distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t)))
}

// PairedT is Student's paired t-test of mean(a - b) = 0, a[i] and b[i] being the values of the same
// seed (Student 1908). It needs at least two pairs, finite values and differences that are not all
// equal; otherwise it returns an error wrapping ErrNotTestable.
func PairedT(a, b []float64) (Result, error) {
	if len(a) != len(b) {
		return Result{}, fmt.Errorf("stats: paired t-test of %d and %d values", len(a), len(b))
	}
	if len(a) < 2 {
		return Result{}, notTestable("%d pair(s); a paired t-test needs at least 2", len(a))
	}
	if err := checkFinite("a", a); err != nil {
		return Result{}, err
	}
	if err := checkFinite("b", b); err != nil {
		return Result{}, err
	}
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	mean, v := meanVar(d)
	n := float64(len(d))
	se := math.Sqrt(v / n)
	if math.Sqrt(v) <= RoundingSpread*magnitude(a, b) {
		return Result{}, notTestable("every paired difference is %g to rounding (their spread is within %g of the values' magnitude): no spread to test against", mean, RoundingSpread)
	}
	r := Result{Test: Paired, Diff: mean, SE: se, DF: n - 1, T: mean / se, NA: len(a), NB: len(b)}
	r.P = twoSided(r.T, r.DF)
	return r, nil
}

// WelchT is Welch's unequal-variance t-test of mean(a) = mean(b) (Welch 1947), for samples that do not
// share seeds. Each sample needs at least two finite values, and at least one must have spread;
// otherwise it returns an error wrapping ErrNotTestable.
func WelchT(a, b []float64) (Result, error) {
	if len(a) < 2 || len(b) < 2 {
		return Result{}, notTestable("%d and %d values; Welch's t-test needs at least 2 in each", len(a), len(b))
	}
	if err := checkFinite("a", a); err != nil {
		return Result{}, err
	}
	if err := checkFinite("b", b); err != nil {
		return Result{}, err
	}
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	na, nb := float64(len(a)), float64(len(b))
	qa, qb := va/na, vb/nb
	se := math.Sqrt(qa + qb)
	if lim := RoundingSpread * magnitude(a, b); math.Sqrt(va) <= lim && math.Sqrt(vb) <= lim {
		return Result{}, notTestable("both samples are constant to rounding (%g and %g; their spreads are within %g of the values' magnitude): no spread to test against", ma, mb, RoundingSpread)
	}
	// Welch-Satterthwaite: (qa + qb)² / (qa²/(na-1) + qb²/(nb-1)); a constant sample adds nothing.
	df := (qa + qb) * (qa + qb) / (qa*qa/(na-1) + qb*qb/(nb-1))
	r := Result{Test: Welch, Diff: ma - mb, SE: se, DF: df, T: (ma - mb) / se, NA: len(a), NB: len(b)}
	r.P = twoSided(r.T, r.DF)
	return r, nil
}
