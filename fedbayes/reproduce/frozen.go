package reproduce

import (
	"fmt"
	"math"
)

// FrozenSpread describes a BFL-P run (Ozer et al. (2022)'s public code; models.CompatBFLP) for the
// frozen-variance prediction of the learned spread of Table 4. Under BFL-P's clamp every
// log-variance starts at -9, below the floor of -8, so it gets no gradient: only the weight decay
// moves it, and the aggregation rule alone sets the final spread.
type FrozenSpread struct {
	// Weights is the number of Gaussian weights (BFL-P's three VBLinear layers: 41,640 on 28x28
	// inputs, 58,920 on 32x32).
	Weights int
	// ClientSizes are the examples of every client.
	ClientSizes []int
	// Active is the number of clients per round (0: all).
	Active int
	// SizeWeights says the rule weighs clients by size (FVBWA); otherwise equally (FVBA).
	SizeWeights bool
	// Rounds, Epochs and BatchSize give each client's SGD steps: Epochs x ceil(n_k / BatchSize) a round.
	Rounds, Epochs, BatchSize int
	// LearningRate, Momentum and WeightDecay are the SGD settings (momentum restarts every round, as
	// BFL-P builds a new optimizer per round).
	LearningRate, Momentum, WeightDecay float64
	// InitLogVar is the initial log-variance (BFL-P: -9).
	InitLogVar float64
}

// Frozen-variance predictions of the spread sqrt(sum_i sigma_i^2) (Ozer et al. (2022), Sec. 5).
type FrozenPrediction struct {
	// AALV: the raw log-variances, averaged unclamped, decay as theta <- theta * g each round, with g
	// the clients' weighted mean of the SGD-with-momentum factor of weight decay alone.
	AALV float64
	// GAAFloor: the clients return log-variances at or below the floor (their values are clamped to
	// -8), and BFL-P's clamped partial sums give v (1 + c), v = e^-8, c = E[sum_{k>=2} beta_k^2].
	GAAFloor float64
	// GAAHeld: the clients return the global they received (variances barely move in a round): the
	// fixed point v / (1 - c) of s = v + c s.
	GAAHeld float64
	// EAAHeld: EAA when the clients return the global they received: BFL-P's clamped partial sums
	// give s <- v + q s each round (q = 1 - E[beta_first] = 1 - 1/a), from s = v, so after T rounds
	// v (1 - q^(T+1)) / (1 - q), at most v a. Table 4's EAA is far above it: EAA's variances are learned.
	EAAHeld float64
	// C is c above, the expected sum of the squared weights of every client but the first of the
	// partial sums (BFL-P's order is its random selection order, so the first is any client).
	C float64
}

// decayFactor is theta_S / theta_0 after S steps of SGD with momentum on a parameter whose only
// gradient is the weight decay wd * theta, starting with an empty momentum buffer (PyTorch's rule:
// buf = rho buf + wd theta; theta -= lr buf).
func decayFactor(steps int, lr, rho, wd float64) float64 {
	theta, buf := 1.0, 0.0
	for range steps {
		buf = rho*buf + wd*theta
		theta -= lr * buf
	}
	return theta
}

// Predict computes the frozen-variance spreads of AALV, GAA and EAA (CF's depends on the round's
// weights, cfHeldSpread).
func (f FrozenSpread) Predict() (FrozenPrediction, error) {
	C := len(f.ClientSizes)
	switch {
	case f.Weights < 1:
		return FrozenPrediction{}, fmt.Errorf("reproduce: frozen spread: %d Gaussian weights", f.Weights)
	case C < 1:
		return FrozenPrediction{}, fmt.Errorf("reproduce: frozen spread: no clients")
	case f.Rounds < 1 || f.Epochs < 1 || f.BatchSize < 1:
		return FrozenPrediction{}, fmt.Errorf("reproduce: frozen spread: rounds %d, epochs %d, batch %d must be positive", f.Rounds, f.Epochs, f.BatchSize)
	case f.Active < 0 || f.Active > C:
		return FrozenPrediction{}, fmt.Errorf("reproduce: frozen spread: %d active of %d clients", f.Active, C)
	}
	a := f.Active
	if a == 0 {
		a = C
	}
	// Per round, theta_global <- theta_global * g with g = sum_k beta_k decay(S_k) over the active
	// clients; with a random active set its expectation is the mean over all clients, weighted by size
	// for FVBWA.
	var g, wsum, n1, n2 float64
	for _, n := range f.ClientSizes {
		if n < 1 {
			return FrozenPrediction{}, fmt.Errorf("reproduce: frozen spread: a client has %d examples", n)
		}
		steps := f.Epochs * ((n + f.BatchSize - 1) / f.BatchSize)
		w := 1.0
		if f.SizeWeights {
			w = float64(n)
		}
		g += w * decayFactor(steps, f.LearningRate, f.Momentum, f.WeightDecay)
		wsum += w
		n1 += float64(n)
		n2 += float64(n) * float64(n)
	}
	g /= wsum
	theta := f.InitLogVar * math.Pow(g, float64(f.Rounds))
	nw := float64(f.Weights)
	p := FrozenPrediction{AALV: math.Sqrt(nw * math.Exp(theta))}
	// E[sum_{k in S} beta_k^2] over an active set S of a clients: 1/a (equal weights), or about
	// (1/a) E[n^2] / E[n]^2 (size weights); the first client of the partial sums drops 1/a of it.
	sumSq := 1 / float64(a)
	if f.SizeWeights {
		mean := n1 / float64(C)
		sumSq = n2 / float64(C) / (mean * mean) / float64(a)
	}
	p.C = (1 - 1/float64(a)) * sumSq
	v := math.Exp(-8)
	p.GAAFloor = math.Sqrt(nw * v * (1 + p.C))
	p.GAAHeld = math.Sqrt(nw * v / (1 - p.C))
	q := 1 - 1/float64(a)
	p.EAAHeld = math.Sqrt(nw * v * (1 - math.Pow(q, float64(f.Rounds+1))) / (1 - q))
	return p, nil
}

// cfHeldSpread is CF's frozen-variance spread over weights Gaussian weights when every client's log σ²
// lies under BFL-P's clamp at −8 (Ozer et al. (2022), Eq. 8 as BFL-P's code applies it): BFL-P's CF
// reads the clamped variances, σ²_CF = w_max / Σ_k (w_k / e⁻⁸) = w_max e⁻⁸ per weight with w_k the
// round's aggregation weights normalised to sum to 1, so the spread is √(weights · e⁻⁸ · w_max) with
// w_max = max_k w_k / Σ_k w_k. clientWeights are the round's recorded weights (results.Row.ClientWeights).
func cfHeldSpread(weights int, clientWeights []float64) (float64, error) {
	if weights < 1 {
		return 0, fmt.Errorf("reproduce: CF frozen spread: %d Gaussian weights", weights)
	}
	if len(clientWeights) == 0 {
		return 0, fmt.Errorf("reproduce: CF frozen spread: no client weights")
	}
	var sum, wmax float64
	for _, w := range clientWeights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return 0, fmt.Errorf("reproduce: CF frozen spread: client weight %v is not a finite non-negative number", w)
		}
		sum += w
		wmax = math.Max(wmax, w)
	}
	if sum == 0 {
		return 0, fmt.Errorf("reproduce: CF frozen spread: the client weights sum to 0")
	}
	return math.Sqrt(float64(weights) * math.Exp(bflpFloorLogVar) * wmax / sum), nil
}
