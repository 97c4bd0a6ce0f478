package aggregate

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	G "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// This file builds the GoMLX graph of every rule for one parameter, element-wise over the
// parameter's shape. Clients come as K separate nodes (not one stacked node): SimpleGo runs
// independent nodes in parallel, and per-client nodes avoid broadcasting, which is slow there.
//
// Numerics, in float32 with log-variances alpha_k = log s2_k:
//   - sums of variances use a shift by the largest alpha (log-sum-exp), sums of precisions a shift by
//     the smallest alpha, so no exponential overflows or underflows for any finite alpha;
//   - zero-weight clients are left out of weighted sums.

// weightedSum returns sum_k c_k x_k over the clients with c_k != 0, as a balanced tree of additions
// (independent additions can run in parallel).
func weightedSum(xs []*G.Node, c []float64) *G.Node {
	terms := make([]*G.Node, 0, len(xs))
	for k, x := range xs {
		switch c[k] {
		case 0:
			continue
		case 1:
			terms = append(terms, x)
		default:
			terms = append(terms, G.MulScalar(x, c[k]))
		}
	}
	return tree(terms, G.Add)
}

// tree combines nodes pairwise with op, as a balanced tree.
func tree(xs []*G.Node, op func(a, b *G.Node) *G.Node) *G.Node {
	for len(xs) > 1 {
		next := make([]*G.Node, 0, (len(xs)+1)/2)
		for i := 0; i+1 < len(xs); i += 2 {
			next = append(next, op(xs[i], xs[i+1]))
		}
		if len(xs)%2 == 1 {
			next = append(next, xs[len(xs)-1])
		}
		xs = next
	}
	return xs[0]
}

// selected returns the nodes whose coefficient is non-zero.
func selected(xs []*G.Node, c []float64) []*G.Node {
	out := make([]*G.Node, 0, len(xs))
	for k, x := range xs {
		if c[k] != 0 {
			out = append(out, x)
		}
	}
	return out
}

// logSumExpWeighted returns log sum_k c_k exp(scale * a_k), shifted by the largest a_k (c_k >= 0).
func logSumExpWeighted(a []*G.Node, c []float64, scale float64) *G.Node {
	m := tree(selected(a, c), G.Max)
	terms := make([]*G.Node, len(a))
	for k := range a {
		if c[k] != 0 {
			terms[k] = G.Exp(G.MulScalar(G.Sub(a[k], m), scale))
		}
	}
	return G.Add(G.MulScalar(m, scale), G.Log(weightedSum(terms, c)))
}

// logAddExp returns log(exp(a) + exp(b)) without overflow; b may be -Inf.
func logAddExp(a, b *G.Node) *G.Node {
	hi, lo := G.Max(a, b), G.Min(a, b)
	return G.Add(hi, G.Log1p(G.Exp(G.Sub(lo, hi))))
}

// gaussianNodes builds one Gaussian parameter's aggregate (mean, log-variance) for the rules with
// a closed form. w are the normalised weights, mu and lv the clients' nodes.
func gaussianNodes(rule Rule, w []float64, mu, lv []*G.Node) (mean, logVar *G.Node) {
	switch rule {
	case EAA, GAA, AALV, WB, LP:
		mean = weightedSum(mu, w)
	}
	switch rule {
	case EAA: // Ozer et al. (2022), Eq. 4.
		logVar = logSumExpWeighted(lv, w, 1)
	case GAA: // Ozer et al. (2022), Eq. 5.
		w2 := make([]float64, len(w))
		for k := range w {
			w2[k] = w[k] * w[k]
		}
		logVar = logSumExpWeighted(lv, w2, 1)
	case AALV: // Ozer et al. (2022), Eq. 6.
		logVar = weightedSum(lv, w)
	case WB: // Jamoussi et al., Eq. 9: log (sum w s)^2 = 2 log sum w exp(alpha/2).
		logVar = G.MulScalar(logSumExpWeighted(lv, w, 0.5), 2)
	case LP: // Fischer et al. (2024), Eq. 14.
		dev := make([]*G.Node, len(mu))
		for k := range mu {
			if w[k] != 0 {
				dev[k] = G.Square(G.Sub(mu[k], mean))
			}
		}
		logVar = logAddExp(logSumExpWeighted(lv, w, 1), G.Log(weightedSum(dev, w)))
	case Conflation, CF, RKLB: // Fischer et al. (2024), Eqs. 15-16; Ozer et al. (2022), Eq. 8; Jamoussi et al., Eq. 8.
		c := precisionCoefficients(rule, w)
		m0 := tree(selected(lv, c), G.Min)
		r := make([]*G.Node, len(lv))
		rmu := make([]*G.Node, len(lv))
		for k := range lv {
			if c[k] != 0 {
				r[k] = G.Exp(G.Sub(m0, lv[k]))
				rmu[k] = G.Mul(r[k], mu[k])
			}
		}
		s := weightedSum(r, c)
		mean = G.Div(weightedSum(rmu, c), s)
		logVar = G.Sub(m0, G.Log(s))
	}
	return mean, logVar
}

// dwcNodes builds DWC (Fischer et al. (2024), Eq. 17) for one parameter, with precisions scaled by
// the smallest variance among clients and previous global. fallback is 1 where the combined
// precision is not positive (and policy's value was used), else 0.
func dwcNodes(mu, lv []*G.Node, prevMu, prevLv *G.Node, policy DWCPolicy) (mean, logVar, fallback *G.Node) {
	K := len(mu)
	ones := make([]float64, K)
	for k := range ones {
		ones[k] = 1
	}
	m0 := G.Min(tree(lv, G.Min), prevLv)
	r := make([]*G.Node, K)
	rmu := make([]*G.Node, K)
	for k := range lv {
		r[k] = G.Exp(G.Sub(m0, lv[k]))
		rmu[k] = G.Mul(r[k], mu[k])
	}
	total := weightedSum(r, ones)
	totalMu := weightedSum(rmu, ones)
	rPrev := G.MulScalar(G.Exp(G.Sub(m0, prevLv)), float64(K-1))
	s := G.Sub(total, rPrev)
	ok := G.GreaterThan(s, G.MulScalar(total, DWCRelativeFloor))
	mean = G.Div(G.Sub(totalMu, G.Mul(rPrev, prevMu)), s)
	logVar = G.Sub(m0, G.Log(s))
	var fbMean, fbLv *G.Node
	switch policy {
	case DWCUseConflation:
		fbMean, fbLv = G.Div(totalMu, total), G.Sub(m0, G.Log(total))
	default: // DWCKeepPrevious; DWCFail reports the mask as an error.
		fbMean, fbLv = prevMu, prevLv
	}
	mean = G.Where(ok, mean, fbMean)
	logVar = G.Where(ok, logVar, fbLv)
	fallback = G.ConvertDType(G.LogicalNot(ok), dtypes.Float32)
	return
}

// ppaChunk is the number of samples PPA draws in one node.
const ppaChunk = 32

// ppaNodes builds PPA (Ozer et al. (2022), Eq. 7) for one parameter: counts[k] samples from
// client k, pooled. It keeps per-client sums of the standard-normal draws instead of the whole
// population, and combines them exactly: with z-sums S1, S2 of client k, its sample mean is
// mu_k + s_k S1/n_k and its sum of squared deviations s2_k (S2 - S1^2/n_k); the pooled sum of squares
// adds n_k (mean_k - mean)^2. rng is the RNG state node, threaded through and returned.
func ppaNodes(rng *G.Node, counts []int, mu, lv []*G.Node, shape shapes.Shape) (mean, logVar, newRng *G.Node) {
	N := 0
	for _, n := range counts {
		N += n
	}
	means := make([]*G.Node, len(mu))
	ss := make([]*G.Node, 0, len(mu))
	frac := make([]float64, len(mu))
	for k, n := range counts {
		if n == 0 {
			continue
		}
		var s1, s2 *G.Node
		if n > ppaExactDraws {
			s1, s2, rng = ppaSums(rng, n, shape)
		}
		for done := 0; n <= ppaExactDraws && done < n; done += ppaChunk {
			m := min(ppaChunk, n-done)
			var z *G.Node
			rng, z = G.RandomNormal(rng, shapes.Make(dtypes.Float32, append([]int{m}, shape.Dimensions...)...))
			a, b := G.ReduceSum(z, 0), G.ReduceSum(G.Square(z), 0)
			if s1 == nil {
				s1, s2 = a, b
			} else {
				s1, s2 = G.Add(s1, a), G.Add(s2, b)
			}
		}
		zbar := G.DivScalar(s1, float64(n))
		means[k] = G.Add(mu[k], G.Mul(G.Exp(G.MulScalar(lv[k], 0.5)), zbar))
		ssz := G.Max(G.Sub(s2, G.Mul(s1, zbar)), G.ZerosLike(s2)) // >= 0 against rounding.
		ss = append(ss, G.Mul(G.Exp(lv[k]), ssz))
		frac[k] = float64(n) / float64(N)
	}
	mean = weightedSum(means, frac)
	for k := range means {
		if means[k] != nil {
			ss = append(ss, G.MulScalar(G.Square(G.Sub(means[k], mean)), float64(counts[k])))
		}
	}
	logVar = G.Log(G.DivScalar(tree(ss, G.Add), float64(N)))
	return mean, logVar, rng
}

// ppaExactDraws is the largest client count n_k whose draws PPA's tensor form makes one by one (in
// chunks of ppaChunk). Above it, the sums are drawn from their exact joint law in constant memory and
// graph size (ppaSums), so that neither grows with N.
const ppaExactDraws = 4096

// ppaSums draws, for n standard-normal samples per element, the sums S1 = sum z and S2 = sum z^2
// without drawing the samples: S1 = sqrt(n) z1 is exactly N(0, n), and the within-sample sum of
// squares S2 - S1^2/n is chi-square with n-1 degrees of freedom, independent of S1 (Cochran's
// theorem), drawn by the Wilson-Hilferty cube approximation nu (1 - c + z2 sqrt(c))^3, c = 2/(9 nu)
// (Wilson & Hilferty (1931); relative error in the quantiles below 1e-4 for nu > 4096).
func ppaSums(rng *G.Node, n int, shape shapes.Shape) (s1, s2, newRng *G.Node) {
	elem := shapes.Make(dtypes.Float32, shape.Dimensions...)
	var z1, z2 *G.Node
	rng, z1 = G.RandomNormal(rng, elem)
	rng, z2 = G.RandomNormal(rng, elem)
	nu := float64(n - 1)
	c := 2 / (9 * nu)
	base := G.AddScalar(G.MulScalar(z2, math.Sqrt(c)), 1-c)
	chi := G.MulScalar(G.Mul(base, G.Square(base)), nu)
	chi = G.Max(chi, G.ZerosLike(chi))
	s1 = G.MulScalar(z1, math.Sqrt(float64(n)))
	s2 = G.Add(chi, G.DivScalar(G.Square(s1), float64(n)))
	return s1, s2, rng
}
