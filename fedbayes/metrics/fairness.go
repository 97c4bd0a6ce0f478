package metrics

import (
	"fmt"
	"math"
	"sort"
)

// WorstFraction is the share of clients whose mean accuracy FairnessResult.Worst reports: the
// "worst 10%" of Jamoussi et al. (BA-BFL), Sec. "Metrics".
const WorstFraction = 0.10

// FairnessResult summarises how evenly a global model serves the clients (Jamoussi et al. (BA-BFL),
// Sec. "Metrics": utilitarian and egalitarian views of fairness). Accuracies are fractions.
type FairnessResult struct {
	// Clients is the number of clients.
	Clients int
	// WeightedAverage is Acc_avg = sum_k w_k Acc_k with the weights normalised to sum to one
	// (Jamoussi et al., the Acc_avg formula; they use w_k = |D_k| / |D|).
	WeightedAverage float64
	// Worst is the mean accuracy of the ceil(WorstFraction x K) clients with the lowest accuracy
	// (at least one client).
	Worst float64
	// WorstClients is the number of clients averaged in Worst.
	WorstClients int
	// WorstPercentile is the other reading of "worst 10%": the WorstFraction quantile of the client
	// accuracies, interpolated linearly between order statistics (position WorstFraction x (K - 1) in
	// the sorted accuracies, numpy's default).
	WorstPercentile float64
	// Min and Max are the lowest and highest client accuracy; Spread is Max - Min.
	Min, Max, Spread float64
	// Std is the (population, unweighted) standard deviation of the client accuracies.
	Std float64
}

// FairnessFromAccuracies computes the fairness summary of per-client accuracies (fractions in
// [0, 1]) with client weights (non-negative, not all zero; nil means equal weights).
func FairnessFromAccuracies(accuracies, weights []float64) (FairnessResult, error) {
	k := len(accuracies)
	if k == 0 {
		return FairnessResult{}, fmt.Errorf("metrics: fairness: no clients")
	}
	for i, a := range accuracies {
		if !(a >= 0 && a <= 1) {
			return FairnessResult{}, fmt.Errorf("metrics: fairness: accuracy of client %d is %v, want a fraction in [0, 1]", i, a)
		}
	}
	if weights == nil {
		weights = make([]float64, k)
		for i := range weights {
			weights[i] = 1
		}
	}
	if len(weights) != k {
		return FairnessResult{}, fmt.Errorf("metrics: fairness: %d weights for %d clients", len(weights), k)
	}
	var wsum float64
	for i, w := range weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return FairnessResult{}, fmt.Errorf("metrics: fairness: weight of client %d is %v, want a finite value >= 0", i, w)
		}
		wsum += w
	}
	if wsum == 0 {
		return FairnessResult{}, fmt.Errorf("metrics: fairness: all client weights are zero")
	}
	r := FairnessResult{Clients: k}
	var mean float64
	for i, a := range accuracies {
		r.WeightedAverage += weights[i] / wsum * a
		mean += a
	}
	mean /= float64(k)
	var ss float64
	for _, a := range accuracies {
		ss += (a - mean) * (a - mean)
	}
	r.Std = math.Sqrt(ss / float64(k))
	sorted := append([]float64(nil), accuracies...)
	sort.Float64s(sorted)
	r.Min, r.Max = sorted[0], sorted[k-1]
	r.Spread = r.Max - r.Min
	r.WorstClients = max(1, int(math.Ceil(WorstFraction*float64(k)-1e-9)))
	var worst float64
	for _, a := range sorted[:r.WorstClients] {
		worst += a
	}
	r.Worst = worst / float64(r.WorstClients)
	pos := WorstFraction * float64(k-1)
	lo := int(math.Floor(pos))
	r.WorstPercentile = sorted[lo]
	if lo+1 < k {
		r.WorstPercentile += (pos - float64(lo)) * (sorted[lo+1] - sorted[lo])
	}
	return r, nil
}

// Fairness accumulates per-client correct/total counts over batches (each client's test data
// evaluated by the global model), for FairnessResult.
type Fairness struct {
	correct, total []int
}

// NewFairness returns an empty accumulator for numClients >= 1 clients.
func NewFairness(numClients int) (*Fairness, error) {
	if numClients < 1 {
		return nil, fmt.Errorf("metrics: fairness: need at least 1 client, got %d", numClients)
	}
	return &Fairness{correct: make([]int, numClients), total: make([]int, numClients)}, nil
}

// Add records that, of total examples of client, correct were classified correctly.
func (a *Fairness) Add(client, correct, total int) error {
	if client < 0 || client >= len(a.total) {
		return fmt.Errorf("metrics: fairness: client %d out of range [0, %d)", client, len(a.total))
	}
	if total < 0 || correct < 0 || correct > total {
		return fmt.Errorf("metrics: fairness: client %d: %d correct out of %d is impossible", client, correct, total)
	}
	a.correct[client] += correct
	a.total[client] += total
	return nil
}

// AddPredictions records a batch of one client's predicted and true labels.
func (a *Fairness) AddPredictions(client int, predicted, labels []int32) error {
	if len(predicted) != len(labels) {
		return fmt.Errorf("metrics: fairness: client %d: %d predictions for %d labels", client, len(predicted), len(labels))
	}
	hits := 0
	for i := range labels {
		if predicted[i] == labels[i] {
			hits++
		}
	}
	return a.Add(client, hits, len(labels))
}

// Accuracies returns each client's accuracy so far; it is an error if a client has no examples.
func (a *Fairness) Accuracies() ([]float64, error) {
	acc := make([]float64, len(a.total))
	for k, t := range a.total {
		if t == 0 {
			return nil, fmt.Errorf("metrics: fairness: client %d has no evaluated examples", k)
		}
		acc[k] = float64(a.correct[k]) / float64(t)
	}
	return acc, nil
}

// Result returns the fairness summary with the given client weights (for example the training
// sizes |D_k| of a partition, as Jamoussi et al. do; nil means equal weights).
func (a *Fairness) Result(weights []float64) (FairnessResult, error) {
	acc, err := a.Accuracies()
	if err != nil {
		return FairnessResult{}, err
	}
	return FairnessFromAccuracies(acc, weights)
}
