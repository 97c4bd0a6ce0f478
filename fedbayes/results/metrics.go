package results

import (
	"fmt"
	"strings"
)

// Standard metric names for Row.Metrics. The engine may record others; DirectionOf knows which
// way each standard one is better.
const (
	// Accuracy is the test accuracy of the global model, a fraction.
	Accuracy = "accuracy"
	// NLL is the mean test negative log-likelihood in nats.
	NLL = "nll"
	// ECE is the expected calibration error, a fraction.
	ECE = "ece"
	// Brier is the mean multi-class Brier score.
	Brier = "brier"
	// Spread is the Euclidean norm of all standard deviations of the global posterior (Ozer et
	// al. (2022), Table 4).
	Spread = "spread"
	// WeightedAccuracy is the client-weighted mean of per-client accuracies (Jamoussi et al.,
	// BA-BFL, Acc_avg).
	WeightedAccuracy = "weighted_accuracy"
	// WorstAccuracy is the mean accuracy of the worst 10% of clients (Jamoussi et al., BA-BFL).
	WorstAccuracy = "worst_accuracy"
	// MSE is the test mean squared error of a regression model (Hasan (2023), Table 3.2).
	MSE = "mse"
	// Loss is the mean local training loss of the round.
	Loss = "loss"
)

// Posterior-health metrics of Row.Metrics, recorded by the engine in every row of a run whose global
// model has Gaussian weights (package metrics, Health; docs/metrics.md). A row holds all of them or
// none (Row.CheckValues), and holds them only beside Spread.
const (
	// SpreadStart is the learned spread (Spread) of the run's initial model, before any training.
	SpreadStart = "spread_start"
	// VarMoved is the share of the global model's log-variances that differ from their initial value
	// by more than HealthThreshold.
	VarMoved = "var_moved"
	// VarShift is the mean |log sigma^2 - initial log sigma^2| over the global model's variances.
	VarShift = "var_shift"
	// VarClamped is the share of the global model's log-variances at or beyond a bound of the model's
	// clamp range of log sigma^2 (within metrics.ClampTolerance), where training passes no gradient.
	VarClamped = "var_clamped"
	// VarLocalMoved is the share of the round's clients' log-variances that their local training
	// moved by more than HealthThreshold from the global model they received: whether the data move
	// the variances at all, whatever the aggregation rule does with them.
	VarLocalMoved = "var_local_moved"
	// VarLocalShift is the mean |Delta log sigma^2| of the round's local training over the same
	// values.
	VarLocalShift = "var_local_shift"
	// VarDisagreement is the mean, over the variance parameters, of the standard deviation across the
	// round's clients of their trained log sigma^2 (0 with one client): rules that combine variances
	// (EAA, GAA, AALV, CF) differ only where it is not zero.
	VarDisagreement = "var_disagreement"
)

// HealthMetrics are the posterior-health metrics, in the order tables and messages list them.
var HealthMetrics = []string{SpreadStart, VarMoved, VarShift, VarClamped, VarLocalMoved, VarLocalShift, VarDisagreement}

// Direction says which way a metric is better, for bolding the best cells of a table.
type Direction int

const (
	// NoDirection marks a metric with no better side (e.g. the learned spread); it is not bolded.
	NoDirection Direction = iota
	// HigherIsBetter: accuracy and its fairness variants.
	HigherIsBetter
	// LowerIsBetter: NLL, ECE, Brier score, MSE, loss, time.
	LowerIsBetter
)

// String returns "higher", "lower" or "none" (the words ParseDirection reads).
func (d Direction) String() string {
	switch d {
	case HigherIsBetter:
		return "higher"
	case LowerIsBetter:
		return "lower"
	}
	return "none"
}

// ParseDirection reads "higher" (or "max"), "lower" (or "min") and "none".
func ParseDirection(s string) (Direction, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "higher", "max":
		return HigherIsBetter, nil
	case "lower", "min":
		return LowerIsBetter, nil
	case "none":
		return NoDirection, nil
	}
	return NoDirection, fmt.Errorf("results: direction %q is not one of higher, lower, none", s)
}

// knownDirections are the directions of the standard metrics.
var knownDirections = map[string]Direction{
	Accuracy: HigherIsBetter, WeightedAccuracy: HigherIsBetter, WorstAccuracy: HigherIsBetter,
	NLL: LowerIsBetter, ECE: LowerIsBetter, Brier: LowerIsBetter, MSE: LowerIsBetter, Loss: LowerIsBetter,
	"rmse": LowerIsBetter, "mae": LowerIsBetter, "calibration_error": LowerIsBetter,
	"time_per_round": LowerIsBetter, "bytes_sent": LowerIsBetter,
	Spread: NoDirection,
}

// DirectionOf returns the direction of a standard metric; ok is false for a metric it does not
// know, whose direction must then be given explicitly (see ParseColumn).
func DirectionOf(metric string) (d Direction, ok bool) {
	d, ok = knownDirections[metric]
	return d, ok
}
