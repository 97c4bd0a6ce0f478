package models

import (
	"fmt"
	"testing"
)

// BenchmarkTrainStep measures one training step of K clients at batch 32 per client (samples/s counts
// all clients' examples), for a Bayesian (local reparameterisation) 784-100-10 MLP and LeNet on
// 28x28x1: K=10 against K=1 shows what the client axis gains.
func BenchmarkTrainStep(b *testing.B) {
	for _, arch := range []struct {
		name string
		cfg  Config
	}{
		{"mlp", Config{Options: Options{Arch: ArchMLP, Kind: Bayesian}, InputShape: []int{784}, NumClasses: 10}},
		{"lenet", Config{Options: Options{Arch: ArchLeNet, Kind: Bayesian, BayesianLayers: 3}, InputShape: []int{28, 28, 1}, NumClasses: 10}},
	} {
		for _, k := range []int{1, 10} {
			b.Run(fmt.Sprintf("%s/K=%d", arch.name, k), func(b *testing.B) {
				cfg := arch.cfg
				cfg.Clients = k
				benchSteps(b, cfg, 32)
			})
		}
	}
}
