package aggregate

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// benchGraph adds the graph path (Options.Graph) after each closed-form rule of BenchmarkRules, as
// "<rule>.graph": go test -bench Rules ./fedbayes/aggregate/ -args -aggregate.graph.
var benchGraph = flag.Bool("aggregate.graph", false, "BenchmarkRules: also run each closed-form rule on the graph path")

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
// per second by each rule, and the process's CPU time per aggregation (all threads; steadier than
// wall time on a loaded machine), for K = 10 and K = 100 clients of 1M parameters each, on the
// fused kernels (PPA, not a closed form, on the process backend with a population of 2K samples).
// With -aggregate.graph, each closed-form rule is followed by the same on the graph path.
func BenchmarkRules(b *testing.B) {
	be := backend.MustDefault()
	const P = 1 << 20
	for _, K := range []int{10, 100} {
		clients, prev := benchClients(K, P)
		for _, rule := range Rules() {
			paths := []bool{false}
			if *benchGraph && rule != PPA {
				paths = append(paths, true)
			}
			for _, graph := range paths {
				name := fmt.Sprintf("K=%d/%s", K, rule)
				if graph {
					name += ".graph"
				}
				b.Run(name, func(b *testing.B) {
					opt := Options{Backend: be, PreviousGlobal: prev, PopulationSize: 2 * K, Seed: 1, Graph: graph}
					b.SetBytes(int64(K) * P * 8)
					cpu0 := cpuSeconds()
					for b.Loop() {
						if _, err := Posteriors(rule, clients, nil, opt); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric((cpuSeconds()-cpu0)*1000/float64(b.N), "cpu-ms/op")
				})
			}
		}
		clients = nil
	}
}

// cpuSeconds returns the user plus system CPU time of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
