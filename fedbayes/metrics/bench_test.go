package metrics

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkUncertainty10k streams a 10,000-input, 10-class test set with M = 10 Monte Carlo samples
// in batches of 500 (only one batch of M x 500 x C probabilities exists at a time).
func BenchmarkUncertainty10k(b *testing.B) {
	const n, c, m, batch = 10000, 10, 10, 500
	rng := rand.New(rand.NewPCG(1, 1))
	samples := randomProbs(rng, m*batch, c, 2)
	labels := randomLabels(rng, batch, c)
	b.ResetTimer()
	for range b.N {
		a, err := NewUncertainty(c, m, 15)
		if err != nil {
			b.Fatal(err)
		}
		for range n / batch {
			if err := a.Add(samples, labels); err != nil {
				b.Fatal(err)
			}
		}
		r, err := a.Result()
		if err != nil {
			b.Fatal(err)
		}
		for _, ms := range Measures {
			if _, err := r.Retention(ms, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "inputs/s")
}

// BenchmarkClassification10k evaluates 10,000 examples of 10 classes in batches of 500.
func BenchmarkClassification10k(b *testing.B) {
	const n, c, batch = 10000, 10, 500
	rng := rand.New(rand.NewPCG(2, 2))
	probs := randomProbs(rng, batch, c, 2)
	labels := randomLabels(rng, batch, c)
	b.ResetTimer()
	for range b.N {
		a, err := NewClassification(c, 15)
		if err != nil {
			b.Fatal(err)
		}
		for range n / batch {
			if err := a.Add(probs, labels); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := a.Result(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "examples/s")
}
