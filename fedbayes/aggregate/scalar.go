package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Gaussian is a univariate Gaussian N(Mean, Var), the scalar form of one parameter's posterior.
type Gaussian struct {
	Mean, Var float64
}

// Density returns the probability density of g at x.
func (g Gaussian) Density(x float64) float64 {
	d := x - g.Mean
	return math.Exp(-d*d/(2*g.Var)) / math.Sqrt(2*math.Pi*g.Var)
}

func checkGaussian(g Gaussian, who string, allowPointMass bool) error {
	if math.IsNaN(g.Mean) || math.IsInf(g.Mean, 0) {
		return fmt.Errorf("aggregate: %s: mean is %v", who, g.Mean)
	}
	if math.IsNaN(g.Var) || math.IsInf(g.Var, 0) {
		return fmt.Errorf("aggregate: %s: variance is %v", who, g.Var)
	}
	if g.Var < 0 || (g.Var == 0 && !allowPointMass) {
		return fmt.Errorf("aggregate: %s: variance %v is not positive", who, g.Var)
	}
	return nil
}

func checkClients(clients []Gaussian, allowPointMass bool) error {
	if len(clients) == 0 {
		return fmt.Errorf("aggregate: no clients")
	}
	for k, c := range clients {
		if err := checkGaussian(c, fmt.Sprintf("client %d", k), allowPointMass); err != nil {
			return err
		}
	}
	return nil
}

// Scalar aggregates K univariate Gaussian clients with the given rule, in float64. weights are the
// normalised client weights (nil: equal weights). See the Rule constants for the formulas.
// FedAvg returns a point mass (Var 0) and accepts clients with Var 0.
func Scalar(rule Rule, clients []Gaussian, weights []float64, opt Options) (Gaussian, error) {
	if _, err := ParseRule(string(rule)); err != nil {
		return Gaussian{}, err
	}
	if err := checkClients(clients, rule == FedAvg); err != nil {
		return Gaussian{}, err
	}
	w, err := checkWeights(weights, len(clients), opt.Normalize)
	if err != nil {
		return Gaussian{}, err
	}
	g, err := scalarRule(rule, clients, w, opt)
	if err != nil {
		return Gaussian{}, err
	}
	if math.IsNaN(g.Mean) || math.IsInf(g.Mean, 0) || math.IsNaN(g.Var) || math.IsInf(g.Var, 0) {
		return Gaussian{}, fmt.Errorf("aggregate: %s: the result (mean %v, variance %v) is outside the range of float64; "+
			"rescale the clients (for example divide every mean by 1e100 and every variance by 1e200)", rule, g.Mean, g.Var)
	}
	return g, nil
}

// scalarRule computes one rule on checked clients and normalised weights. Every sum is a convex
// combination (bounded by its largest term) or is computed on values scaled by their largest
// magnitude, so that a representable answer is never lost to an intermediate overflow; an answer
// that is not representable comes out non-finite and Scalar refuses it.
func scalarRule(rule Rule, clients []Gaussian, w []float64, opt Options) (Gaussian, error) {
	mean := 0.0
	for k, c := range clients {
		mean += w[k] * c.Mean // convex: |partial sums| <= max |mu_k|
	}
	switch rule {
	case FedAvg:
		return Gaussian{Mean: mean}, nil
	case EAA, GAA:
		v := 0.0
		for k, c := range clients {
			if rule == GAA {
				v += w[k] * w[k] * c.Var
			} else {
				v += w[k] * c.Var
			}
		}
		return Gaussian{Mean: mean, Var: v}, nil
	case AALV: // Ozer et al. (2022), Eq. 6: the geometric mean, in log space (exact for subnormals).
		lv := 0.0
		for k, c := range clients {
			if w[k] != 0 {
				lv += w[k] * logSubnormal(c.Var)
			}
		}
		return Gaussian{Mean: mean, Var: math.Exp(lv)}, nil
	case WB:
		s := 0.0
		for k, c := range clients {
			s += w[k] * math.Sqrt(c.Var)
		}
		return Gaussian{Mean: mean, Var: s * s}, nil
	case LP: // Fischer et al. (2024), Eq. 14, with deviations scaled by the largest magnitude.
		scale := 0.0
		for k, c := range clients {
			if w[k] != 0 {
				scale = math.Max(scale, math.Max(math.Abs(c.Mean-mean), math.Sqrt(c.Var)))
			}
		}
		if scale == 0 || math.IsInf(scale, 0) {
			scale = 1
		}
		v := 0.0
		for k, c := range clients {
			d := (c.Mean - mean) / scale
			v += w[k] * (c.Var/scale/scale + d*d)
		}
		return Gaussian{Mean: mean, Var: v * scale * scale}, nil
	case Conflation, CF, RKLB:
		return precisionPool(rule, clients, w), nil
	case DWC:
		return scalarDWC(clients, opt)
	case PPA:
		return scalarPPA(clients, w, opt)
	}
	return Gaussian{}, fmt.Errorf("aggregate: rule %q has no scalar form", rule)
}

// precisionPool computes Conflation, CF and RKLB with precisions scaled by the smallest variance
// (r_k = c_k * minVar / s2_k lies in (0, c_k]), so that no precision overflows or underflows:
// mean = sum r mu / sum r, variance = minVar / sum r. Fischer et al. (2024), Eqs. 15-16;
// Ozer et al. (2022), Eq. 8; Jamoussi et al., Eq. 8.
func precisionPool(rule Rule, clients []Gaussian, w []float64) Gaussian {
	coef := precisionCoefficients(rule, w)
	minVar := math.Inf(1)
	for k, c := range clients {
		if coef[k] > 0 {
			minVar = math.Min(minVar, c.Var)
		}
	}
	var sumR float64
	for k, c := range clients {
		if coef[k] != 0 {
			sumR += coef[k] * (minVar / c.Var)
		}
	}
	// The mean as a convex combination with weights r_k / sum r: no overflow for any finite means.
	mean := 0.0
	for k, c := range clients {
		if coef[k] != 0 {
			mean += coef[k] * (minVar / c.Var) / sumR * c.Mean
		}
	}
	return Gaussian{Mean: mean, Var: minVar / sumR}
}

// logSubnormal is math.Log, exact also for subnormal x (scaled into the normal range first).
func logSubnormal(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p+64) - 64*math.Ln2
	}
	return math.Log(x)
}

// precisionCoefficients returns the per-client factor c_k of the precision-pooling rules:
// 1 for Conflation, w_k/w_max for CF (so that CF's variance w_max/sum(w/s2) = 1/sum(c/s2), and
// equal weights give exactly Conflation), w_k for RKLB.
func precisionCoefficients(rule Rule, w []float64) []float64 {
	c := make([]float64, len(w))
	wMax := 0.0
	for _, v := range w {
		wMax = math.Max(wMax, v)
	}
	for k := range w {
		switch rule {
		case Conflation:
			c[k] = 1
		case CF:
			c[k] = w[k] / wMax
		default:
			c[k] = w[k]
		}
	}
	return c
}

// scalarDWC is DWC in float64 (Fischer et al. (2024), Eq. 17), with precisions scaled by the
// smallest variance among the clients and the previous global.
func scalarDWC(clients []Gaussian, opt Options) (Gaussian, error) {
	if opt.Previous == nil {
		return Gaussian{}, fmt.Errorf("aggregate: DWC needs the previous global (Options.Previous)")
	}
	prev := *opt.Previous
	if err := checkGaussian(prev, "previous global", false); err != nil {
		return Gaussian{}, err
	}
	K := float64(len(clients))
	minVar := prev.Var
	for _, c := range clients {
		minVar = math.Min(minVar, c.Var)
	}
	var sumR float64
	for _, c := range clients {
		sumR += minVar / c.Var
	}
	rPrev := minVar / prev.Var
	s := sumR - (K-1)*rPrev
	if s > DWCRelativeFloor*sumR {
		// Each term divided by s before summing: finite wherever the answer is.
		mean := -(K - 1) * rPrev / s * prev.Mean
		for _, c := range clients {
			mean += (minVar / c.Var) / s * c.Mean
		}
		return Gaussian{Mean: mean, Var: minVar / s}, nil
	}
	switch opt.DWCPolicy {
	case DWCKeepPrevious:
		return prev, nil
	case DWCUseConflation:
		mean := 0.0
		for _, c := range clients {
			mean += (minVar / c.Var) / sumR * c.Mean
		}
		return Gaussian{Mean: mean, Var: minVar / sumR}, nil
	case DWCFail:
		return Gaussian{}, fmt.Errorf("aggregate: DWC: combined precision %g (sum of client precisions minus %d times "+
			"the previous global's) is not positive: the clients are less certain than the previous global",
			s/minVar, len(clients)-1)
	}
	return Gaussian{}, fmt.Errorf("aggregate: unknown DWC policy %v", opt.DWCPolicy)
}

// MaxPopulationSize is the largest PPA population size N: the scalar form draws N normals (about
// 10 s at the maximum), and N w_k stays exact in float64.
const MaxPopulationSize = 1_000_000_000

// populationCounts splits a population of N samples among clients in proportion to their
// weights (N w_k, rounded by largest remainder so that the counts sum to N). N must be at most
// MaxPopulationSize (so that N w_k is exact enough and no count overflows).
func populationCounts(w []float64, N int) []int {
	counts := make([]int, len(w))
	type rem struct {
		k    int
		frac float64
	}
	rems := make([]rem, len(w))
	total := 0
	for k, v := range w {
		x := v * float64(N)
		fl := math.Floor(x)
		counts[k] = int(fl)
		total += counts[k]
		rems[k] = rem{k, x - fl}
	}
	// Stable order: larger remainder first, then lower client index.
	sort.SliceStable(rems, func(i, j int) bool { return rems[i].frac > rems[j].frac })
	for i := 0; total < N && i < 2*len(rems); i++ {
		counts[rems[i%len(rems)].k]++
		total++
	}
	for k := 0; total > N && k < len(counts); k++ { // rounding of N w_k upwards; never seen
		if counts[k] > 0 {
			counts[k]--
			total--
		}
	}
	return counts
}

// newRand returns the seeded generator of the scalar sampled forms.
func newRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
}

// scalarPPA is PPA in float64: Ozer et al. (2022), Eq. 7, with a population of N samples,
// round(N w_k) of them from client k. The population is streamed: per client, only the sums of its
// standard-normal draws z are kept (S1 = sum z, S2 = sum z^2), so memory does not grow with N. The
// client's sample mean is mu_k + s_k S1/n_k and its sum of squared deviations s2_k (S2 - S1^2/n_k);
// the pooled sum of squares adds n_k (mean_k - mean)^2, computed on values scaled by the largest
// magnitude so that it overflows only where the answer does.
func scalarPPA(clients []Gaussian, w []float64, opt Options) (Gaussian, error) {
	N, err := opt.populationSize()
	if err != nil {
		return Gaussian{}, err
	}
	if N < 1 {
		return Gaussian{}, fmt.Errorf("aggregate: PPA population size %d: need at least 1 sample", N)
	}
	rng := newRand(opt.Seed)
	counts := populationCounts(w, N)
	// Work on u = (x - center) / (2h): centred on the weighted mean of the means and scaled by the
	// largest half-deviation h, so that no intermediate overflows or loses the variances.
	center := 0.0
	for k, c := range clients {
		center += w[k] * c.Mean
	}
	h := 0.0
	for k, c := range clients {
		if counts[k] > 0 {
			h = math.Max(h, math.Abs(c.Mean*0.5-center*0.5)+0.5*math.Sqrt(c.Var))
		}
	}
	if h == 0 {
		h = 0.5
	}
	means := make([]float64, len(clients)) // client sample means, in u
	ss := 0.0                              // within-client sums of squares, in u
	for k, c := range clients {
		n := counts[k]
		if n == 0 {
			continue
		}
		var s1, s2 float64
		for range n {
			z := rng.NormFloat64()
			s1 += z
			s2 += z * z
		}
		sd := 0.5 * math.Sqrt(c.Var) / h
		zbar := s1 / float64(n)
		means[k] = (c.Mean*0.5-center*0.5)/h + sd*zbar
		ss += sd * sd * math.Max(s2-s1*zbar, 0)
	}
	mean := 0.0
	for k := range clients {
		mean += float64(counts[k]) / float64(N) * means[k]
	}
	for k := range clients {
		if counts[k] > 0 {
			d := means[k] - mean
			ss += float64(counts[k]) * d * d
		}
	}
	return Gaussian{Mean: center + 2*h*mean, Var: ss / float64(N) * (2 * h) * (2 * h)}, nil
}

// MixtureDensity returns the density of the linear pool sum_k w_k N(x; mu_k, s2_k) at x, the exact
// LP distribution of Fischer et al. (2024), Eq. 12 (weights nil: equal weights). It does not
// validate its input: invalid clients or weights give NaN (Scalar reports why).
func MixtureDensity(clients []Gaussian, weights []float64, x float64) float64 {
	if len(clients) == 0 || (weights != nil && len(weights) != len(clients)) {
		return math.NaN()
	}
	p := 0.0
	for k, c := range clients {
		w := 1 / float64(len(clients))
		if weights != nil {
			w = weights[k]
		}
		p += w * c.Density(x)
	}
	return p
}
