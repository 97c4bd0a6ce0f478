package groundtruth

import (
	"fmt"
	"math"
)

// The floors of Result.References beyond the two best diagonal Gaussians (RefMeanFieldVI, RefMoment).
const (
	// RefFrontier is the diagonal Gaussian whose excess (Summary.Excess: the larger of its KL(q || p)
	// above mean-field VI's and its KL(p || q) above the marginals') is the smallest any diagonal
	// Gaussian has (Frontier): what "recovers" is judged against.
	RefFrontier = "best diagonal (frontier)"
	// RefDWCMarginals is DWC (Fischer et al. (2024), Eq. 17) given each client's exact marginal
	// variances instead of its mean-field ones: the limit the diagonal EP-MCMC's per-client moments
	// reach with infinitely many draws (linear problems).
	RefDWCMarginals = "DWC on the clients' marginals"
	// RefDWCLaplaceMarginals is the same for a logistic problem, on the marginals of the clients'
	// Laplace approximations: not EP-MCMC's limit there (a perfect sampler's moments would be the
	// clients' exact, non-Gaussian ones), a reference for DWC given wider messages.
	RefDWCLaplaceMarginals = "DWC on the clients' Laplace marginals"
	// RefLaplaceProduct, for a logistic problem only, is the exact product of the clients' full
	// Laplace approximations over the prior K − 1 times (GlobalFromClients): what a perfect
	// aggregator of these clients reaches, so that the clients' Laplace error is told apart from the
	// rules'. For the linear problem the same product is the exact posterior (distance 0).
	RefLaplaceProduct = "product of the clients' Laplace fits"
)

// Frontier returns the diagonal Gaussian with the smallest excess over the two floors of p, and that
// excess in nats. The means of both floors are p's, and a mean error only adds to both KL
// divergences, so the frontier has p's mean; with q = N(m_p, diag v) and t_i = Λ_ii v_i
// (Λ = Σ⁻¹) the two excesses separate over the weights:
//
//	KL(q ‖ p) − KL(q_VI ‖ p)  = ½ Σ_i (t_i − 1 − log t_i)
//	KL(p ‖ q) − KL(p ‖ q_mom) = ½ Σ_i (r_i/t_i − 1 − log(r_i/t_i)),  r_i = Λ_ii Σ_ii ≥ 1,
//
// both convex in log t_i. Their minimax is a minimum of λ·first + (1 − λ)·second at the λ where the
// two are equal (Boyd & Vandenberghe (2004), Sec. 5.2); that minimum has, for each weight,
// λ t² + (1 − 2λ) t − (1 − λ) r = 0, which runs from t = r (the marginals, λ = 0) to t = 1 (mean-field
// VI, λ = 1), and λ is found by bisection. With one weight, or a diagonal Λ, both floors coincide and
// the excess is 0; with every r_i = r, t_i = √r: the frontier's variances are the geometric means of
// the floors' (tested).
func Frontier(p *Gaussian) (Diagonal, float64, error) {
	prec, _, err := p.natural()
	if err != nil {
		return Diagonal{}, 0, err
	}
	d := p.Dim()
	r := make([]float64, d)
	for i := range r {
		r[i] = prec.At(i, i) * p.Cov.At(i, i)
		if !(r[i] > 0) || math.IsInf(r[i], 0) {
			return Diagonal{}, 0, fmt.Errorf("groundtruth: frontier: weight %d: Λ_ii Σ_ii = %v", i, r[i])
		}
		// Λ_ii Σ_ii ≥ 1 in exact arithmetic; rounding can put it a few ulps below.
		r[i] = math.Max(r[i], 1)
	}
	t := make([]float64, d)
	gap := func(lambda float64) (float64, float64) {
		var toVI, toMom float64
		for i, ri := range r {
			t[i] = frontierRatio(lambda, ri)
			toVI += 0.5 * (t[i] - 1 - math.Log(t[i]))
			toMom += 0.5 * (ri/t[i] - 1 - math.Log(ri/t[i]))
		}
		return toVI, toMom
	}
	lo, hi := 0.0, 1.0 // the first excess falls and the second rises as λ grows
	for range 200 {
		mid := 0.5 * (lo + hi)
		if mid == lo || mid == hi {
			break
		}
		if a, b := gap(mid); a > b {
			lo = mid
		} else {
			hi = mid
		}
	}
	a, b := gap(0.5 * (lo + hi))
	q := Diagonal{Mean: make([]float64, d), Var: make([]float64, d)}
	for i := range q.Mean {
		q.Mean[i] = p.Mean.AtVec(i)
		q.Var[i] = t[i] / prec.At(i, i)
	}
	return q, math.Max(a, b), nil
}

// frontierRatio is the root t in [1, r] of λ t² + (1 − 2λ) t − (1 − λ) r = 0, written for each half of
// λ in the form that does not cancel (t = r at λ = 0, t = 1 at λ = 1).
func frontierRatio(lambda, r float64) float64 {
	b := 1 - 2*lambda
	disc := math.Sqrt(b*b + 4*lambda*(1-lambda)*r)
	if b > 0 {
		return 2 * (1 - lambda) * r / (b + disc)
	}
	return (disc - b) / (2 * lambda)
}
