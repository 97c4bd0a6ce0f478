package models

import (
	"fmt"
	"testing"
)

// BenchmarkTrainStep measures one training step of K clients at batch 32 per client (samples/s counts
// all clients' examples), for a Bayesian (local reparameterisation) 784-100-10 MLP and LeNet on
// 28x28x1.
func BenchmarkTrainStep(b *testing.B) {
	for _, arch := range []struct {
		name string
		cfg  Config
	}{
		{"mlp", Config{Arch: ArchMLP, InputShape: []int{784}, NumClasses: 10, Kind: Bayesian}},
		{"lenet", Config{Arch: ArchLeNet, InputShape: []int{28, 28, 1}, NumClasses: 10, Kind: Bayesian, BayesianLayers: 3}},
	} {
		for _, k := range []int{1, 10} {
			b.Run(fmt.Sprintf("%s/K=%d", arch.name, k), func(b *testing.B) {
				cfg := arch.cfg
				cfg.Clients = k
				m := newModel(b, cfg)
				tr, err := m.NewTrainer(OptimizerConfig{Kind: SGD, LearningRate: 0.01, Momentum: 0.9})
				if err != nil {
					b.Fatal(err)
				}
				const bs = 32
				x, y := synthetic(1, k, bs, 784, 10)
				sizes := make([]int, k)
				for i := range sizes {
					sizes[i] = 1000
				}
				batch := Batch{X: x, Labels: y, DatasetSizes: sizes}
				if _, err := tr.Step(batch); err != nil { // compile
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := tr.Step(batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(k*bs*b.N)/b.Elapsed().Seconds(), "samples/s")
			})
		}
	}
}
