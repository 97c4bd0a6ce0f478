package partition

import (
	"math"
	"math/rand/v2"
)

// logGamma draws log X for X ~ Gamma(shape a > 0, scale 1). Marsaglia and Tsang (2000), "A simple
// method for generating gamma variables", for a >= 1; for a < 1 it uses their boost
// X = Gamma(a+1) * U^(1/a), kept in log space so that tiny shapes (alpha = 1e-3) do not underflow.
func logGamma(rng *rand.Rand, a float64) float64 {
	if a < 1 {
		u := 1 - rng.Float64() // (0, 1]
		return logGamma(rng, a+1) + math.Log(u)/a
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return math.Log(d * v)
		}
	}
}

// dirichlet fills p with a draw from the symmetric Dirichlet(alpha, ..., alpha) of len(p)
// components, as normalised Gamma(alpha) variates (computed from their logarithms, so that p sums to
// one even when every variate would underflow in linear space).
func dirichlet(rng *rand.Rand, alpha float64, p []float64) {
	mx := math.Inf(-1)
	for i := range p {
		p[i] = logGamma(rng, alpha)
		mx = math.Max(mx, p[i])
	}
	var s float64
	for i := range p {
		p[i] = math.Exp(p[i] - mx)
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
}
