package groundtruth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/predictive"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"gonum.org/v1/gonum/mat"
)

// The labels of the sample-based one-round baselines of package predictive.
const (
	// LabelEPMCMC is embarrassingly parallel MCMC with diagonal Gaussians (Neiswanger et al. 2014;
	// Hasan (2023), Eq. 2.13), predictive.EPMCMC.
	LabelEPMCMC = "EP-MCMC"
	// LabelFedPA is one round of federated posterior averaging (Al-Shedivat et al. 2021),
	// predictive.FedPA: one server step from the prior mean with its default shrinkage and step size,
	// the prior not divided out (LabelFedPAIterated runs it to its fixed point).
	LabelFedPA = "FedPA"
	// LabelEPMCMCFull is Neiswanger et al.'s (2014) parametric EP-MCMC with full covariances: each
	// client's draws summarised by their mean and sample covariance, the product of these Gaussians
	// divided by the prior K − 1 times (GlobalFromClients), a full-covariance Gaussian.
	LabelEPMCMCFull = "EP-MCMC, full covariance"
)

// DefaultDrawSets is the number of independent sets of client draws on which EP-MCMC (both forms)
// is run again per seed, so that its Monte Carlo error is stated (RuleOptions.DrawSets).
const DefaultDrawSets = 20

// sampleBaselines runs EP-MCMC and FedPA of package predictive, and FedPA iterated to its fixed point
// (fedPAFromDraws), on S draws from each client's exact
// posterior (full covariance), as clients with a perfect sampler would send them. EP-MCMC divides
// out the prior N(0, priorVar I), which must be the problem's (isotropic, mean 0). FedPA starts from
// the prior mean and weighs the clients by size. A baseline that fails (EP-MCMC's combined
// precision is not positive when the clients' marginal variances are close to the prior's) is
// reported in the error map instead.
func sampleBaselines(full []*Gaussian, sizes []int, prior *Gaussian, S int, seed uint64) (map[string]Diagonal, map[string]*Gaussian, map[string]string, error) {
	d := prior.Dim()
	priorVar := prior.Cov.At(0, 0)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			want := 0.0
			if i == j {
				want = priorVar
			}
			if prior.Cov.At(i, j) != want {
				return nil, nil, nil, fmt.Errorf("groundtruth: EP-MCMC needs an isotropic prior")
			}
		}
		if prior.Mean.AtVec(i) != 0 {
			return nil, nil, nil, fmt.Errorf("groundtruth: EP-MCMC needs a prior with mean 0")
		}
	}
	K := len(full)
	samples, draws, err := clientDraws(full, S, seed)
	if err != nil {
		return nil, nil, nil, err
	}
	out, fulls, failed := map[string]Diagonal{}, map[string]*Gaussian{}, map[string]string{}
	if q, err := epmcmcDiagonal(samples, priorVar); err != nil {
		failed[LabelEPMCMC] = err.Error()
	} else {
		out[LabelEPMCMC] = q
	}
	if g, err := epmcmcFull(draws, prior); err != nil {
		failed[LabelEPMCMCFull] = err.Error()
	} else {
		fulls[LabelEPMCMCFull] = g
	}
	init := &posterior.Posterior{Params: []posterior.Param{{Name: "w", Mean: tensors.FromFlatDataAndDimensions(make([]float32, d), d)}}}
	weights := make([]float64, K)
	for k, n := range sizes {
		weights[k] = float64(n)
	}
	if pa, err := predictive.FedPA(init, samples, weights, predictive.FedPAConfig{}); err != nil {
		failed[LabelFedPA] = err.Error()
	} else {
		mean := tensors.MustCopyFlatData[float32](pa.Params[0].Mean)
		q := Diagonal{Mean: make([]float64, d), Var: make([]float64, d)}
		for i := range q.Mean {
			q.Mean[i] = float64(mean[i])
		}
		out[LabelFedPA] = q
	}
	if q, err := fedPAFromDraws(draws, full, prior); err != nil {
		failed[LabelFedPAIterated] = err.Error()
	} else {
		out[LabelFedPAIterated] = q
	}
	return out, fulls, failed, nil
}

// DrawSet is EP-MCMC on one further independent set of client draws (RuleOptions.DrawSets): the
// KL divergences of both forms to the exact posterior, or why a form failed.
type DrawSet struct {
	KLToTruth       Value  `json:"kl_q_p"`
	KLFromTruth     Value  `json:"kl_p_q"`
	Failed          string `json:"failed,omitempty"`
	FullKLToTruth   Value  `json:"full_kl_q_p"`
	FullKLFromTruth Value  `json:"full_kl_p_q"`
	FullFailed      string `json:"full_failed,omitempty"`
}

// drawSets runs EP-MCMC, diagonal and full, on n further independent sets of S draws from each
// client's exact posterior (seeds derived from seed), measured against exact.
func drawSets(full []*Gaussian, prior, exact *Gaussian, S, n int, seed uint64) ([]DrawSet, error) {
	out := make([]DrawSet, n)
	for j := range out {
		samples, draws, err := clientDraws(full, S, seed^(uint64(j+1)*0x9e3779b97f4a7c15))
		if err != nil {
			return nil, err
		}
		set := &out[j]
		if q, err := epmcmcDiagonal(samples, prior.Cov.At(0, 0)); err != nil {
			set.Failed = err.Error()
		} else if d, err := compareMoments(q, exact); err != nil {
			return nil, err
		} else {
			set.KLToTruth, set.KLFromTruth = d.KLToTruth, d.KLFromTruth
		}
		if g, err := epmcmcFull(draws, prior); err != nil {
			set.FullFailed = err.Error()
		} else if d, err := compareGaussian(g, false, exact); err != nil {
			return nil, err
		} else {
			set.FullKLToTruth, set.FullKLFromTruth = d.KLToTruth, d.KLFromTruth
		}
	}
	return out, nil
}

// fedPAFromDraws runs FedPA to its fixed point (fedPAIterate) on the clients' draws, summarised by
// their means and shrinkage covariances at FedPA's default shrinkage, a point estimate.
func fedPAFromDraws(draws []*mat.Dense, full []*Gaussian, prior *Gaussian) (Diagonal, error) {
	exact, err := GlobalFromClients(prior, full)
	if err != nil {
		return Diagonal{}, err
	}
	sd := make([]float64, prior.Dim())
	for i := range sd {
		sd[i] = math.Sqrt(exact.Cov.At(i, i))
	}
	mus := make([][]float64, len(draws))
	covs := make([]*mat.SymDense, len(draws))
	for k, dr := range draws {
		mus[k], covs[k] = shrinkageMoments(dr, predictive.DefaultFedPARho)
	}
	x, _, _, err := fedPAIterate(mus, covs, prior, sd)
	if err != nil {
		return Diagonal{}, err
	}
	return Diagonal{Mean: x, Var: make([]float64, len(x))}, nil
}

// predictiveFedPARho is FedPA's default shrinkage, for the page.
func predictiveFedPARho() float64 { return predictive.DefaultFedPARho }

// clientDraws draws S samples from each client's exact posterior, seeded by seed: as posteriors of
// package posterior (sample s of every client: one parameter "w" of shape [K, d], in float32) and,
// per client, as an S × d matrix in float64.
func clientDraws(full []*Gaussian, S int, seed uint64) ([]*posterior.Posterior, []*mat.Dense, error) {
	K, d := len(full), full[0].Dim()
	rng := rand.New(rand.NewPCG(seed, 0x73616d70)) // "samp"
	data := make([][]float32, S)                   // draw s of every client: [K, d]
	for s := range data {
		data[s] = make([]float32, K*d)
	}
	z := mat.NewVecDense(d, nil)
	w := mat.NewVecDense(d, nil)
	draws := make([]*mat.Dense, K)
	for k, g := range full {
		draws[k] = mat.NewDense(S, d, nil)
		var ch mat.Cholesky
		if !ch.Factorize(g.Cov) {
			return nil, nil, fmt.Errorf("groundtruth: client %d: covariance not positive definite", k)
		}
		var l mat.TriDense
		ch.LTo(&l)
		for s := 0; s < S; s++ {
			for i := 0; i < d; i++ {
				z.SetVec(i, rng.NormFloat64())
			}
			w.MulVec(&l, z)
			w.AddVec(w, g.Mean)
			for i := 0; i < d; i++ {
				data[s][k*d+i] = float32(w.AtVec(i))
				draws[k].Set(s, i, w.AtVec(i))
			}
		}
	}
	samples := make([]*posterior.Posterior, S)
	for s := range samples {
		samples[s] = &posterior.Posterior{Params: []posterior.Param{{Name: "w", Mean: tensors.FromFlatDataAndDimensions(data[s], K, d)}}}
	}
	return samples, draws, nil
}

// epmcmcDiagonal is predictive.EPMCMC on the clients' draws under the prior N(0, priorVar I).
func epmcmcDiagonal(samples []*posterior.Posterior, priorVar float64) (Diagonal, error) {
	ep, err := predictive.EPMCMC(samples, math.Sqrt(priorVar))
	if err != nil {
		return Diagonal{}, err
	}
	mean := tensors.MustCopyFlatData[float32](ep.Params[0].Mean)
	lv := tensors.MustCopyFlatData[float32](ep.Params[0].LogVar)
	q := Diagonal{Mean: make([]float64, len(mean)), Var: make([]float64, len(mean))}
	for i := range q.Mean {
		q.Mean[i], q.Var[i] = float64(mean[i]), math.Exp(float64(lv[i]))
	}
	return q, nil
}

// epmcmcFull is EP-MCMC with full covariances (LabelEPMCMCFull): each client's draws summarised by
// their mean and unbiased sample covariance, combined exactly over the prior K − 1 times.
func epmcmcFull(draws []*mat.Dense, prior *Gaussian) (*Gaussian, error) {
	gs := make([]*Gaussian, len(draws))
	for k, dr := range draws {
		S, d := dr.Dims()
		if S < d+1 {
			return nil, fmt.Errorf("groundtruth: %s: client %d has %d draws for %d weights", LabelEPMCMCFull, k, S, d)
		}
		mean := make([]float64, d)
		for i := range d {
			for s := range S {
				mean[i] += dr.At(s, i) / float64(S)
			}
		}
		cov := mat.NewSymDense(d, nil)
		for i := range d {
			for j := i; j < d; j++ {
				var c float64
				for s := range S {
					c += (dr.At(s, i) - mean[i]) * (dr.At(s, j) - mean[j])
				}
				cov.SetSym(i, j, c/float64(S-1))
			}
		}
		g, err := NewGaussian(mean, cov)
		if err != nil {
			return nil, fmt.Errorf("groundtruth: %s: client %d: %w", LabelEPMCMCFull, k, err)
		}
		gs[k] = g
	}
	g, err := GlobalFromClients(prior, gs)
	if err != nil {
		return nil, fmt.Errorf("groundtruth: %s: %w", LabelEPMCMCFull, err)
	}
	return g, nil
}
