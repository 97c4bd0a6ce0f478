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
)

// sampleBaselines runs EP-MCMC and FedPA of package predictive, and FedPA iterated to its fixed point
// (fedPAFromDraws), on S draws from each client's exact
// posterior (full covariance), as clients with a perfect sampler would send them. EP-MCMC divides
// out the prior N(0, priorVar I), which must be the problem's (isotropic, mean 0). FedPA starts from
// the prior mean and weighs the clients by size. A baseline that fails (EP-MCMC's combined
// precision is not positive when the clients' marginal variances are close to the prior's) is
// reported in the error map instead.
func sampleBaselines(full []*Gaussian, sizes []int, prior *Gaussian, S int, seed uint64) (map[string]Diagonal, map[string]string, error) {
	d := prior.Dim()
	priorVar := prior.Cov.At(0, 0)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			want := 0.0
			if i == j {
				want = priorVar
			}
			if prior.Cov.At(i, j) != want {
				return nil, nil, fmt.Errorf("groundtruth: EP-MCMC needs an isotropic prior")
			}
		}
		if prior.Mean.AtVec(i) != 0 {
			return nil, nil, fmt.Errorf("groundtruth: EP-MCMC needs a prior with mean 0")
		}
	}
	K := len(full)
	rng := rand.New(rand.NewPCG(seed, 0x73616d70)) // "samp"
	data := make([][]float32, S)                   // draw s of every client: [K, d]
	for s := range data {
		data[s] = make([]float32, K*d)
	}
	z := mat.NewVecDense(d, nil)
	w := mat.NewVecDense(d, nil)
	draws := make([]*mat.Dense, K) // client k's draws, S × d, in float64
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
	out, failed := map[string]Diagonal{}, map[string]string{}
	if ep, err := predictive.EPMCMC(samples, math.Sqrt(priorVar)); err != nil {
		failed[LabelEPMCMC] = err.Error()
	} else {
		mean := tensors.MustCopyFlatData[float32](ep.Params[0].Mean)
		lv := tensors.MustCopyFlatData[float32](ep.Params[0].LogVar)
		q := Diagonal{Mean: make([]float64, d), Var: make([]float64, d)}
		for i := range q.Mean {
			q.Mean[i], q.Var[i] = float64(mean[i]), math.Exp(float64(lv[i]))
		}
		out[LabelEPMCMC] = q
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
	return out, failed, nil
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
