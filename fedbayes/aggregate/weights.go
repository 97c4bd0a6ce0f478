package aggregate

import (
	"fmt"
	"math"
)

// weightSumTolerance is how far from one the weights' sum may be without Options.Normalize.
const weightSumTolerance = 1e-6

// checkWeights validates K client weights and returns them normalised to sum to one. nil weights
// mean equal weights. Weights must be finite and non-negative with a positive sum; without
// normalize they must also sum to one within weightSumTolerance.
func checkWeights(weights []float64, K int, normalize bool) ([]float64, error) {
	if K <= 0 {
		return nil, fmt.Errorf("aggregate: no clients")
	}
	if weights == nil {
		return EqualWeights(K), nil
	}
	if len(weights) != K {
		return nil, fmt.Errorf("aggregate: %d weights for %d clients", len(weights), K)
	}
	wMax := 0.0
	for k, w := range weights {
		switch {
		case math.IsNaN(w) || math.IsInf(w, 0):
			return nil, fmt.Errorf("aggregate: client %d: weight is %v", k, w)
		case w < 0:
			return nil, fmt.Errorf("aggregate: client %d: weight %v is negative", k, w)
		}
		wMax = math.Max(wMax, w)
	}
	if wMax == 0 {
		return nil, fmt.Errorf("aggregate: the weights sum to 0; at least one must be positive")
	}
	// Sum the weights scaled by the largest, so that weights near the float64 maximum (1e308, 1e308)
	// still normalise: sum w_k/w_max lies in [1, K].
	scaled := 0.0
	for _, w := range weights {
		scaled += w / wMax
	}
	if !normalize {
		if sum := scaled * wMax; math.Abs(sum-1) > weightSumTolerance {
			return nil, &WeightSumError{Sum: sum}
		}
	}
	out := make([]float64, K)
	for k, w := range weights {
		out[k] = w / wMax / scaled
	}
	return out, nil
}

// WeightSumError is the error of weights that do not sum to one when they are not to be normalised.
type WeightSumError struct {
	// Sum is the weights' sum (+Inf when it overflows float64).
	Sum float64
}

// Error implements error; it names the Go option (a command names its own flag).
func (e *WeightSumError) Error() string {
	return fmt.Sprintf("aggregate: the weights sum to %v, not 1 (set Options.Normalize to normalise them)", e.Sum)
}

// CheckWeights validates K client weights as Scalar and Posteriors do and returns them normalised
// (nil: equal weights). Without normalize, weights that do not sum to one give a *WeightSumError.
func CheckWeights(weights []float64, K int, normalize bool) ([]float64, error) {
	return checkWeights(weights, K, normalize)
}

// NormalizeWeights checks raw non-negative client weights (for example unnormalised scores) and
// returns them divided by their sum.
func NormalizeWeights(raw []float64) ([]float64, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("aggregate: no weights to normalise")
	}
	return checkWeights(raw, len(raw), true)
}

// EqualWeights returns w_k = 1/K for K clients. Fischer et al. (2024), Eq. 18 (FVBA in Ozer et
// al. (2022)).
func EqualWeights(K int) []float64 {
	w := make([]float64, K)
	for k := range w {
		w[k] = 1 / float64(K)
	}
	return w
}

// SizeWeights returns w_k = |D_k| / sum |D_j| from the clients' local training-set sizes.
// Fischer et al. (2024), Eq. 19; McMahan et al. (2017) (FVBWA in Ozer et al. (2022)).
func SizeWeights(sizes []int) ([]float64, error) {
	if len(sizes) == 0 {
		return nil, fmt.Errorf("aggregate: no client sizes")
	}
	raw := make([]float64, len(sizes))
	for k, n := range sizes {
		if n < 0 {
			return nil, fmt.Errorf("aggregate: client %d: training-set size %d is negative", k, n)
		}
		raw[k] = float64(n)
	}
	w, err := checkWeights(raw, len(raw), true)
	if err != nil {
		return nil, fmt.Errorf("aggregate: size weights: every client has an empty training set")
	}
	return w, nil
}

// weightsFromDivergences turns divergences d_k >= 0 into normalised weights proportional to
// gamma_k = 1/d_k (Fischer et al. (2024), Eqs. 20-21). A zero divergence gives an infinite gamma:
// the clients with d_k = 0 then share the weight equally and the others get none (the limit of
// the formula). what names the divergence in errors.
func weightsFromDivergences(d []float64, what string) ([]float64, error) {
	zeros := 0
	for k, v := range d {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("aggregate: client %d: %s is %v; want a finite non-negative number", k, what, v)
		}
		if v == 0 {
			zeros++
		}
	}
	w := make([]float64, len(d))
	if zeros > 0 {
		for k, v := range d {
			if v == 0 {
				w[k] = 1 / float64(zeros)
			}
		}
		return w, nil
	}
	for k, v := range d {
		w[k] = 1 / v
	}
	return checkWeights(w, len(w), true)
}

// maxDiscrepancyFromMatrix returns max_j kl[k][j] for each client k.
func maxDiscrepancyFromMatrix(kl [][]float64) []float64 {
	d := make([]float64, len(kl))
	for k, row := range kl {
		for _, v := range row {
			d[k] = math.Max(d[k], v)
		}
	}
	return d
}

// minDiscrepancyFromMatrix returns min_{j != k} kl[k][j] for each client k (kl[k][k] for a single
// client): 1 / min_j KL = max_j 1 / KL, the MaxOfInverse reading of Eq. 20.
func minDiscrepancyFromMatrix(kl [][]float64) []float64 {
	d := make([]float64, len(kl))
	for k, row := range kl {
		d[k] = math.Inf(1)
		for j, v := range row {
			if j != k || len(row) == 1 {
				d[k] = math.Min(d[k], v)
			}
		}
	}
	return d
}

// KL returns the Kullback-Leibler divergence KL(p || q) between two univariate Gaussians:
// (log(s2_q/s2_p) + (s2_p + (mu_p - mu_q)^2)/s2_q - 1) / 2, clamped at 0 against rounding.
func KL(p, q Gaussian) float64 {
	d := p.Mean - q.Mean
	return math.Max(0, 0.5*(math.Log(q.Var/p.Var)+(p.Var+d*d)/q.Var-1))
}

// MaxDiscrepancyWeightsScalar is MaxDiscrepancyWeights for univariate clients:
// gamma_k = 1 / max_j KL(q_k || q_j), w_k = gamma_k / sum gamma. Fischer et al. (2024), Eq. 20.
func MaxDiscrepancyWeightsScalar(clients []Gaussian) ([]float64, error) {
	if err := checkClients(clients, false); err != nil {
		return nil, err
	}
	kl := make([][]float64, len(clients))
	for k := range clients {
		kl[k] = make([]float64, len(clients))
		for j := range clients {
			kl[k][j] = KL(clients[k], clients[j])
		}
	}
	return weightsFromDivergences(maxDiscrepancyFromMatrix(kl), "maximum KL divergence to the other clients")
}

// FixedPointWeightsScalar is FixedPointWeights for univariate clients: gamma_k = 1 / KL(q_g || q_k)
// for the previous global q_g, w_k = gamma_k / sum gamma. Fischer et al. (2024), Eq. 21.
func FixedPointWeightsScalar(clients []Gaussian, previous Gaussian) ([]float64, error) {
	if err := checkClients(clients, false); err != nil {
		return nil, err
	}
	if err := checkGaussian(previous, "previous global", false); err != nil {
		return nil, err
	}
	d := make([]float64, len(clients))
	for k, c := range clients {
		d[k] = KL(previous, c)
	}
	return weightsFromDivergences(d, "KL divergence from the previous global")
}
