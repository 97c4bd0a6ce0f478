package aggregate

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// benchClients returns K clients of one Gaussian parameter with P elements (means N(0,1),
// log-variances uniform on [-10, 0]).
func benchClients(K, P int) (clients []*posterior.Posterior, prev *posterior.Posterior) {
	rng := rand.New(rand.NewPCG(uint64(K), uint64(P)))
	mk := func() *posterior.Posterior {
		mu, lv := make([]float32, P), make([]float32, P)
		for i := range mu {
			mu[i] = float32(rng.NormFloat64())
			lv[i] = float32(-10 * rng.Float64())
		}
		return &posterior.Posterior{Params: []posterior.Param{{Name: "/w",
			Mean: tensors.FromFlatDataAndDimensions(mu, P), LogVar: tensors.FromFlatDataAndDimensions(lv, P)}}}
	}
	for range K {
		clients = append(clients, mk())
	}
	return clients, mk()
}

// BenchmarkRules reports bytes of client parameters (means and log-variances, float32) consumed
// per second by each rule, for K = 10 and K = 100 clients of 1M parameters each, on the process
// backend (SimpleGo here). PPA draws a population of 2K samples (it is not a closed form).
func BenchmarkRules(b *testing.B) {
	be := backend.MustDefault()
	const P = 1 << 20
	for _, K := range []int{10, 100} {
		clients, prev := benchClients(K, P)
		for _, rule := range Rules() {
			b.Run(fmt.Sprintf("K=%d/%s", K, rule), func(b *testing.B) {
				opt := Options{Backend: be, PreviousGlobal: prev, PopulationSize: 2 * K, Seed: 1}
				b.SetBytes(int64(K) * P * 8)
				for b.Loop() {
					if _, err := Posteriors(rule, clients, nil, opt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		clients = nil
	}
}
