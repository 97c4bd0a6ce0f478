package metrics

import (
	"fmt"
	"math"
)

// CoveragePoint is one point of a regression calibration curve: the fraction of targets inside the
// central Level-probability interval of their Gaussian predictive.
type CoveragePoint struct {
	// Level is the nominal probability of the central interval mu +- z sigma.
	Level float64
	// Observed is the fraction of targets that fell inside it; equal to Level when calibrated.
	Observed float64
}

// RegressionResult holds the regression metrics of a set of Gaussian predictions N(mu, sigma^2).
type RegressionResult struct {
	// N is the number of scalar predictions.
	N int
	// MSE is the mean squared error of the predictive means (Hasan (2023), Table 3.2).
	MSE float64
	// HasVariance reports whether variances were given; the fields below are zero otherwise.
	HasVariance bool
	// NLL is the mean Gaussian negative log-likelihood 0.5 log(2 pi sigma^2) + (y - mu)^2 / (2
	// sigma^2) in nats (Hasan (2023), Eq. 2.16 with the Gaussian predictive of Sec. 3.1.2; Table 4.2).
	NLL float64
	// MeanVariance is the mean predicted variance.
	MeanVariance float64
	// VarianceRatio is MSE / MeanVariance: 1 when the predicted variance matches the actual squared
	// error on average (Hasan (2023), Sec. 2.2.4), above 1 when overconfident.
	VarianceRatio float64
	// MeanZ2 is the mean standardised squared error (y - mu)^2 / sigma^2, 1 when calibrated.
	MeanZ2 float64
	// Coverage is the calibration curve at the accumulator's levels.
	Coverage []CoveragePoint
	// CalibrationError is the mean |Observed - Level| over Coverage, a fraction.
	CalibrationError float64
}

// DefaultCoverageLevels returns the central-interval levels 0.05, 0.10, ..., 0.95.
func DefaultCoverageLevels() []float64 {
	l := make([]float64, 19)
	for i := range l {
		l[i] = float64(i+1) / 20
	}
	return l
}

// Regression accumulates MSE, Gaussian NLL and variance calibration over batches.
type Regression struct {
	levels  []float64
	z       []float64
	batches int

	n       int
	withVar int
	sqErr   float64
	nll     float64
	varSum  float64
	z2Sum   float64
	covered []int
}

// NewRegression returns an empty accumulator whose calibration curve uses the given central-interval
// levels in (0, 1) (nil means DefaultCoverageLevels).
func NewRegression(levels []float64) (*Regression, error) {
	if levels == nil {
		levels = DefaultCoverageLevels()
	}
	if len(levels) == 0 {
		return nil, fmt.Errorf("metrics: regression: empty list of coverage levels")
	}
	z := make([]float64, len(levels))
	for i, l := range levels {
		if !(l > 0 && l < 1) {
			return nil, fmt.Errorf("metrics: regression: coverage level %d is %v, want a value in (0, 1)", i, l)
		}
		z[i] = math.Sqrt2 * math.Erfinv(l) // P(|Z| <= z) = l for Z ~ N(0, 1)
	}
	return &Regression{levels: append([]float64(nil), levels...), z: z, covered: make([]int, len(levels))}, nil
}

// Add accumulates a batch of scalar predictions: predictive means, predictive variances (sigma^2 >
// 0; nil for point predictions, which then only contribute to MSE) and targets, all of one length.
// Mixing batches with and without variances is an error. A rejected batch changes nothing.
func (a *Regression) Add(mean, variance, target []float32) error {
	n := len(target)
	if n == 0 {
		return fmt.Errorf("metrics: regression: batch %d is empty", a.batches)
	}
	if len(mean) != n || (variance != nil && len(variance) != n) {
		return fmt.Errorf("metrics: regression: batch %d has %d means, %d variances and %d targets; want equal lengths",
			a.batches, len(mean), len(variance), n)
	}
	if a.n > 0 && (variance != nil) != (a.withVar > 0) {
		return fmt.Errorf("metrics: regression: batch %d: variances given for some batches but not others", a.batches)
	}
	for i := range n {
		where := exampleWhere("regression", a.batches, a.n, i)
		if v := float64(mean[i]); math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("metrics: %s: predictive mean is %v", where(), mean[i])
		}
		if v := float64(target[i]); math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("metrics: %s: target is %v", where(), target[i])
		}
		if variance != nil {
			if v := float64(variance[i]); !(v > 0) || math.IsInf(v, 0) {
				return fmt.Errorf("metrics: %s: predictive variance is %v, want a finite value > 0", where(), variance[i])
			}
		}
	}
	for i := range n {
		d := float64(target[i]) - float64(mean[i])
		d2 := d * d
		a.sqErr += d2
		if variance != nil {
			v := float64(variance[i])
			z2 := d2 / v
			a.nll += 0.5*math.Log(2*math.Pi*v) + 0.5*z2
			a.varSum += v
			a.z2Sum += z2
			ad := math.Abs(d)
			sd := math.Sqrt(v)
			for j, z := range a.z {
				if ad <= z*sd {
					a.covered[j]++
				}
			}
			a.withVar++
		}
		a.n++
	}
	a.batches++
	return nil
}

// Result returns the metrics of everything added so far; it is an error if nothing was added.
func (a *Regression) Result() (RegressionResult, error) {
	if a.n == 0 {
		return RegressionResult{}, fmt.Errorf("metrics: regression: no predictions were added")
	}
	n := float64(a.n)
	r := RegressionResult{N: a.n, MSE: a.sqErr / n}
	if a.withVar == 0 {
		return r, nil
	}
	r.HasVariance = true
	r.NLL = a.nll / n
	r.MeanVariance = a.varSum / n
	r.VarianceRatio = r.MSE / r.MeanVariance
	r.MeanZ2 = a.z2Sum / n
	r.Coverage = make([]CoveragePoint, len(a.levels))
	var ce float64
	for j, l := range a.levels {
		obs := float64(a.covered[j]) / n
		r.Coverage[j] = CoveragePoint{Level: l, Observed: obs}
		ce += math.Abs(obs - l)
	}
	r.CalibrationError = ce / float64(len(a.levels))
	return r, nil
}

// EvaluateRegression is the one-shot form of Regression with DefaultCoverageLevels.
func EvaluateRegression(mean, variance, target []float32) (RegressionResult, error) {
	a, err := NewRegression(nil)
	if err != nil {
		return RegressionResult{}, err
	}
	if err := a.Add(mean, variance, target); err != nil {
		return RegressionResult{}, err
	}
	return a.Result()
}
