package randx

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The sample mean and variance of Gamma(a, 1) are a and a, within 5 standard errors.
func TestGammaMoments(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, a := range []float64{0.05, 0.5, 1, 3.7, 20} {
		const n = 200000
		var s, s2 float64
		for i := 0; i < n; i++ {
			x := Gamma(rng, a)
			s += x
			s2 += x * x
		}
		mean := s / n
		variance := s2/n - mean*mean
		if se := math.Sqrt(a / n); math.Abs(mean-a) > 5*se {
			t.Errorf("a=%g: mean %g, want %g ± %g", a, mean, a, 5*se)
		}
		if math.Abs(variance-a)/a > 0.05 {
			t.Errorf("a=%g: variance %g, want %g within 5%%", a, variance, a)
		}
	}
}

func TestDirichletSumsToOneForTinyAlpha(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := make([]float64, 10)
	for i := 0; i < 1000; i++ {
		Dirichlet(rng, p, 1e-3)
		var s float64
		for _, v := range p {
			if v < 0 || math.IsNaN(v) {
				t.Fatalf("component %v", v)
			}
			s += v
		}
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("sum %v, want 1", s)
		}
	}
}

// E[p_i] = alpha_i / sum(alpha) for an asymmetric Dirichlet.
func TestDirichletMeans(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alpha := []float64{1, 2, 7}
	p := make([]float64, 3)
	mean := make([]float64, 3)
	const n = 100000
	for i := 0; i < n; i++ {
		Dirichlet(rng, p, alpha...)
		for j := range p {
			mean[j] += p[j] / n
		}
	}
	for j, a := range alpha {
		if want := a / 10; math.Abs(mean[j]-want) > 0.005 {
			t.Errorf("E[p_%d] = %.4f, want %.4f", j, mean[j], want)
		}
	}
}
