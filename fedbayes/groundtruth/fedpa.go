package groundtruth

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// LabelFedPAIterated is federated posterior averaging run over rounds to its fixed point, as its
// authors run it (Al-Shedivat et al. 2021, Sec. 3 and their federated least-squares simulations),
// with the clients' prior divided out.
const LabelFedPAIterated = "FedPA, iterated"

// FedPAMaxRounds bounds the rounds of fedPAIterate.
const FedPAMaxRounds = 10000

// fedPASettled is the largest step, in exact posterior standard deviations, at which fedPAIterate
// stops: the server is at its fixed point to that precision.
const fedPASettled = 1e-9

// fedPAIterate runs FedPA's server over rounds from the prior mean: client k sends
// Delta_k = Sigma_k⁻¹ (x − mu_k), the gradient of its Gaussian approximation N(mu_k, Sigma_k) (its
// draws' mean and shrinkage covariance, or its exact moments), and the server takes a gradient step
// on the average of the product of the clients' Gaussians over the prior K − 1 times (each client's
// posterior holds the prior once, the global posterior once):
//
//	x ← x − eta (1/K) [ Σ_k Delta_k − (K − 1) Λ0 (x − m0) ],
//
// with eta = 1/L, L the largest eigenvalue of that average's Hessian
// H = (1/K)(Σ_k Sigma_k⁻¹ − (K − 1) Λ0), the step at which gradient descent on a quadratic moves
// monotonically. Its fixed point is H⁻¹ (1/K)(Σ_k Sigma_k⁻¹ mu_k − (K − 1) Λ0 m0): the exact global
// posterior's mean when every Sigma_k and mu_k is exact. It returns the last x, the rounds run (the
// first round whose step is below fedPASettled exact posterior sds in every weight, or
// FedPAMaxRounds) and eta. sd are the exact posterior's standard deviations. It fails when H is not
// positive definite (the product has no mode).
func fedPAIterate(mus [][]float64, covs []*mat.SymDense, prior *Gaussian, sd []float64) ([]float64, int, float64, error) {
	K, d := len(mus), prior.Dim()
	prec0, h0, err := prior.natural()
	if err != nil {
		return nil, 0, 0, err
	}
	H := mat.NewSymDense(d, nil)
	H.ScaleSym(-float64(K-1), prec0)
	b := mat.NewVecDense(d, nil)
	b.ScaleVec(-float64(K-1), h0)
	for k := range mus {
		var ch mat.Cholesky
		if !ch.Factorize(covs[k]) {
			return nil, 0, 0, fmt.Errorf("groundtruth: FedPA: client %d's covariance is not positive definite", k)
		}
		var inv mat.SymDense
		if err := ch.InverseTo(&inv); err != nil {
			return nil, 0, 0, fmt.Errorf("groundtruth: FedPA: client %d: %w", k, err)
		}
		H.AddSym(H, &inv)
		var hk mat.VecDense
		hk.MulVec(&inv, mat.NewVecDense(d, mus[k]))
		b.AddVec(b, &hk)
	}
	H.ScaleSym(1/float64(K), H)
	b.ScaleVec(1/float64(K), b)
	var eig mat.EigenSym
	if !eig.Factorize(H, false) {
		return nil, 0, 0, fmt.Errorf("groundtruth: FedPA: the server's Hessian has no eigenvalue decomposition")
	}
	vals := eig.Values(nil)
	if !(vals[0] > 0) {
		return nil, 0, 0, fmt.Errorf("groundtruth: FedPA: the product of the clients' Gaussians over the prior is not positive definite (smallest eigenvalue %g): no mode", vals[0])
	}
	eta := 1 / vals[len(vals)-1]
	x := mat.VecDenseCopyOf(prior.Mean)
	var g mat.VecDense
	for t := 1; t <= FedPAMaxRounds; t++ {
		g.MulVec(H, x)
		g.SubVec(&g, b)
		settled := true
		for i := range d {
			step := eta * g.AtVec(i)
			x.SetVec(i, x.AtVec(i)-step)
			settled = settled && math.Abs(step) <= fedPASettled*sd[i]
		}
		if settled {
			return x.RawVector().Data, t, eta, nil
		}
	}
	return x.RawVector().Data, FedPAMaxRounds, eta, nil
}

// shrinkageMoments returns the mean of draws (S × d, one draw a row) and FedPA's shrinkage covariance
// rho_l I + (1 − rho_l) S_k, rho_l = 1 / (1 + (l − 1) rho), S_k the unbiased sample covariance
// (Al-Shedivat et al. 2021, Sec. 4; predictive.FedPA).
func shrinkageMoments(draws *mat.Dense, rho float64) ([]float64, *mat.SymDense) {
	l, d := draws.Dims()
	mu := make([]float64, d)
	for s := range l {
		for i := range d {
			mu[i] += draws.At(s, i) / float64(l)
		}
	}
	centred := mat.NewDense(l, d, nil)
	for s := range l {
		for i := range d {
			centred.Set(s, i, draws.At(s, i)-mu[i])
		}
	}
	cov := mat.NewSymDense(d, nil)
	cov.SymOuterK(1/float64(l-1), centred.T())
	rl := 1 / (1 + float64(l-1)*rho)
	cov.ScaleSym(1-rl, cov)
	for i := range d {
		cov.SetSym(i, i, cov.At(i, i)+rl)
	}
	return mu, cov
}
