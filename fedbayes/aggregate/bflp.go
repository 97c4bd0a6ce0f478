package aggregate

import (
	"fmt"
	"math"

	G "github.com/gomlx/gomlx/pkg/core/graph"
)

// Behaviour of Options.BFLP, read from the public code of Ozer et al. (2022), BFL-P
// (github.com/ituvisionlab/BFL-P, utils/FL/update.py), where it differs from the paper's Eqs. 4-8:
//
//   - every rule but AALV reads the clients' log-variances clamped to [BFLPLogVarMin, BFLPLogVarMax]
//     (the clamp of BFL-P's VBLinear); AALV averages the raw values (Eq. 6 on the unclamped
//     parameters);
//   - EAA and GAA accumulate the variance client by client and clamp the log of every partial sum
//     again before adding the next client: s_1 = c_1 v_1, s_k = exp(clamp(log s_{k-1})) + c_k v_k,
//     with c_k = w_k (EAA) or w_k^2 (GAA) and v_k the clamped client variances; the result is log s_K,
//     unclamped. Below the floor this raises the variance: two clients at the floor with equal weights
//     give 1.5 e^-8 (EAA) and 1.25 e^-8 (GAA) where Eqs. 4-5 give e^-8 and 0.5 e^-8;
//   - PPA draws floor(w_k N) samples from client k (Python's int(), so the population may hold fewer
//     than N) and uses the unbiased (1/(n-1)) variance of the pooled samples.
//
// The order of the partial sums is the order of the clients as given (BFL-P uses its round's selection
// order).

// BFLP clamp range of client log-variances in the aggregation (BFL-P's clamp(-8, 8)).
const (
	BFLPLogVarMin = -8.0
	BFLPLogVarMax = 8.0
)

// clampLogVars clamps every client's log-variance node to [BFLPLogVarMin, BFLPLogVarMax].
func clampLogVars(lv []*G.Node) []*G.Node {
	out := make([]*G.Node, len(lv))
	for k, x := range lv {
		out[k] = G.ClipScalar(x, BFLPLogVarMin, BFLPLogVarMax)
	}
	return out
}

// bflpPartialSums returns log s_K of the clamped partial sums (see above) for coefficients c (w for
// EAA, w^2 for GAA) and clamped client log-variances a. A zero coefficient adds nothing but still
// clamps the running sum, as in BFL-P.
func bflpPartialSums(a []*G.Node, c []float64) *G.Node {
	var s *G.Node
	for k, ak := range a {
		var term *G.Node // log(c_k v_k), nil when c_k = 0
		if c[k] > 0 {
			term = G.AddScalar(ak, math.Log(c[k]))
		}
		switch {
		case s == nil && term == nil:
			s = G.AddScalar(G.ZerosLike(ak), math.Inf(-1))
		case s == nil:
			s = term
		case term == nil:
			s = G.ClipScalar(s, BFLPLogVarMin, BFLPLogVarMax)
		default:
			s = logAddExp(G.ClipScalar(s, BFLPLogVarMin, BFLPLogVarMax), term)
		}
	}
	return s
}

// bflpGaussianNodes is gaussianNodes under Options.BFLP for EAA and GAA (a: clamped log-variances).
func bflpGaussianNodes(rule Rule, w []float64, mu, a []*G.Node) (mean, logVar *G.Node) {
	c := make([]float64, len(w))
	for k := range w {
		c[k] = w[k]
		if rule == GAA {
			c[k] = w[k] * w[k]
		}
	}
	return weightedSum(mu, w), bflpPartialSums(a, c)
}

// floorCounts are PPA's per-client sample counts under Options.BFLP: floor(w_k N) each. It is an error
// if fewer than 2 samples remain (no unbiased variance).
func floorCounts(w []float64, N int) ([]int, error) {
	counts := make([]int, len(w))
	total := 0
	for k, v := range w {
		counts[k] = int(math.Floor(v * float64(N)))
		total += counts[k]
	}
	if total < 2 {
		return nil, fmt.Errorf("aggregate: PPA (BFL-P) with population size %d draws %d samples in all "+
			"(floor(w_k N) per client); need at least 2", N, total)
	}
	return counts, nil
}

// unbiasedShift is log(n/(n-1)), the shift that turns the log of a biased (1/n) variance of n samples
// into the log of the unbiased (1/(n-1)) one.
func unbiasedShift(counts []int) float64 {
	n := 0
	for _, c := range counts {
		n += c
	}
	return math.Log(float64(n) / float64(n-1))
}

// babflGAANodes is GAA under Options.BABFL: BA-BFL's gaa() averages the variances with numpy's
// average and weights w_k^2, which divides by their sum: variance sum w^2 s2 / sum w^2 (Eq. 5 without
// the division). With equal weights it equals EAA's variance.
func babflGAANodes(w []float64, mu, lv []*G.Node) (mean, logVar *G.Node) {
	w2 := make([]float64, len(w))
	var sum float64
	for k := range w {
		w2[k] = w[k] * w[k]
		sum += w2[k]
	}
	for k := range w2 {
		w2[k] /= sum
	}
	return weightedSum(mu, w), logSumExpWeighted(lv, w2, 1)
}
