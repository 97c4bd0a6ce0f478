package results

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Standard metric names for Row.Metrics. The engine may record others; Metrics declares each
// standard one (which way is better, its possible values, its title).
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
	// by more than 0.1 (metrics.DefaultMovedThreshold, the threshold of report.HealthThreshold).
	VarMoved = "var_moved"
	// VarShift is the mean |log sigma^2 - initial log sigma^2| over the global model's variances.
	VarShift = "var_shift"
	// VarClamped is the share of the global model's log-variances at or beyond a bound of the model's
	// clamp range of log sigma^2 (within metrics.ClampTolerance), where training passes no gradient.
	VarClamped = "var_clamped"
	// VarLocalMoved is the share of the round's clients' log-variances that their local training
	// moved by more than the same threshold from the global model they received: whether the data move
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

// Range is the interval of values a metric can take.
type Range struct {
	Lo, Hi float64
	// PosInf allows +Inf (a model that gives a test label probability zero has an infinite NLL).
	PosInf bool
}

// The ranges of the standard metrics: fractions lie in [0, 1], the multi-class Brier score in
// [0, 2]; NLL and the training loss have no lower bound (a Gaussian likelihood's density can exceed
// one); MSE, the spread and the mean shifts of the log-variances are non-negative.
var (
	fraction    = &Range{0, 1, false}
	nonNegative = &Range{0, math.Inf(1), false}
	// nonNegativeOrInf is a non-negative value that may be +Inf (an error, a classification NLL).
	nonNegativeOrInf = &Range{0, math.Inf(1), true}
	anyValue         = &Range{math.Inf(-1), math.Inf(1), true}
)

// Metric declares a standard metric of Row.Metrics: everything the store, the reports, the figures
// and the progress lines know about it.
type Metric struct {
	// Name is the key in Row.Metrics.
	Name string
	// Better says which way is better, for bolding a table's best cells (report.ParseColumn).
	Better Direction
	// Range is the interval of its possible values, which Row.CheckValues enforces; nil: not checked.
	Range *Range
	// Title names it on a figure's axis (Label); "" for a metric without a figure.
	Title string
	// Unit is the unit a label adds in parentheses ("nats"); "" for a fraction or a pure number.
	Unit string
	// Export is its place (1, 2, ...) among the metric columns of an export (report.NewTidy); 0: it
	// follows those, with the other metrics, sorted by name.
	Export int
	// Line is its place (1, 2, ...) in a progress line (package progress); 0: not shown there.
	Line int
}

// Label is the metric's axis label: Title and, where it has one, the unit in parentheses; the name
// for a metric without a title.
func (m Metric) Label() string {
	title := m.Title
	if title == "" {
		title = m.Name
	}
	if m.Unit != "" {
		return title + " (" + m.Unit + ")"
	}
	return title
}

// Metrics declares the standard metrics: the global model's test metrics, the clients' fairness and
// distribution metrics (client_accuracy_min ... client_ece_max: the order statistics of the scored
// clients' accuracies, NLLs and ECEs), the posterior-health metrics and the costs. A metric the
// engine records that is not listed here is not checked, and a table needs its direction spelt out.
var Metrics = append([]Metric{
	{Name: Accuracy, Better: HigherIsBetter, Range: fraction, Title: "test accuracy", Export: 1, Line: 1},
	{Name: NLL, Better: LowerIsBetter, Range: anyValue, Title: "test NLL", Unit: "nats", Export: 2, Line: 3},
	{Name: ECE, Better: LowerIsBetter, Range: fraction, Title: "test ECE", Export: 3, Line: 4},
	{Name: Brier, Better: LowerIsBetter, Range: &Range{0, 2, false}, Export: 4},
	{Name: MSE, Better: LowerIsBetter, Range: nonNegativeOrInf, Export: 5, Line: 2},
	{Name: Spread, Better: NoDirection, Range: nonNegative, Title: "learned spread ‖σ‖₂", Export: 6},
	{Name: WeightedAccuracy, Better: HigherIsBetter, Range: fraction, Title: "weighted client accuracy", Export: 7},
	{Name: WorstAccuracy, Better: HigherIsBetter, Range: fraction, Export: 8},
	{Name: Loss, Better: LowerIsBetter, Range: anyValue, Export: 9, Line: 5},
	{Name: "rmse", Better: LowerIsBetter, Range: nonNegativeOrInf},
	{Name: "mae", Better: LowerIsBetter, Range: nonNegativeOrInf},
	{Name: "calibration_error", Better: LowerIsBetter, Range: fraction},
	{Name: "time_per_round", Better: LowerIsBetter},
	{Name: "bytes_sent", Better: LowerIsBetter},
	{Name: SpreadStart, Range: nonNegative},
	{Name: VarMoved, Range: fraction, Title: "share of variances moved"},
	{Name: VarShift, Range: nonNegative},
	{Name: VarClamped, Range: fraction},
	{Name: VarLocalMoved, Range: fraction},
	{Name: VarLocalShift, Range: nonNegative},
	{Name: VarDisagreement, Range: nonNegative, Title: "clients' sd of log σ²"},
}, clientMetrics()...)

// clientMetrics declares the per-client distribution metrics: accuracies and ECEs are fractions, a
// classification NLL is non-negative and may be +Inf.
func clientMetrics() []Metric {
	var ms []Metric
	for _, stat := range []string{"min", "p10", "median", "p90", "max"} {
		ms = append(ms,
			Metric{Name: "client_accuracy_" + stat, Better: HigherIsBetter, Range: fraction},
			Metric{Name: "client_ece_" + stat, Better: LowerIsBetter, Range: fraction},
			Metric{Name: "client_nll_" + stat, Better: LowerIsBetter, Range: nonNegativeOrInf})
	}
	return ms
}

// metricIndex maps a standard metric's name to its declaration in Metrics.
var metricIndex = func() map[string]int {
	idx := make(map[string]int, len(Metrics))
	for i, m := range Metrics {
		idx[m.Name] = i
	}
	return idx
}()

// MetricOf returns the declaration of a metric: its entry in Metrics, or, for a metric Metrics does
// not list, just its name (no direction, no range, its name as label; Standard is false).
func MetricOf(name string) Metric {
	if i, ok := metricIndex[name]; ok {
		return Metrics[i]
	}
	return Metric{Name: name}
}

// Standard reports whether Metrics declares the metric, so that its direction, range and title are
// known.
func (m Metric) Standard() bool {
	_, ok := metricIndex[m.Name]
	return ok
}

// RankedMetrics returns the names of the metrics of Metrics with a positive rank (Metric.Export or
// Metric.Line), in increasing rank.
func RankedMetrics(rank func(Metric) int) []string {
	var ms []Metric
	for _, m := range Metrics {
		if rank(m) > 0 {
			ms = append(ms, m)
		}
	}
	slices.SortStableFunc(ms, func(a, b Metric) int { return rank(a) - rank(b) })
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return names
}
