package metrics

import (
	"fmt"
	"math"
)

// DefaultTolerance is the largest accepted |sum_c p_c - 1| for one example's class probabilities.
// It leaves room for float32 softmax rounding while catching unnormalised scores or logits.
const DefaultTolerance = 1e-3

// DefaultBins is the default number of equal-width confidence bins for ECE and the reliability
// diagram (15, as in Guo et al. (2017), "On calibration of modern neural networks", the ECE
// reference cited by Hasan (2023), Eq. 2.15).
const DefaultBins = 15

// ProbFloor is the smallest probability used inside a logarithm (NLL, entropy terms use 0 log 0 = 0
// instead). A true-class probability of exactly zero therefore costs -log(1e-12) ~ 27.6 nats rather
// than +Inf, so that one saturated example cannot turn a whole table entry into Inf.
const ProbFloor = 1e-12

// Percent converts a fraction (as returned by this package) to percent.
func Percent(fraction float64) float64 { return 100 * fraction }

// checkTolerance validates a user-given probability-sum tolerance.
func checkTolerance(what string, tol float64) error {
	if !(tol > 0) || math.IsInf(tol, 0) {
		return fmt.Errorf("metrics: %s: tolerance must be a positive finite number, got %v", what, tol)
	}
	return nil
}

// checkProbRow validates one example's class probabilities: finite, non-negative, summing to one
// within tol. where describes the example for the error message.
func checkProbRow(row []float32, tol float64, where func() string) error {
	var sum float64
	for c, p := range row {
		v := float64(p)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("metrics: %s: probability of class %d is %v", where(), c, p)
		}
		if v < 0 {
			return fmt.Errorf("metrics: %s: probability of class %d is negative (%v)", where(), c, p)
		}
		sum += v
	}
	if math.Abs(sum-1) > tol {
		return fmt.Errorf("metrics: %s: class probabilities sum to %.6g, want 1 within %g "+
			"(pass softmax probabilities, not logits)", where(), sum, tol)
	}
	return nil
}

// checkLabel validates one label against the number of classes.
func checkLabel(label int32, numClasses int, where func() string) error {
	if label < 0 || int(label) >= numClasses {
		return fmt.Errorf("metrics: %s: label %d out of range [0, %d)", where(), label, numClasses)
	}
	return nil
}

// exampleWhere builds the lazily-formatted location of an example for error messages.
func exampleWhere(acc string, batch, offset, i int) func() string {
	return func() string {
		return fmt.Sprintf("%s: batch %d, example %d (example %d overall)", acc, batch, i, offset+i)
	}
}

// argmax returns the index of the largest value, the first one on ties.
func argmax(row []float64) int {
	best := 0
	for c := 1; c < len(row); c++ {
		if row[c] > row[best] {
			best = c
		}
	}
	return best
}

// logFloor is log(max(p, ProbFloor)).
func logFloor(p float64) float64 {
	if p < ProbFloor {
		p = ProbFloor
	}
	return math.Log(p)
}

// xlogx is p*log(p) with 0 log 0 = 0.
func xlogx(p float64) float64 {
	if p <= 0 {
		return 0
	}
	return p * math.Log(p)
}
