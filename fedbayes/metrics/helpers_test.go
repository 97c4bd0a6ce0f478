package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

// near reports whether got is within tol of want (absolute).
func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// randomProbs returns n rows of c softmax probabilities (float32) with a fixed seed; sharp > 0
// scales the logits so that some rows are confident.
func randomProbs(rng *rand.Rand, n, c int, sharp float64) []float32 {
	out := make([]float32, n*c)
	row := make([]float64, c)
	for i := range n {
		var mx float64 = math.Inf(-1)
		for k := range c {
			row[k] = sharp * rng.NormFloat64()
			mx = math.Max(mx, row[k])
		}
		var s float64
		for k := range c {
			row[k] = math.Exp(row[k] - mx)
			s += row[k]
		}
		for k := range c {
			out[i*c+k] = float32(row[k] / s)
		}
	}
	return out
}

// randomLabels returns n labels in [0, c).
func randomLabels(rng *rand.Rand, n, c int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(rng.IntN(c))
	}
	return out
}

// mustNoErr fails the test on err.
func mustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
