package models

import (
	"syscall"
	"testing"
	"time"
)

// BenchmarkStep measures one SGD step (momentum 0.9) at batch 64 of one client, in samples/s, for
// the networks that kernels/bench-torch.py times in PyTorch under the same names, so that `make
// bench` and `make bench-torch` give the ratio on the user's own machine:
//
//	mlp          784-100-10, deterministic
//	bayes-mlp    784-100-10, Bayesian (local reparameterisation), KL included
//	lenet        LeNet on 28x28x1, deterministic
//	bayes-lenet  LeNet with its three dense layers Bayesian (Ozer et al. 2022), local reparameterisation
//	cnn3         Hasan's (2023) CIFAR CNN on 32x32x3, deterministic
//	resnet20     ResNet-20 on 32x32x3 (Fischer et al. 2024), deterministic
//
//	go test ./fedbayes/models -run '^$' -bench Step -benchtime=40x -count=5
func BenchmarkStep(b *testing.B) {
	cifar := []int{32, 32, 3}
	for _, c := range append(paperNetworks(),
		benchNetwork{"cnn3", Config{Options: Options{Arch: ArchCNN3, Kind: Deterministic}, InputShape: cifar}},
		benchNetwork{"resnet20", Config{Options: Options{Arch: ArchResNet20, Kind: Deterministic}, InputShape: cifar}},
	) {
		b.Run(c.name, func(b *testing.B) {
			cfg := c.cfg
			cfg.NumClasses, cfg.Clients = 10, 1
			benchSteps(b, cfg, 64)
		})
	}
}

// benchNetwork is a network the step benchmarks time, under the name kernels/bench-torch.py gives it.
type benchNetwork struct {
	name string
	cfg  Config
}

// paperNetworks are the Fashion-MNIST networks of the papers: the MLP and LeNet, deterministic and
// Bayesian (LeNet's three dense layers, Ozer et al. 2022).
func paperNetworks() []benchNetwork {
	mnist := []int{28, 28, 1}
	return []benchNetwork{
		{"mlp", Config{Options: Options{Arch: ArchMLP, Hidden: []int{100}, Kind: Deterministic}, InputShape: []int{784}}},
		{"bayes-mlp", Config{Options: Options{Arch: ArchMLP, Hidden: []int{100}, Kind: Bayesian}, InputShape: []int{784}}},
		{"lenet", Config{Options: Options{Arch: ArchLeNet, Kind: Deterministic}, InputShape: mnist}},
		{"bayes-lenet", Config{Options: Options{Arch: ArchLeNet, Kind: Bayesian, BayesianLayers: 3}, InputShape: mnist}},
	}
}

// benchSteps times training steps of a model with cfg at batch bs per client on synthetic data and
// reports samples/s (all clients' examples).
func benchSteps(b *testing.B, cfg Config, bs int) {
	m := newModel(b, cfg)
	tr, err := m.NewTrainer(OptimizerConfig{Kind: SGD, LearningRate: 0.01, Momentum: 0.9})
	if err != nil {
		b.Fatal(err)
	}
	dim := 1
	for _, d := range cfg.InputShape {
		dim *= d
	}
	x, y := synthetic(1, cfg.Clients, bs, dim, cfg.NumClasses)
	sizes := make([]int, cfg.Clients)
	for i := range sizes {
		sizes[i] = 60000
	}
	batch := Batch{X: x, Labels: y, DatasetSizes: sizes}
	if _, err := tr.Step(batch); err != nil { // compile
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for b.Loop() {
		if _, err := tr.Step(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cfg.Clients*bs*b.N)/b.Elapsed().Seconds(), "samples/s")
	// CPU time of the process per step (all threads): with the wall time it shows how much of the
	// second core is used, and it is steadier than wall time on a loaded machine.
	b.ReportMetric((cpuSeconds()-cpu0)*1000/float64(b.N), "cpu-ms/step")
}

// cpuSeconds returns the user plus system CPU time of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
