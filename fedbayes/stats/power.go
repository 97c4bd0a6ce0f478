package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// CriticalT is the |t| a two-sided t-test with df degrees of freedom must exceed to pass the
// smallest of Holm's thresholds over m comparisons at level: t(1 - level/(2m), df). It is the bar
// the most significant comparison of a family meets (Holm 1979; Bonferroni's for that first step).
func CriticalT(df float64, m int, level float64) (float64, error) {
	if !(df > 0) || m < 1 || !(level > 0 && level < 1) {
		return 0, fmt.Errorf("stats: critical t needs df > 0 (%v), m >= 1 (%d) and 0 < level < 1 (%v)", df, m, level)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - level/float64(2*m)), nil
}

// Power describes a comparison for SeedsForPower: its observed mean difference and the standard
// deviation of one seed's contribution, Paired for a paired t-test by seed (SD of the paired
// differences; df n - 1) or not for Welch's test on two samples of n seeds each (SD sqrt(s_a² + s_b²);
// df 2(n - 1), the Welch-Satterthwaite value when both samples have the same spread).
type Power struct {
	Diff, SD float64
	Paired   bool
}

// df is the test's degrees of freedom at n seeds.
func (p Power) df(n int) float64 {
	if p.Paired {
		return float64(n - 1)
	}
	return float64(2 * (n - 1))
}

// SeedsForPower returns the smallest number of seeds n, 2 <= n <= maxSeeds, at which a t-test of an
// effect of p.Diff with per-seed SD p.SD, against Holm's first threshold over m comparisons at level,
// reaches power: the shifted central-t approximation |Diff| sqrt(n) / SD >= t(1 - level/(2m), df) +
// t(power, df) (Cohen 1988, Ch. 2; exact for a known SD as df grows). power 0.5 gives the n at which
// the observed effect itself would just pass. It returns ok false when maxSeeds are not enough (the
// effect is within the noise), and an error for a bad input, naming it.
func SeedsForPower(p Power, m int, level, power float64, maxSeeds int) (n int, ok bool, err error) {
	switch {
	case math.IsNaN(p.Diff) || math.IsInf(p.Diff, 0):
		return 0, false, fmt.Errorf("stats: seeds for power: difference %v is not finite", p.Diff)
	case !(p.SD > 0) || math.IsInf(p.SD, 0):
		return 0, false, fmt.Errorf("stats: seeds for power: SD %v must be positive and finite", p.SD)
	case !(power >= 0.5 && power < 1):
		return 0, false, fmt.Errorf("stats: seeds for power: power %v must lie in [0.5, 1)", power)
	case maxSeeds < 2:
		return 0, false, fmt.Errorf("stats: seeds for power: maxSeeds %d must be at least 2", maxSeeds)
	}
	for n := 2; n <= maxSeeds; n++ {
		df := p.df(n)
		crit, err := CriticalT(df, m, level)
		if err != nil {
			return 0, false, err
		}
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
		// The standard error at n seeds is SD / sqrt(n) for both tests (Welch: sqrt((s_a² + s_b²) / n)).
		if math.Abs(p.Diff)*math.Sqrt(float64(n))/p.SD >= crit+t.Quantile(power) {
			return n, true, nil
		}
	}
	return 0, false, nil
}
