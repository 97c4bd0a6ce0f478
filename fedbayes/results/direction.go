package results

import (
	"fmt"
	"strings"
)

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

// Column is one metric shown in a table, with the direction used for bolding.
type Column struct {
	// Metric is the name in Row.Metrics.
	Metric string
	// Direction says which way is better.
	Direction Direction
}

// ParseColumn reads "METRIC" (a standard metric, see DirectionOf) or "METRIC:DIRECTION" with
// DIRECTION one of higher, lower, none.
func ParseColumn(s string) (Column, error) {
	name, dir, hasDir := strings.Cut(strings.TrimSpace(s), ":")
	name = strings.TrimSpace(name)
	if name == "" {
		return Column{}, fmt.Errorf("results: empty metric name in %q", s)
	}
	if hasDir {
		d, err := ParseDirection(dir)
		if err != nil {
			return Column{}, fmt.Errorf("%w (metric %q)", err, name)
		}
		return Column{Metric: name, Direction: d}, nil
	}
	d, ok := DirectionOf(name)
	if !ok {
		return Column{}, fmt.Errorf("results: metric %q has no known direction; write %s:higher, %s:lower or %s:none", name, name, name, name)
	}
	return Column{Metric: name, Direction: d}, nil
}

// ParseColumns reads a comma-separated list of columns (see ParseColumn).
func ParseColumns(list string) ([]Column, error) {
	var cols []Column
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		c, err := ParseColumn(s)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("results: no metrics in %q", list)
	}
	return cols, nil
}
