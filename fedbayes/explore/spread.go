package explore

import (
	"fmt"
	"math"
	"math/rand/v2"

	"fedbayes.dev/fedbayes/aggregate"
)

// SpreadNorm returns, for each rule, the degree of spread of the aggregate of a model with P
// scalar parameters: the Euclidean norm of the P aggregated standard deviations, the measure of
// Ozer et al. (2022), Table 4. params[p] holds the K clients' Gaussians of parameter p (the same K
// for every p); weights are the normalised client weights (nil: equal). PPA's seed is opt.Seed + p
// for parameter p, so that parameters get independent samples. FedAvg counts as 0.
func SpreadNorm(params [][]aggregate.Gaussian, weights []float64, rules []aggregate.Rule, opt aggregate.Options) ([]float64, error) {
	if len(params) == 0 {
		return nil, fmt.Errorf("explore: spread norm of no parameters")
	}
	K := len(params[0])
	sums := make([]float64, len(rules))
	for p, clients := range params {
		if len(clients) != K {
			return nil, fmt.Errorf("explore: parameter %d has %d clients, parameter 0 has %d", p, len(clients), K)
		}
		o := opt
		o.Seed = opt.Seed + int64(p)
		for i, r := range rules {
			g, err := aggregate.Scalar(r, clients, weights, o)
			if err != nil {
				return nil, fmt.Errorf("explore: parameter %d, rule %s: %w", p, r, err)
			}
			sums[i] += g.Var
		}
	}
	for i := range sums {
		sums[i] = math.Sqrt(sums[i])
	}
	return sums, nil
}

// ClientSpreadNorm returns each client's own degree of spread: the Euclidean norm of its P
// standard deviations.
func ClientSpreadNorm(params [][]aggregate.Gaussian) []float64 {
	if len(params) == 0 {
		return nil
	}
	out := make([]float64, len(params[0]))
	for _, clients := range params {
		for k, c := range clients {
			if k < len(out) {
				out[k] += c.Var
			}
		}
	}
	for k := range out {
		out[k] = math.Sqrt(out[k])
	}
	return out
}

// SyntheticParams returns P parameters of K clients that look like the last layer of a trained
// variational net (a teaching stand-in, not a trained model): parameter p has a centre
// c_p ~ N(0, 1); client k's mean is c_p + 0.1 z with z ~ N(0, 1) (clients disagree a little), and
// its variance is exp(u) with u ~ U(-9, -5) (standard deviations between 0.011 and 0.082). The same
// seed gives the same parameters.
func SyntheticParams(K, P int, seed int64) ([][]aggregate.Gaussian, error) {
	if K < 1 || P < 1 {
		return nil, fmt.Errorf("explore: synthetic parameters need K >= 1 clients and P >= 1 parameters, got K=%d, P=%d", K, P)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	out := make([][]aggregate.Gaussian, P)
	for p := range out {
		c := rng.NormFloat64()
		out[p] = make([]aggregate.Gaussian, K)
		for k := range out[p] {
			out[p][k] = aggregate.Gaussian{Mean: c + 0.1*rng.NormFloat64(), Var: math.Exp(-9 + 4*rng.Float64())}
		}
	}
	return out, nil
}
