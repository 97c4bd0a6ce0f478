package aggregate

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	G "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// KLMatrix returns kl[k][j] = KL(q_k || q_j) between client posteriors, summed over the elements of
// all Gaussian parameters (deterministic parameters carry no distribution and are left out). It
// runs on a GoMLX graph in float64, per element
// (log s2_j - log s2_k + (s2_k + (mu_k - mu_j)^2)/s2_j - 1)/2, written as
// (expm1(d) - d + (mu_k - mu_j)^2/s2_j)/2 with d = log s2_k - log s2_j to avoid cancellation.
func KLMatrix(clients []*posterior.Posterior, opt Options) ([][]float64, error) {
	return klPairs(clients, nil, opt)
}

// MaxDiscrepancyWeights returns the maximum-discrepancy client weights of Fischer et al. (2024),
// Eq. 20: gamma_k = 1 / max_j KL(q_k || q_j), normalised. Clients at zero divergence from all
// others (identical clients) share the weight equally.
func MaxDiscrepancyWeights(clients []*posterior.Posterior, opt Options) ([]float64, error) {
	kl, err := KLMatrix(clients, opt)
	if err != nil {
		return nil, err
	}
	if opt.MaxDiscrepancy == MaxOfInverse {
		return weightsFromDivergences(minDiscrepancyFromMatrix(kl), "smallest KL divergence to the other clients")
	}
	return weightsFromDivergences(maxDiscrepancyFromMatrix(kl), "maximum KL divergence to the other clients")
}

// FixedPointWeights returns the distance-to-a-fixed-point client weights of Fischer et al. (2024),
// Eq. 21: gamma_k = 1 / KL(q_g || q_k) with q_g the previous global posterior, normalised. Clients
// at zero divergence from q_g share all the weight.
func FixedPointWeights(clients []*posterior.Posterior, previous *posterior.Posterior, opt Options) ([]float64, error) {
	if previous == nil {
		return nil, fmt.Errorf("aggregate: fixed-point weights need the previous global posterior")
	}
	kl, err := klPairs(clients, previous, opt)
	if err != nil {
		return nil, err
	}
	d := make([]float64, len(clients))
	for k := range d {
		d[k] = kl[0][k]
	}
	return weightsFromDivergences(d, "KL divergence from the previous global")
}

// klPairs computes KL(q_k || q_j) for all client pairs (previous == nil), or the single row
// KL(previous || q_k) (as kl[0][k]).
func klPairs(clients []*posterior.Posterior, previous *posterior.Posterior, opt Options) ([][]float64, error) {
	if err := posterior.CheckCompatible(clients); err != nil {
		return nil, fmt.Errorf("aggregate: %w", err)
	}
	if err := checkFiniteClients(clients, false); err != nil {
		return nil, err
	}
	ref := clients[0]
	if previous != nil {
		if err := checkPrevious(ref, previous, false); err != nil {
			return nil, fmt.Errorf("aggregate: fixed-point weights: %w", err)
		}
	}
	var gaussians []int
	for i, p := range ref.Params {
		if p.IsGaussian() {
			gaussians = append(gaussians, i)
		}
	}
	if len(gaussians) == 0 {
		return nil, fmt.Errorf("aggregate: KL-based weights need Gaussian parameters; the posteriors have none")
	}
	be := opt.Backend
	if be == nil {
		var err error
		if be, err = backend.Default(); err != nil {
			return nil, fmt.Errorf("aggregate: %w", err)
		}
	}
	all := clients
	if previous != nil {
		all = append([]*posterior.Posterior{previous}, clients...)
	}
	var args []any
	for _, i := range gaussians {
		for _, c := range all {
			args = append(args, c.Params[i].Mean, c.Params[i].LogVar)
		}
	}
	K, n := len(clients), len(all)
	graphFn := func(in []*G.Node) []*G.Node {
		var total []*G.Node // one per output pair, summed over parameters
		pos := 0
		for range gaussians {
			mu, lv, prec := make([]*G.Node, n), make([]*G.Node, n), make([]*G.Node, n)
			for c := range n {
				mu[c] = G.ConvertDType(in[pos], dtypes.Float64)
				lv[c] = G.ConvertDType(in[pos+1], dtypes.Float64)
				prec[c] = G.Exp(G.Neg(lv[c]))
				pos += 2
			}
			kl := func(a, b int) *G.Node { // KL(all[a] || all[b]), summed.
				d := G.Sub(lv[a], lv[b])
				e := G.Add(G.Sub(G.Expm1(d), d), G.Mul(G.Square(G.Sub(mu[a], mu[b])), prec[b]))
				return G.MulScalar(G.ReduceAllSum(e), 0.5)
			}
			var pairs []*G.Node
			if previous != nil {
				for k := range K {
					pairs = append(pairs, kl(0, k+1))
				}
			} else {
				for a := range K {
					for b := range K {
						if a == b {
							pairs = append(pairs, G.ScalarZero(in[0].Graph(), dtypes.Float64))
						} else {
							pairs = append(pairs, kl(a, b))
						}
					}
				}
			}
			if total == nil {
				total = pairs
			} else {
				for i := range total {
					total[i] = G.Add(total[i], pairs[i])
				}
			}
		}
		return []*G.Node{G.Stack(total, 0)}
	}
	res, err := execGraph(be, graphFn, args)
	if err != nil {
		return nil, fmt.Errorf("aggregate: KL divergences: %w", err)
	}
	flat, err := tensors.CopyFlatData[float64](res[0])
	if err != nil {
		return nil, fmt.Errorf("aggregate: KL divergences: %w", err)
	}
	rows := K
	if previous != nil {
		rows = 1
	}
	out := make([][]float64, rows)
	for r := range out {
		out[r] = make([]float64, K)
		for k := range K {
			v := flat[r*K+k]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("aggregate: KL divergence of client pair (%d, %d) is %v", r, k, v)
			}
			out[r][k] = math.Max(0, v) // KL >= 0; clamp rounding.
		}
	}
	return out, nil
}
