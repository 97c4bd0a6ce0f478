package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MeanCI returns the two-sided confidence interval of the mean of x at confidence 1 - level,
// mean ± t(1 - level/2, n - 1) s / sqrt(n) (Student 1908). Values that are all equal give the point
// itself (a quantity that does not vary with the seed). It needs at least two finite values;
// otherwise it returns an error wrapping ErrNotTestable.
func MeanCI(x []float64, level float64) (lo, hi float64, err error) {
	if len(x) < 2 {
		return 0, 0, notTestable("%d value(s); an interval needs at least 2", len(x))
	}
	if err := checkFinite("x", x); err != nil {
		return 0, 0, err
	}
	mean, v := meanVar(x)
	if v == 0 {
		return mean, mean, nil
	}
	n := float64(len(x))
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(1-level/2) * math.Sqrt(v/n)
	return mean - half, mean + half, nil
}
