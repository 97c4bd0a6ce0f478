package predictive

import (
	"fmt"
	"math"
)

// ProbFloor is the smallest probability the classification aggregators take the logarithm of: a
// client probability (or prior probability) below it is raised to it, so that a class one client
// rules out exactly does not make every product -Inf or a prior division infinite. It is the floor
// of metrics.ProbFloor.
const ProbFloor = 1e-12

// SumTolerance is how far from one a row of client or prior probabilities may sum.
const SumTolerance = 1e-3

// ClassAggregate holds K clients' predictive distributions p(y|x, D_k) over C classes on N examples
// in the log form the aggregators need: the log of the normalised product of experts (the BCM) and
// the log of the mixture, per example and class. Build it once with NewClassAggregate and read the
// product, the mixture and any beta-PredBayes interpolation from it.
type ClassAggregate struct {
	// Examples (N) and Classes (C).
	Examples, Classes int
	// Clients is K.
	Clients int
	// Weights are the normalised mixture weights |D_k| / |D| of Eq. 4.5.
	Weights []float64
	// logProd and logMix are [N][C] normalised log-probabilities.
	logProd, logMix []float64
}

// NewClassAggregate combines K client predictive distributions.
//
// clients[k] holds client k's class probabilities, row-major [N, C] (for example
// models.Prediction.ClientMean, the Monte Carlo average over its posterior samples, Hasan (2023),
// Alg. 1, step 3). weights are the mixture weights (nil: equal; normally the client train sizes,
// which are normalised here). prior is the prior predictive p(y|x) of the BCM correction: nil for
// the uniform distribution, C values for one distribution shared by every example, or N*C values
// (for example PriorPredictive's estimate from prior samples).
//
// The product is Hasan (2023), Eq. 3.3 (Eq. 3.1 per class):
//
//	p(y=c|x, D) ∝ p(y=c|x)^(1-K) prod_k p(y=c|x, D_k),
//
// computed as a sum of logs and normalised with a log-sum-exp; the mixture is Eq. 4.5,
// sum_k w_k p(y|x, D_k).
func NewClassAggregate(clients [][]float32, weights []float64, prior []float32, numClasses int) (*ClassAggregate, error) {
	K := len(clients)
	if K == 0 {
		return nil, fmt.Errorf("predictive: no client predictions")
	}
	if numClasses < 2 {
		return nil, fmt.Errorf("predictive: numClasses = %d, want at least 2", numClasses)
	}
	C := numClasses
	if len(clients[0]) == 0 || len(clients[0])%C != 0 {
		return nil, fmt.Errorf("predictive: client 0 has %d probabilities, not a positive multiple of %d classes", len(clients[0]), C)
	}
	N := len(clients[0]) / C
	for k, p := range clients {
		if len(p) != N*C {
			return nil, fmt.Errorf("predictive: client %d has %d probabilities, want %d (%d examples x %d classes, as client 0)", k, len(p), N*C, N, C)
		}
		if err := checkRows(p, C, fmt.Sprintf("client %d", k)); err != nil {
			return nil, err
		}
	}
	w, err := normalizeWeights(weights, K)
	if err != nil {
		return nil, err
	}
	var priorRow func(n int) []float32
	switch len(prior) {
	case 0:
		priorRow = nil
	case C:
		if err := checkRows(prior, C, "prior"); err != nil {
			return nil, err
		}
		priorRow = func(int) []float32 { return prior }
	case N * C:
		if err := checkRows(prior, C, "prior"); err != nil {
			return nil, err
		}
		priorRow = func(n int) []float32 { return prior[n*C : (n+1)*C] }
	default:
		return nil, fmt.Errorf("predictive: prior has %d probabilities, want 0 (uniform), %d (one row) or %d (%d examples x %d classes)",
			len(prior), C, N*C, N, C)
	}
	a := &ClassAggregate{Examples: N, Classes: C, Clients: K, Weights: w,
		logProd: make([]float64, N*C), logMix: make([]float64, N*C)}
	for n := 0; n < N; n++ {
		lp := a.logProd[n*C : (n+1)*C]
		lm := a.logMix[n*C : (n+1)*C]
		for c := 0; c < C; c++ {
			var sumLog, mix float64
			for k := 0; k < K; k++ {
				p := float64(clients[k][n*C+c])
				sumLog += math.Log(max(p, ProbFloor))
				mix += w[k] * p
			}
			if priorRow != nil {
				sumLog -= float64(K-1) * math.Log(max(float64(priorRow(n)[c]), ProbFloor))
			}
			lp[c] = sumLog
			lm[c] = math.Log(max(mix, ProbFloor))
		}
		normalizeLog(lp)
		normalizeLog(lm)
	}
	return a, nil
}

// Product returns the BCM / product-of-experts predictive (Hasan (2023), Eq. 3.3), [N, C].
func (a *ClassAggregate) Product() []float32 { return a.Beta(1) }

// Mixture returns the mixture predictive (Hasan (2023), Eq. 4.5), [N, C].
func (a *ClassAggregate) Mixture() []float32 { return a.Beta(0) }

// Beta returns the beta-PredBayes predictive (Hasan (2023), Eq. 4.8), [N, C]:
//
//	p_beta(y|x) ∝ p_prod(y|x)^beta p_mix(y|x)^(1-beta),
//
// the product at beta = 1 and the mixture at beta = 0. The normalising constant of the product
// cancels, so the normalised product is used. Any finite beta is accepted (the interpolation is
// defined for extrapolation too); FitBeta searches [0, 1] by default.
func (a *ClassAggregate) Beta(beta float64) []float32 {
	C := a.Classes
	out := make([]float32, a.Examples*C)
	row := make([]float64, C)
	for n := 0; n < a.Examples; n++ {
		a.betaRow(n, beta, row)
		for c, v := range row {
			out[n*C+c] = float32(math.Exp(v))
		}
	}
	return out
}

// LogBeta returns the log-probabilities of the beta-PredBayes predictive, [N, C], in float64.
func (a *ClassAggregate) LogBeta(beta float64) []float64 {
	C := a.Classes
	out := make([]float64, a.Examples*C)
	for n := 0; n < a.Examples; n++ {
		a.betaRow(n, beta, out[n*C:(n+1)*C])
	}
	return out
}

// betaRow writes the normalised log p_beta of example n into row.
func (a *ClassAggregate) betaRow(n int, beta float64, row []float64) {
	C := a.Classes
	lp := a.logProd[n*C : (n+1)*C]
	lm := a.logMix[n*C : (n+1)*C]
	for c := range row {
		switch beta {
		case 1:
			row[c] = lp[c]
		case 0:
			row[c] = lm[c]
		default:
			row[c] = beta*lp[c] + (1-beta)*lm[c]
		}
	}
	normalizeLog(row)
}

// NLL returns the mean negative log-likelihood of labels under the beta-PredBayes predictive: the
// objective of Hasan (2023), Eq. 4.11 (divided by N).
func (a *ClassAggregate) NLL(beta float64, labels []int32) (float64, error) {
	if len(labels) != a.Examples {
		return 0, fmt.Errorf("predictive: %d labels for %d examples", len(labels), a.Examples)
	}
	if math.IsNaN(beta) || math.IsInf(beta, 0) {
		return 0, fmt.Errorf("predictive: beta = %v is not finite", beta)
	}
	row := make([]float64, a.Classes)
	var sum float64
	for n, y := range labels {
		if y < 0 || int(y) >= a.Classes {
			return 0, fmt.Errorf("predictive: label %d of example %d is outside [0, %d)", y, n, a.Classes)
		}
		a.betaRow(n, beta, row)
		sum -= row[y]
	}
	return sum / float64(len(labels)), nil
}

// normalizeLog subtracts log-sum-exp from the log-weights in row, in place.
func normalizeLog(row []float64) {
	m := math.Inf(-1)
	for _, v := range row {
		m = max(m, v)
	}
	var s float64
	for _, v := range row {
		s += math.Exp(v - m)
	}
	lse := m + math.Log(s)
	for i := range row {
		row[i] -= lse
	}
}

// checkRows checks that p holds finite non-negative rows of c probabilities summing to one.
func checkRows(p []float32, c int, what string) error {
	for n := 0; n*c < len(p); n++ {
		var s float64
		for j, v := range p[n*c : (n+1)*c] {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || v < 0 {
				return fmt.Errorf("predictive: %s, example %d, class %d: probability %v is not finite and non-negative", what, n, j, v)
			}
			s += float64(v)
		}
		if math.Abs(s-1) > SumTolerance {
			return fmt.Errorf("predictive: %s, example %d: probabilities sum to %v, not 1", what, n, s)
		}
	}
	return nil
}

// normalizeWeights returns K equal weights for nil, or w divided by its sum.
func normalizeWeights(w []float64, K int) ([]float64, error) {
	out := make([]float64, K)
	if w == nil {
		for k := range out {
			out[k] = 1 / float64(K)
		}
		return out, nil
	}
	if len(w) != K {
		return nil, fmt.Errorf("predictive: %d weights for %d clients", len(w), K)
	}
	var s float64
	for k, v := range w {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("predictive: weight of client %d is %v; want finite and non-negative", k, v)
		}
		s += v
	}
	if s <= 0 {
		return nil, fmt.Errorf("predictive: client weights sum to %v; want a positive sum", s)
	}
	for k, v := range w {
		out[k] = v / s
	}
	return out, nil
}
