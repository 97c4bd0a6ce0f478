package predictive

import (
	"fmt"
	"math"
)

// BetaPoint is one point of the NLL-versus-beta curve.
type BetaPoint struct {
	Beta float64 `json:"beta"`
	NLL  float64 `json:"nll"`
}

// BetaFit is the beta of beta-PredBayes fitted on the server set (Hasan (2023), Eq. 4.11), with the
// curve it was chosen from.
type BetaFit struct {
	// Beta is the minimiser of the server NLL within [FitOptions.Min, FitOptions.Max].
	Beta float64 `json:"beta"`
	// NLL is the mean server NLL at Beta.
	NLL float64 `json:"nll"`
	// Curve is the NLL on the evenly spaced grid that bracketed the minimum.
	Curve []BetaPoint `json:"curve"`
}

// FitOptions controls FitBeta.
type FitOptions struct {
	// Min and Max bound beta; both zero means [0, 1], between the mixture and the product.
	Min, Max float64
	// GridPoints is the number of evenly spaced points of the reported curve (default 21, at least 3).
	GridPoints int
	// Tol is the width of the final bracket of the golden-section refinement (default 1e-6).
	Tol float64
}

func (o FitOptions) withDefaults() (FitOptions, error) {
	if o.Min == 0 && o.Max == 0 {
		o.Max = 1
	}
	if !(o.Max > o.Min) || math.IsInf(o.Min, 0) || math.IsInf(o.Max, 0) {
		return o, fmt.Errorf("predictive: the range Min, Max = [%v, %v] is empty or not finite", o.Min, o.Max)
	}
	if o.GridPoints == 0 {
		o.GridPoints = 21
	}
	if o.GridPoints < 3 {
		return o, fmt.Errorf("predictive: GridPoints = %d, want at least 3", o.GridPoints)
	}
	if o.Tol == 0 {
		o.Tol = 1e-6
	}
	if !(o.Tol > 0) {
		return o, fmt.Errorf("predictive: Tol = %v, want positive", o.Tol)
	}
	return o, nil
}

// FitBetaClass fits beta of the classification beta-PredBayes (Hasan (2023), Eq. 4.11) to the
// labelled server set: the NLL of Eq. 4.8 is evaluated on a grid (the reported curve), and the
// best grid cell is refined by golden-section search. In beta the NLL is a log-sum-exp of affine
// functions minus an affine function, hence convex, so the refinement finds the global minimum on
// the range (the thesis uses a gradient optimiser for the same one-dimensional problem).
func FitBetaClass(a *ClassAggregate, labels []int32, opt FitOptions) (BetaFit, error) {
	return fitBeta(func(b float64) (float64, error) { return a.NLL(b, labels) }, opt)
}

// FitBetaGauss fits beta of the regression beta-PredBayes (Hasan (2023), Eqs. 4.9-4.11) to the
// server targets with the Gaussian NLL, like FitBetaClass. The Gaussian NLL is convex in beta
// where the interpolated precision is positive (minus the log of an affine function plus a
// quadratic-over-linear term).
func FitBetaGauss(a *GaussAggregate, targets []float32, opt FitOptions) (BetaFit, error) {
	return fitBeta(func(b float64) (float64, error) { return a.NLL(b, targets) }, opt)
}

// fitBeta minimises f on [Min, Max]: grid, then golden section inside the best grid cell.
func fitBeta(f func(float64) (float64, error), opt FitOptions) (BetaFit, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return BetaFit{}, err
	}
	fit := BetaFit{Curve: make([]BetaPoint, opt.GridPoints), NLL: math.Inf(1)}
	best := -1
	step := (opt.Max - opt.Min) / float64(opt.GridPoints-1)
	for i := range fit.Curve {
		b := opt.Min + float64(i)*step
		if i == opt.GridPoints-1 {
			b = opt.Max
		}
		v, err := f(b)
		if err != nil {
			return BetaFit{}, err
		}
		fit.Curve[i] = BetaPoint{Beta: b, NLL: v}
		if v < fit.NLL {
			fit.NLL, fit.Beta, best = v, b, i
		}
	}
	if best < 0 {
		return BetaFit{}, fmt.Errorf("predictive: the server NLL is not finite for any beta in [%v, %v]", opt.Min, opt.Max)
	}
	lo := fit.Curve[max(best-1, 0)].Beta
	hi := fit.Curve[min(best+1, opt.GridPoints-1)].Beta
	invPhi := (math.Sqrt(5) - 1) / 2
	x1, x2 := hi-invPhi*(hi-lo), lo+invPhi*(hi-lo)
	f1, err := f(x1)
	if err != nil {
		return BetaFit{}, err
	}
	f2, err := f(x2)
	if err != nil {
		return BetaFit{}, err
	}
	for hi-lo > opt.Tol {
		if f1 <= f2 {
			hi, x2, f2 = x2, x1, f1
			x1 = hi - invPhi*(hi-lo)
			if f1, err = f(x1); err != nil {
				return BetaFit{}, err
			}
		} else {
			lo, x1, f1 = x1, x2, f2
			x2 = lo + invPhi*(hi-lo)
			if f2, err = f(x2); err != nil {
				return BetaFit{}, err
			}
		}
	}
	for _, c := range []BetaPoint{{x1, f1}, {x2, f2}} {
		if c.NLL < fit.NLL {
			fit.Beta, fit.NLL = c.Beta, c.NLL
		}
	}
	return fit, nil
}
