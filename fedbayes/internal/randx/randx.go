// Package randx holds the random variates fedbayes draws in more than one package (Gamma and
// Dirichlet), so that every package draws them the same way.
package randx

import (
	"math"
	"math/rand/v2"
)

// LogGamma draws log X for X ~ Gamma(shape a > 0, scale 1), by Marsaglia and Tsang (2000), "A simple
// method for generating gamma variables", for a >= 1; for a < 1 it uses their boost
// X = Gamma(a+1) * U^(1/a), kept in log space so that tiny shapes (a = 1e-3) do not underflow.
func LogGamma(rng *rand.Rand, a float64) float64 {
	if a < 1 {
		u := 1 - rng.Float64() // (0, 1]
		return LogGamma(rng, a+1) + math.Log(u)/a
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

// Gamma draws X ~ Gamma(shape a > 0, scale 1); it may underflow to 0 for very small a (use LogGamma).
func Gamma(rng *rand.Rand, a float64) float64 { return math.Exp(LogGamma(rng, a)) }

// Dirichlet fills p with a draw from Dirichlet(alpha[0], ..., alpha[len(p)-1]); a single alpha is
// used for every component (the symmetric Dirichlet). The variates are normalised from their
// logarithms, so p sums to one even when every Gamma variate would underflow in linear space.
func Dirichlet(rng *rand.Rand, p []float64, alpha ...float64) {
	mx := math.Inf(-1)
	for i := range p {
		a := alpha[0]
		if len(alpha) > 1 {
			a = alpha[i]
		}
		p[i] = LogGamma(rng, a)
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
