package predictive

import (
	"fmt"
	"math"
	"math/rand/v2"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/internal/catch"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// EPVarFloor is the smallest per-parameter variance EPMCMC gives a client's Gaussian: a parameter
// that did not move across a client's few samples would otherwise have zero variance and an
// infinite precision.
const EPVarFloor = 1e-10

// FedAvgModel is one-round FedAvg (McMahan et al. 2017; Hasan (2023), Sec. 2.2): the weighted mean
// of the clients' parameters, computed by aggregate's FedAvg rule. stacked holds the K clients
// ([K, ...], e.g. models.Model.Posterior after TrainClients); weights are the client sizes or
// normalised weights (nil: equal). The result is unstacked.
func FedAvgModel(stacked *posterior.Posterior, weights []float64) (*posterior.Posterior, error) {
	return aggregate.Stacked(aggregate.FedAvg, stacked, weights, aggregate.Options{Normalize: true})
}

// EPMCMC is embarrassingly parallel MCMC with diagonal Gaussians (Neiswanger et al. 2014; Hasan
// (2023), Eq. 2.13 and Sec. 3.3.4): client k's samples are summarised by their mean m_k and variance
// v_k per parameter (at least EPVarFloor), and the global posterior is the product of the client
// Gaussians divided by the prior N(0, priorStd^2) K-1 times:
//
//	1/v = sum_k 1/v_k - (K-1)/priorStd^2,   m = v sum_k m_k / v_k.
//
// samples are stacked posteriors [K, ...] (Samples.Models); at least two are needed for a variance.
// The result is an unstacked Gaussian posterior (means and log-variances); DrawModels samples it.
func EPMCMC(samples []*posterior.Posterior, priorStd float64) (*posterior.Posterior, error) {
	S := len(samples)
	if S < 2 {
		return nil, fmt.Errorf("predictive: EPMCMC needs at least 2 samples per client, got %d", S)
	}
	if !(priorStd > 0) || math.IsInf(priorStd, 0) {
		return nil, fmt.Errorf("predictive: EPMCMC: priorStd = %v, want positive and finite", priorStd)
	}
	flat := make([]*flatParams, S)
	for s, p := range samples {
		f, err := flatten(p)
		if err != nil {
			return nil, err
		}
		if s > 0 && (len(f.names) != len(flat[0].names)) {
			return nil, fmt.Errorf("predictive: EPMCMC: sample %d has %d parameters, sample 0 has %d", s, len(f.names), len(flat[0].names))
		}
		flat[s] = f
	}
	priorPrec := 1 / (priorStd * priorStd)
	out := &posterior.Posterior{}
	for i, name := range flat[0].names {
		dims := flat[0].dims[i]
		if len(dims) == 0 {
			return nil, fmt.Errorf("predictive: EPMCMC: parameter %q is not stacked (no client axis)", name)
		}
		K := dims[0]
		n := len(flat[0].values[i]) / K
		mean := make([]float32, n)
		logVar := make([]float32, n)
		for j := 0; j < n; j++ {
			var prec, precMean float64
			for k := 0; k < K; k++ {
				var m, m2 float64
				for s := 0; s < S; s++ {
					if flat[s].names[i] != name || len(flat[s].values[i]) != len(flat[0].values[i]) {
						return nil, fmt.Errorf("predictive: EPMCMC: sample %d: parameter %q does not match sample 0", s, name)
					}
					v := float64(flat[s].values[i][k*n+j])
					m += v / float64(S)
					m2 += v * v / float64(S)
				}
				v := max((m2-m*m)*float64(S)/float64(S-1), EPVarFloor)
				prec += 1 / v
				precMean += m / v
			}
			prec -= float64(K-1) * priorPrec
			if !(prec > 0) {
				return nil, fmt.Errorf("predictive: EPMCMC: parameter %q[%d]: precision %v is not positive", name, j, prec)
			}
			mean[j] = float32(precMean / prec)
			logVar[j] = float32(-math.Log(prec))
		}
		var mt, lt *tensors.Tensor
		if err := catch.Do(func() {
			mt = tensors.FromFlatDataAndDimensions(mean, dims[1:]...)
			lt = tensors.FromFlatDataAndDimensions(logVar, dims[1:]...)
		}); err != nil {
			return nil, fmt.Errorf("predictive: EPMCMC: %q: %w", name, err)
		}
		out.Params = append(out.Params, posterior.Param{Name: name, Mean: mt, LogVar: lt})
	}
	return out, nil
}

// DrawModels draws M deterministic models theta = mean + exp(logVar/2) xi from a Gaussian posterior
// (deterministic parameters are copied) and returns them stacked [M, ...], ready for an ensemble
// model of M clients. Same seed, same models.
func DrawModels(g *posterior.Posterior, M int, seed int64) (*posterior.Posterior, error) {
	if M < 1 {
		return nil, fmt.Errorf("predictive: DrawModels: M = %d, want at least 1", M)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0xd7a3))
	list := make([]*flatParams, M)
	means, err := flatten(g)
	if err != nil {
		return nil, err
	}
	logVars := make([][]float32, len(g.Params))
	for i, q := range g.Params {
		if q.LogVar != nil {
			if err := catch.Do(func() { logVars[i] = tensors.MustCopyFlatData[float32](q.LogVar) }); err != nil {
				return nil, fmt.Errorf("predictive: DrawModels: %q: %w", q.Name, err)
			}
		}
	}
	for m := range list {
		f := means.clone()
		for i, v := range f.values {
			if logVars[i] == nil {
				continue
			}
			for j := range v {
				v[j] = float32(float64(v[j]) + math.Exp(float64(logVars[i][j])/2)*rng.NormFloat64())
			}
		}
		list[m] = f
	}
	st, err := stackFlat(list)
	if err != nil {
		return nil, err
	}
	return st.posterior()
}

// EnsembleMean evaluates the E models of a stacked deterministic posterior ([E, ...]) on x with a
// model of cfg's architecture and E clients, and returns the equally weighted average of their
// predictive distributions (Chen & Chao's Bayesian model ensemble): class probabilities [N, C], or
// for regression the mixture mean and variance (Hasan (2023), Eqs. 4.6-4.7 with equal weights).
func EnsembleMean(cfg models.Config, members *posterior.Posterior, x []float32) (probs, mean, variance []float32, err error) {
	if len(members.Params) == 0 {
		return nil, nil, nil, fmt.Errorf("predictive: EnsembleMean: empty posterior")
	}
	cfg.Clients = members.Params[0].Mean.Shape().Dimensions[0]
	cfg = cfg.AsDeterministic()
	m, err := models.New(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := m.SetPosterior(members); err != nil {
		return nil, nil, nil, err
	}
	cp, err := PredictModel(m, x, 1)
	if err != nil {
		return nil, nil, nil, err
	}
	if cp.Classes > 0 {
		a, err := NewClassAggregate(cp.Probs, nil, nil, cp.Classes)
		if err != nil {
			return nil, nil, nil, err
		}
		return a.Mixture(), nil, nil, nil
	}
	a, err := NewGaussAggregate(cp.Mean, cp.Var, nil, nil, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	mean, variance = a.Mixture()
	return nil, mean, variance, nil
}
