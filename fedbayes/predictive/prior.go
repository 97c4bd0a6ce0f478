package predictive

import (
	"fmt"
	"math"
	"math/rand/v2"

	"fedbayes.dev/fedbayes/models"
)

// Prior is an estimate of the prior predictive p(y|x) of the BCM correction (Hasan (2023), Eqs. 3.3
// and 3.4-3.5), from networks drawn from the prior.
type Prior struct {
	// Probs is the prior class distribution per example, [N, C] (classification).
	Probs []float32
	// Mean and Var are the prior predictive mean and variance per example (regression): the mean
	// and variance of the outputs of the prior draws, plus the noise variance.
	Mean, Var []float32
	// Draws is the number of prior networks averaged.
	Draws int
}

// PriorPredictive estimates the prior predictive on the examples x by drawing networks with every
// parameter from N(0, priorStd^2) (the prior of Hasan (2023), Sec. 3.3.3) and averaging their
// predictions. Each predict call evaluates m's K clients, so draws is rounded up to a multiple of
// K. m must be a deterministic net; its parameters are overwritten (set them again afterwards).
//
// For classification with a zero-mean, sign-symmetric prior on the output layer, the exact prior
// predictive is uniform over the classes at every x (the classes are exchangeable under the
// prior), which is what nil gives NewClassAggregate; this estimate converges to it and is useful
// for checking that, or for other priors. With a wide prior a single draw is nearly one-hot, so
// the estimate needs many draws.
//
// For regression, a variance beyond float32's range (the thesis's prior std 5e4 gives outputs of
// order 1e9 and more) is saturated at math.MaxFloat32: a prior precision below 3e-39, which no
// client precision notices, i.e. in effect the flat prior.
func PriorPredictive(m *models.Model, x []float32, draws int, priorStd float64, seed int64) (*Prior, error) {
	if draws < 1 {
		return nil, fmt.Errorf("predictive: PriorPredictive: draws = %d, want at least 1", draws)
	}
	if !(priorStd > 0) || math.IsInf(priorStd, 0) {
		return nil, fmt.Errorf("predictive: PriorPredictive: priorStd = %v, want positive and finite", priorStd)
	}
	if m.Config().Kind != models.Deterministic {
		return nil, fmt.Errorf("predictive: PriorPredictive needs a deterministic net, got kind %q", m.Config().Kind)
	}
	p, err := m.Posterior()
	if err != nil {
		return nil, err
	}
	shape, err := flatten(p)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e1f))
	K := m.Clients()
	acc := newAccumulator(m)
	for done := 0; done < draws; done += K {
		for _, v := range shape.values {
			for j := range v {
				v[j] = float32(priorStd * rng.NormFloat64())
			}
		}
		if err := setFlat(m, shape); err != nil {
			return nil, err
		}
		pred, err := m.Predict(x, 1)
		if err != nil {
			return nil, err
		}
		acc.add(pred)
	}
	res := acc.result()
	out := &Prior{Draws: res.Samples * K}
	// Pool the clients: every client's draws come from the same prior.
	if res.Classes > 0 {
		out.Probs = make([]float32, len(res.Probs[0]))
		for i := range out.Probs {
			var s float64
			for k := 0; k < K; k++ {
				s += float64(res.Probs[k][i])
			}
			out.Probs[i] = float32(s / float64(K))
		}
		return out, nil
	}
	n := len(res.Mean[0])
	out.Mean, out.Var = make([]float32, n), make([]float32, n)
	for i := 0; i < n; i++ {
		var mu, second float64
		for k := 0; k < K; k++ {
			m, v := float64(res.Mean[k][i]), float64(res.Var[k][i])
			mu += m / float64(K)
			second += (v + m*m) / float64(K)
		}
		out.Mean[i] = float32(mu)
		out.Var[i] = float32(min(max(second-mu*mu, math.SmallestNonzeroFloat32), math.MaxFloat32))
	}
	return out, nil
}
