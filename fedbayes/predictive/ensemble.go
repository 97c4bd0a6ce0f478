package predictive

import (
	"fmt"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
)

// ClientPredictive holds each client's Monte Carlo predictive distribution on N examples
// (Hasan (2023), Alg. 1, step 3: the average of the predictions of its posterior samples).
type ClientPredictive struct {
	// Clients (K), Examples (N) and Classes (C; 0 for regression).
	Clients, Examples, Classes int
	// Probs holds, per client, the averaged class probabilities [N, C] (classification).
	Probs [][]float32
	// Mean and Var hold, per client, the predictive mean and variance of each example (regression):
	// the mean of the sampled outputs, and their variance plus the noise variance s_n^2.
	Mean, Var [][]float32
	// Samples is the number of posterior samples averaged.
	Samples int
}

// PredictSamples evaluates posterior samples (each a stacked posterior [K, ...] of m's parameters,
// for example Samples.Models) on the N examples of x with m, which must have the samples' K
// clients, and averages them per client. m's parameters are left at the last sample.
func PredictSamples(m *models.Model, samples []*posterior.Posterior, x []float32) (*ClientPredictive, error) {
	if len(samples) == 0 {
		return nil, fmt.Errorf("predictive: PredictSamples: no samples")
	}
	acc := newAccumulator(m)
	for s, p := range samples {
		if err := m.SetPosterior(p); err != nil {
			return nil, fmt.Errorf("predictive: sample %d: %w", s, err)
		}
		pred, err := m.Predict(x, 1)
		if err != nil {
			return nil, fmt.Errorf("predictive: sample %d: %w", s, err)
		}
		acc.add(pred)
	}
	return acc.result(), nil
}

// PredictModel draws M stochastic forward passes of m's clients on x (weights from q for variational
// nets, dropout masks for MC-dropout nets; Hasan (2023), Sec. 2.1: samples from q replace MCMC
// samples) and averages them per client.
func PredictModel(m *models.Model, x []float32, samples int) (*ClientPredictive, error) {
	pred, err := m.Predict(x, samples)
	if err != nil {
		return nil, err
	}
	acc := newAccumulator(m)
	acc.add(pred)
	return acc.result(), nil
}

// accumulator sums first and second moments of predictions per client in float64.
type accumulator struct {
	regression bool
	k, n, c    int
	count      int
	sum, sum2  [][]float64
	noise      [][]float64 // per client, summed noise variance (regression)
}

func newAccumulator(m *models.Model) *accumulator {
	return &accumulator{regression: m.Config().Task == models.Regression, k: m.Clients()}
}

func (a *accumulator) add(p *models.Prediction) {
	if a.sum == nil {
		a.n, a.c = p.Examples, p.Outputs
		a.sum = make([][]float64, a.k)
		a.sum2 = make([][]float64, a.k)
		a.noise = make([][]float64, a.k)
		for k := range a.sum {
			a.sum[k] = make([]float64, a.n*a.c)
			a.sum2[k] = make([]float64, a.n*a.c)
			a.noise[k] = make([]float64, 1)
		}
	}
	for k := 0; k < a.k; k++ {
		for m := 0; m < p.Samples; m++ {
			for i, v := range p.Sample(k, m) {
				a.sum[k][i] += float64(v)
				a.sum2[k][i] += float64(v) * float64(v)
			}
			if a.regression && p.NoiseVar != nil {
				a.noise[k][0] += float64(p.NoiseVar[k])
			}
		}
	}
	a.count += p.Samples
}

func (a *accumulator) result() *ClientPredictive {
	out := &ClientPredictive{Clients: a.k, Examples: a.n, Samples: a.count}
	cnt := float64(a.count)
	if !a.regression {
		out.Classes = a.c
		out.Probs = make([][]float32, a.k)
		for k := range out.Probs {
			out.Probs[k] = make([]float32, a.n*a.c)
			for i, s := range a.sum[k] {
				out.Probs[k][i] = float32(s / cnt)
			}
		}
		return out
	}
	out.Mean = make([][]float32, a.k)
	out.Var = make([][]float32, a.k)
	for k := range out.Mean {
		out.Mean[k] = make([]float32, a.n)
		out.Var[k] = make([]float32, a.n)
		noise := a.noise[k][0] / cnt
		for i := 0; i < a.n; i++ {
			mu := a.sum[k][i] / cnt
			v := max(a.sum2[k][i]/cnt-mu*mu, 0)
			out.Mean[k][i] = float32(mu)
			out.Var[k][i] = float32(v + noise)
		}
	}
	return out
}
