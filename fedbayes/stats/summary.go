package stats

import (
	"fmt"
	"math"
)

// Summary is a metric summarised over seeds.
type Summary struct {
	// Mean is the sample mean.
	Mean float64
	// SE is the standard error of the mean, s/sqrt(n) with s the sample standard deviation (n-1
	// denominator); NaN when n = 1, where it is undefined.
	SE float64
	// N is the number of values (seeds).
	N int
}

// Summarize returns the mean and standard error of values (see Summary). A non-finite value makes
// the mean non-finite, as it should: a diverged seed is not averaged away.
func Summarize(values []float64) (Summary, error) {
	n := len(values)
	if n == 0 {
		return Summary{}, fmt.Errorf("stats: summary of no values")
	}
	var sum float64
	for _, v := range values {
		sum += v
	}
	mean := sum / float64(n)
	if n == 1 {
		return Summary{Mean: mean, SE: math.NaN(), N: 1}, nil
	}
	var ss float64 // two passes: stable for values far from zero
	for _, v := range values {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	return Summary{Mean: mean, SE: sd / math.Sqrt(float64(n)), N: n}, nil
}
