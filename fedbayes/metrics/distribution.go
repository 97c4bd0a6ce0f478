package metrics

import (
	"fmt"
	"math"
	"slices"
)

// Distribution summarises per-client values of a metric (each client's accuracy, NLL or ECE of
// the global model on its own data) by five order statistics, so that what personalisation work
// reads from the per-client values (how the worst and the typical client fare, Jamoussi et al.
// (BA-BFL), "Metrics") has a fixed size whatever the number of clients.
type Distribution struct {
	// Clients is the number of values.
	Clients int
	// Min and Max are the extremes; P10, Median and P90 the 0.1, 0.5 and 0.9 quantiles (Quantile).
	Min, P10, Median, P90, Max float64
}

// DistributionOf returns the Distribution of values (at least one, none NaN; +Inf is allowed: an
// infinite NLL).
func DistributionOf(values []float64) (Distribution, error) {
	if len(values) == 0 {
		return Distribution{}, fmt.Errorf("metrics: distribution: no values")
	}
	for i, v := range values {
		if math.IsNaN(v) {
			return Distribution{}, fmt.Errorf("metrics: distribution: value %d is NaN", i)
		}
	}
	s := slices.Clone(values)
	slices.Sort(s)
	return Distribution{Clients: len(s), Min: s[0], P10: Quantile(s, 0.1), Median: Quantile(s, 0.5), P90: Quantile(s, 0.9), Max: s[len(s)-1]}, nil
}

// Quantile is the q quantile (q in [0, 1]) of sorted (increasing, not empty), interpolated linearly
// between the order statistics around position q (n - 1): numpy's default ("linear", type 7 of
// Hyndman and Fan (1996), "Sample quantiles in statistical packages"). Equal neighbours give their
// value, so an infinite one is not turned into NaN.
func Quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	a, b := sorted[lo], sorted[lo+1]
	frac := pos - float64(lo)
	if a == b || frac == 0 {
		return a
	}
	return a + frac*(b-a)
}
