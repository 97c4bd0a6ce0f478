package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"
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
	mean := 0.0
	for k, c := range clients {
		mean += w[k] * c.Mean
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
	case AALV:
		lv := 0.0
		for k, c := range clients {
			lv += w[k] * math.Log(c.Var)
		}
		return Gaussian{Mean: mean, Var: math.Exp(lv)}, nil
	case WB:
		s := 0.0
		for k, c := range clients {
			s += w[k] * math.Sqrt(c.Var)
		}
		return Gaussian{Mean: mean, Var: s * s}, nil
	case LP:
		v := 0.0
		for k, c := range clients {
			d := c.Mean - mean
			v += w[k] * (c.Var + d*d)
		}
		return Gaussian{Mean: mean, Var: v}, nil
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
	var sumR, sumRMu float64
	for k, c := range clients {
		if coef[k] == 0 {
			continue
		}
		r := coef[k] * (minVar / c.Var)
		sumR += r
		sumRMu += r * c.Mean
	}
	return Gaussian{Mean: sumRMu / sumR, Var: minVar / sumR}
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
	var sumR, sumRMu float64
	for _, c := range clients {
		r := minVar / c.Var
		sumR += r
		sumRMu += r * c.Mean
	}
	rPrev := minVar / prev.Var
	s := sumR - (K-1)*rPrev
	if s > DWCRelativeFloor*sumR {
		return Gaussian{Mean: (sumRMu - (K-1)*rPrev*prev.Mean) / s, Var: minVar / s}, nil
	}
	switch opt.DWCPolicy {
	case DWCKeepPrevious:
		return prev, nil
	case DWCUseConflation:
		return Gaussian{Mean: sumRMu / sumR, Var: minVar / sumR}, nil
	case DWCFail:
		return Gaussian{}, fmt.Errorf("aggregate: DWC: combined precision %g (sum of client precisions minus %d times "+
			"the previous global's) is not positive: the clients are less certain than the previous global",
			s/minVar, len(clients)-1)
	}
	return Gaussian{}, fmt.Errorf("aggregate: unknown DWC policy %v", opt.DWCPolicy)
}

// populationCounts splits a population of N samples among clients in proportion to their
// weights (N w_k, rounded by largest remainder so that the counts sum to N).
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
		counts[k] = int(math.Floor(x))
		total += counts[k]
		rems[k] = rem{k, x - math.Floor(x)}
	}
	// Stable order: larger remainder first, then lower client index.
	for i := 1; i < len(rems); i++ {
		for j := i; j > 0 && (rems[j].frac > rems[j-1].frac); j-- {
			rems[j], rems[j-1] = rems[j-1], rems[j]
		}
	}
	for i := 0; total < N; i++ {
		counts[rems[i%len(rems)].k]++
		total++
	}
	return counts
}

// newRand returns the seeded generator of the scalar sampled forms.
func newRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
}

// scalarPPA is PPA in float64: Ozer et al. (2022), Eq. 7, with a population of N samples,
// round(N w_k) of them from client k.
func scalarPPA(clients []Gaussian, w []float64, opt Options) (Gaussian, error) {
	N, err := opt.populationSize()
	if err != nil {
		return Gaussian{}, err
	}
	rng := newRand(opt.Seed)
	counts := populationCounts(w, N)
	xs := make([]float64, 0, N)
	for k, c := range clients {
		sd := math.Sqrt(c.Var)
		for range counts[k] {
			xs = append(xs, c.Mean+sd*rng.NormFloat64())
		}
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(N)
	v := 0.0
	for _, x := range xs {
		v += (x - mean) * (x - mean)
	}
	return Gaussian{Mean: mean, Var: v / float64(N)}, nil
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
