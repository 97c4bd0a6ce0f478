package predictive

import (
	"fmt"
	"math"
)

// GaussAggregate holds K clients' Gaussian predictive distributions p(y|x, D_k) = N(mu_k(x),
// s2_k(x)) of a scalar regression output on N examples, combined into the product (BCM) and the
// moment-matched mixture; beta-PredBayes interpolates their precisions.
type GaussAggregate struct {
	// Examples is N; Clients is K.
	Examples, Clients int
	// Weights are the normalised mixture weights |D_k| / |D| of Eqs. 4.6-4.7.
	Weights []float64
	// ProdMean, ProdPrec: the product's mean and precision (Hasan (2023), Eqs. 3.4-3.5), per example.
	ProdMean, ProdPrec []float64
	// MixMean, MixVar: the mixture's mean and variance (Hasan (2023), Eqs. 4.6-4.7), per example.
	MixMean, MixVar []float64
}

// NewGaussAggregate combines K Gaussian client predictives. means[k] and variances[k] hold client
// k's predictive mean and variance on each of the N examples (from samples: the mean of the
// sampled outputs and their variance plus the noise variance, see ClientGaussians). weights are the
// mixture weights (nil: equal; normalised here). priorMean and priorVar are the prior predictive
// N(mu_p, s2_p) of the BCM correction: both nil for no correction (a flat prior, s2_p^-1 = 0), one
// value shared by every example, or N values.
//
// Product, Hasan (2023), Eqs. 3.4-3.5 in one dimension:
//
//	1/s2_g = sum_k 1/s2_k - (K-1)/s2_p,   mu_g = s2_g (sum_k mu_k/s2_k - (K-1) mu_p/s2_p).
//
// A non-positive product precision (clients jointly less certain than the prior) has no Gaussian
// answer and is an error naming the example. Mixture, Eqs. 4.6-4.7: mu_mix = sum_k w_k mu_k and
// s2_mix = sum_k w_k (s2_k + mu_k^2) - mu_mix^2, computed as sum_k w_k (s2_k + (mu_k - mu_mix)^2),
// which is the same number without the cancellation.
func NewGaussAggregate(means, variances [][]float32, weights []float64, priorMean, priorVar []float32) (*GaussAggregate, error) {
	K := len(means)
	if K == 0 {
		return nil, fmt.Errorf("predictive: no client predictions")
	}
	if len(variances) != K {
		return nil, fmt.Errorf("predictive: %d clients with means but %d with variances", K, len(variances))
	}
	N := len(means[0])
	if N == 0 {
		return nil, fmt.Errorf("predictive: client 0 has no examples")
	}
	for k := 0; k < K; k++ {
		if len(means[k]) != N || len(variances[k]) != N {
			return nil, fmt.Errorf("predictive: client %d has %d means and %d variances, want %d of each (as client 0)", k, len(means[k]), len(variances[k]), N)
		}
		for n := 0; n < N; n++ {
			m, v := float64(means[k][n]), float64(variances[k][n])
			if math.IsNaN(m) || math.IsInf(m, 0) {
				return nil, fmt.Errorf("predictive: client %d, example %d: mean %v is not finite", k, n, m)
			}
			if !(v > 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("predictive: client %d, example %d: variance %v is not positive and finite", k, n, v)
			}
		}
	}
	w, err := normalizeWeights(weights, K)
	if err != nil {
		return nil, err
	}
	if len(priorMean) != len(priorVar) {
		return nil, fmt.Errorf("predictive: %d prior means but %d prior variances", len(priorMean), len(priorVar))
	}
	if l := len(priorMean); l != 0 && l != 1 && l != N {
		return nil, fmt.Errorf("predictive: %d prior means and variances, want 0 (flat prior), 1 or %d (one per example)", l, N)
	}
	for i := range priorMean {
		m, v := float64(priorMean[i]), float64(priorVar[i])
		if math.IsNaN(m) || math.IsInf(m, 0) || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("predictive: prior %d: mean %v, variance %v; want a finite mean and a positive finite variance", i, m, v)
		}
	}
	a := &GaussAggregate{Examples: N, Clients: K, Weights: w,
		ProdMean: make([]float64, N), ProdPrec: make([]float64, N),
		MixMean: make([]float64, N), MixVar: make([]float64, N)}
	for n := 0; n < N; n++ {
		var prec, precMean, sumPrec, mix float64
		for k := 0; k < K; k++ {
			p := 1 / float64(variances[k][n])
			prec += p
			precMean += p * float64(means[k][n])
			mix += w[k] * float64(means[k][n])
		}
		sumPrec = prec
		if len(priorMean) > 0 {
			i := min(n, len(priorMean)-1)
			pp := 1 / float64(priorVar[i])
			prec -= float64(K-1) * pp
			precMean -= float64(K-1) * pp * float64(priorMean[i])
		}
		if !(prec > 1e-12*sumPrec) {
			return nil, fmt.Errorf("predictive: example %d: BCM precision sum 1/s2_k - (K-1)/s2_p = %v is not positive (the clients are jointly less certain than the prior; use a wider prior)", n, prec)
		}
		a.ProdPrec[n] = prec
		a.ProdMean[n] = precMean / prec
		a.MixMean[n] = mix
		var v float64
		for k := 0; k < K; k++ {
			d := float64(means[k][n]) - mix
			v += w[k] * (float64(variances[k][n]) + d*d)
		}
		a.MixVar[n] = v
	}
	return a, nil
}

// Product returns the BCM's mean and variance per example (Hasan (2023), Eqs. 3.4-3.5).
func (a *GaussAggregate) Product() (mean, variance []float32) { return a.Beta(1) }

// Mixture returns the mixture's mean and variance per example (Hasan (2023), Eqs. 4.6-4.7).
func (a *GaussAggregate) Mixture() (mean, variance []float32) { return a.Beta(0) }

// Beta returns the beta-PredBayes Gaussian per example (Hasan (2023), Eqs. 4.9-4.10): the precision
// interpolates beta/s2_prod + (1-beta)/s2_mix and the mean is the precision-weighted mean
// s2_beta (beta mu_prod/s2_prod + (1-beta) mu_mix/s2_mix). beta = 1 is the product, beta = 0 the
// mixture. For beta outside [0, 1] the precision can be non-positive; the variance is then +Inf.
func (a *GaussAggregate) Beta(beta float64) (mean, variance []float32) {
	mean = make([]float32, a.Examples)
	variance = make([]float32, a.Examples)
	for n := range mean {
		m, v := a.betaAt(n, beta)
		mean[n], variance[n] = float32(m), float32(v)
	}
	return mean, variance
}

// betaAt returns mean and variance of example n at beta, in float64.
func (a *GaussAggregate) betaAt(n int, beta float64) (mean, variance float64) {
	switch beta {
	case 1:
		return a.ProdMean[n], 1 / a.ProdPrec[n]
	case 0:
		return a.MixMean[n], a.MixVar[n]
	}
	pp, pm := beta*a.ProdPrec[n], (1-beta)/a.MixVar[n]
	prec := pp + pm
	if !(prec > 0) {
		return math.NaN(), math.Inf(1)
	}
	return (pp*a.ProdMean[n] + pm*a.MixMean[n]) / prec, 1 / prec
}

// NLL returns the mean Gaussian negative log-likelihood of targets under the beta-PredBayes
// predictive, the objective of Hasan (2023), Eq. 4.11 with the Gaussian of Eq. 4.9 (divided by N).
// It is +Inf where the interpolated precision is not positive.
func (a *GaussAggregate) NLL(beta float64, targets []float32) (float64, error) {
	if len(targets) != a.Examples {
		return 0, fmt.Errorf("predictive: %d targets for %d examples", len(targets), a.Examples)
	}
	if math.IsNaN(beta) || math.IsInf(beta, 0) {
		return 0, fmt.Errorf("predictive: beta = %v is not finite", beta)
	}
	var sum float64
	for n, y := range targets {
		if math.IsNaN(float64(y)) || math.IsInf(float64(y), 0) {
			return 0, fmt.Errorf("predictive: target %d is %v", n, y)
		}
		m, v := a.betaAt(n, beta)
		if math.IsInf(v, 1) {
			return math.Inf(1), nil
		}
		d := float64(y) - m
		sum += 0.5 * (math.Log(2*math.Pi*v) + d*d/v)
	}
	return sum / float64(len(targets)), nil
}
