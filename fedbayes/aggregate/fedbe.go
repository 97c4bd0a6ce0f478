package aggregate

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/internal/randx"
	"fedbayes.dev/fedbayes/posterior"
	G "github.com/gomlx/gomlx/pkg/core/graph"
)

// FedBE's global model distributions (Chen & Chao, "FedBE: Making Bayesian Model Ensemble
// Applicable to Federated Learning"). The clients are point estimates: the Mean of every parameter
// is the client's weight tensor (log-variances, if any, are ignored) and the M sampled models are
// deterministic posteriors (LogVar nil). FedBE's teacher ensemble also includes the weighted mean
// (FedAvg) and the client models themselves; those are the caller's to add.

// FedBEGaussian fits the diagonal Gaussian N(mu, diag(s2)) to the client models, with
// mu = sum w theta_k and s2 = sum w (theta_k - mu)^2 (weights: nil for equal, normally the
// train-size weights), and draws M models from it with the given seed (same seed, same models).
func FedBEGaussian(clients []*posterior.Posterior, weights []float64, M int, seed int64, opt Options) (
	[]*posterior.Posterior, error) {
	w, err := fedbeCheck(clients, weights, M, opt)
	if err != nil {
		return nil, err
	}
	ref := clients[0]
	graphFn := func(in []*G.Node) []*G.Node {
		rng := G.RNGStateFromSeedForGraph(in[0].Graph(), seed)
		var outs []*G.Node
		for i := range ref.Params {
			theta := in[i*len(clients) : (i+1)*len(clients)]
			mean := weightedSum(theta, w)
			dev := make([]*G.Node, len(theta))
			for k := range theta {
				if w[k] != 0 {
					dev[k] = G.Square(G.Sub(theta[k], mean))
				}
			}
			sd := G.Sqrt(weightedSum(dev, w))
			for range M {
				var z *G.Node
				rng, z = G.RandomNormal(rng, mean.Shape())
				outs = append(outs, G.Add(mean, G.Mul(sd, z)))
			}
		}
		return outs
	}
	return fedbeRun(clients, M, graphFn, opt)
}

// FedBEDirichlet draws M models from the Dirichlet distribution over client models: for each
// model, gamma ~ Dir(alpha, ..., alpha) and theta = sum_k gamma_k w_k theta_k / sum_j gamma_j w_j,
// w the client weights (nil for equal, normally the train-size weights). alpha > 0 (1 is uniform on
// the simplex). Same seed, same models.
func FedBEDirichlet(clients []*posterior.Posterior, weights []float64, alpha float64, M int, seed int64, opt Options) (
	[]*posterior.Posterior, error) {
	w, err := fedbeCheck(clients, weights, M, opt)
	if err != nil {
		return nil, err
	}
	if !(alpha > 0) || math.IsInf(alpha, 0) {
		return nil, fmt.Errorf("aggregate: FedBE Dirichlet concentration %v must be positive and finite", alpha)
	}
	coefs := DirichletMixtureCoefficients(w, alpha, M, seed)
	ref := clients[0]
	graphFn := func(in []*G.Node) []*G.Node {
		var outs []*G.Node
		for i := range ref.Params {
			theta := in[i*len(clients) : (i+1)*len(clients)]
			for m := range M {
				outs = append(outs, weightedSum(theta, coefs[m]))
			}
		}
		return outs
	}
	return fedbeRun(clients, M, graphFn, opt)
}

// DirichletMixtureCoefficients returns, for each of M draws gamma ~ Dir(alpha), the normalised
// coefficients gamma_k w_k / sum_j gamma_j w_j of FedBE's Dirichlet model distribution.
func DirichletMixtureCoefficients(w []float64, alpha float64, M int, seed int64) [][]float64 {
	rng := newRand(seed)
	out := make([][]float64, M)
	for m := range out {
		c := make([]float64, len(w))
		sum := 0.0
		for k := range c {
			c[k] = randx.Gamma(rng, alpha) * w[k]
			sum += c[k]
		}
		if sum == 0 { // all gammas underflowed (tiny alpha): fall back to the weights.
			copy(c, w)
			sum = 1
		}
		for k := range c {
			c[k] /= sum
		}
		out[m] = c
	}
	return out
}

func fedbeCheck(clients []*posterior.Posterior, weights []float64, M int, opt Options) ([]float64, error) {
	if M < 1 {
		return nil, fmt.Errorf("aggregate: FedBE: number of sampled models %d must be at least 1", M)
	}
	if err := posterior.CheckCompatible(clients); err != nil {
		return nil, fmt.Errorf("aggregate: FedBE: %w", err)
	}
	if err := checkFiniteClients(clients, false); err != nil {
		return nil, err
	}
	return checkWeights(weights, len(clients), opt.Normalize)
}

// fedbeRun executes a FedBE graph whose outputs are, per parameter, the M sampled tensors.
func fedbeRun(clients []*posterior.Posterior, M int, graphFn func([]*G.Node) []*G.Node, opt Options) (
	[]*posterior.Posterior, error) {
	be := opt.Backend
	if be == nil {
		var err error
		if be, err = backend.Default(); err != nil {
			return nil, fmt.Errorf("aggregate: %w", err)
		}
	}
	var args []any
	ref := clients[0]
	for i := range ref.Params {
		for _, c := range clients {
			args = append(args, c.Params[i].Mean)
		}
	}
	res, err := execGraph(be, graphFn, args)
	if err != nil {
		return nil, fmt.Errorf("aggregate: FedBE: %w", err)
	}
	out := make([]*posterior.Posterior, M)
	for m := range out {
		out[m] = &posterior.Posterior{Params: make([]posterior.Param, len(ref.Params))}
		for i, p := range ref.Params {
			out[m].Params[i] = posterior.Param{Name: p.Name, Mean: res[i*M+m]}
		}
	}
	return out, nil
}
