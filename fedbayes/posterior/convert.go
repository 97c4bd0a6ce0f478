package posterior

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// The two parameterisations of a mean-field Gaussian's spread used in fedbayes:
//
//   - log-variance alpha = log sigma^2 (Ozer et al. (2022), Section 3, the "implementation trick"),
//     the one stored in Param.LogVar and taken and returned by the aggregators;
//   - rho with sigma = softplus(rho) = log(1 + exp(rho)), the Bayes-by-Backprop parameterisation
//     that Flipout/reparameterisation layers keep internally.
//
// The conversions below are computed in float64 with branches that avoid overflow (large rho or
// variance) and loss of precision (tiny rho or variance), so that a float32 value survives a round
// trip to within a few units in the last place for variances from well below 1e-8 to well above 1e4.

// LogVarFromRho returns log sigma^2 for sigma = softplus(rho).
func LogVarFromRho(rho float64) float64 {
	return 2 * logSoftplus(rho)
}

// RhoFromLogVar returns rho such that softplus(rho)^2 = exp(logVar), the inverse of LogVarFromRho.
func RhoFromLogVar(logVar float64) float64 {
	h := logVar / 2 // log sigma
	switch {
	case h < -30:
		// expm1(sigma) = sigma (1 + sigma/2 + ...), so rho = log sigma + log1p(sigma/2) to first order.
		return h + math.Log1p(math.Exp(h)/2)
	case h > 4:
		// sigma > 54: rho = sigma + log(1 - exp(-sigma)).
		sigma := math.Exp(h)
		return sigma + math.Log1p(-math.Exp(-sigma))
	default:
		return math.Log(math.Expm1(math.Exp(h)))
	}
}

// logSoftplus returns log(softplus(x)) = log(log1p(exp(x))) without overflow or underflow.
func logSoftplus(x float64) float64 {
	switch {
	case x < -30:
		// log1p(e) = e - e^2/2 + ..., so log(log1p(e)) = x + log1p(-e/2 + ...).
		return x + math.Log1p(-math.Exp(x)/2)
	case x > 30:
		return math.Log(x + math.Log1p(math.Exp(-x)))
	default:
		return math.Log(math.Log1p(math.Exp(x)))
	}
}

// LogVarFromSoftplusRho converts a float32 tensor of rho values (sigma = softplus(rho)) into a new
// float32 tensor of log-variances log sigma^2, element by element (see LogVarFromRho).
func LogVarFromSoftplusRho(rho *tensors.Tensor) (*tensors.Tensor, error) {
	return mapFloat32(rho, "rho", LogVarFromRho)
}

// SoftplusRhoFromLogVar converts a float32 tensor of log-variances into a new float32 tensor of rho
// values with softplus(rho)^2 = exp(logVar), element by element (see RhoFromLogVar).
func SoftplusRhoFromLogVar(logVar *tensors.Tensor) (*tensors.Tensor, error) {
	return mapFloat32(logVar, "log-variance", RhoFromLogVar)
}

// mapFloat32 applies fn (in float64) to every element of a float32 tensor, returning a new tensor.
func mapFloat32(t *tensors.Tensor, what string, fn func(float64) float64) (*tensors.Tensor, error) {
	if t == nil {
		return nil, fmt.Errorf("posterior: %s tensor is nil", what)
	}
	if t.DType() != dtypes.Float32 {
		return nil, fmt.Errorf("posterior: %s tensor has dtype %s, want float32", what, t.DType())
	}
	out := tensors.FromShape(t.Shape())
	var bad, writeErr error
	err := tensors.ConstFlatData(t, func(in []float32) {
		writeErr = tensors.MutableFlatData(out, func(o []float32) {
			for i, v := range in {
				x := float64(v)
				if math.IsNaN(x) || math.IsInf(x, 0) {
					bad = fmt.Errorf("posterior: %s[%d] (flat index) is %v", what, i, v)
					return
				}
				o[i] = float32(fn(x))
			}
		})
	})
	if err == nil {
		err = writeErr
	}
	if err != nil {
		return nil, fmt.Errorf("posterior: converting %s: %w", what, err)
	}
	if bad != nil {
		return nil, bad
	}
	return out, nil
}
