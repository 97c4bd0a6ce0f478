package models

import (
	"math/rand"
	"testing"

	"fedbayes.dev/fedbayes/data"
)

// loadData loads a dataset from data.Dir(), skipping the test if it is not installed.
func loadData(t testing.TB, name string) (train, test *data.Dataset) {
	t.Helper()
	for _, a := range data.Status(data.Dir()) {
		if a.Name == name && !a.Present {
			t.Skipf("%s is not installed in %s (%s, or set $%s)", name, a.Path, a.Install, data.DirEnv)
		}
	}
	train, test, err := data.Load(name, data.Dir())
	if err != nil {
		t.Fatal(err)
	}
	return train, test
}

// subset draws n examples of d (seeded).
func subset(d *data.Dataset, n int, seed int64) ([]float32, []int32) {
	size := d.ExampleSize()
	idx := rand.New(rand.NewSource(seed)).Perm(d.Len())[:n]
	x := make([]float32, 0, n*size)
	y := make([]int32, 0, n)
	for _, i := range idx {
		x = append(x, d.X[i*size:(i+1)*size]...)
		y = append(y, d.Labels[i])
	}
	return x, y
}

// trainAndScore trains every client of m for steps SGD steps on its own random batches from (x, y),
// then returns the accuracy of each client's MC-averaged prediction on (xt, yt).
func trainAndScore(t *testing.T, m *Model, opt OptimizerConfig, x []float32, y []int32, xt []float32, yt []int32, steps, bs, samples int) []float64 {
	t.Helper()
	tr, err := m.NewTrainer(opt)
	if err != nil {
		t.Fatal(err)
	}
	k, size, n := m.Clients(), m.exampleSize, len(y)
	rng := rand.New(rand.NewSource(1))
	sizes := make([]int, k)
	for c := range sizes {
		sizes[c] = n
	}
	bx := make([]float32, 0, k*bs*size)
	by := make([]int32, 0, k*bs)
	for s := 0; s < steps; s++ {
		bx, by = bx[:0], by[:0]
		for i := 0; i < k*bs; i++ {
			e := rng.Intn(n)
			bx = append(bx, x[e*size:(e+1)*size]...)
			by = append(by, y[e])
		}
		if _, err := tr.Step(Batch{X: bx, Labels: by, DatasetSizes: sizes}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := m.Predict(xt, samples)
	if err != nil {
		t.Fatal(err)
	}
	acc := make([]float64, k)
	for c := range acc {
		mean := p.ClientMean(c)
		for e, label := range yt {
			row := mean[e*p.Outputs : (e+1)*p.Outputs]
			best := 0
			for j, v := range row {
				if v > row[best] {
					best = j
				}
			}
			if best == int(label) {
				acc[c]++
			}
		}
		acc[c] /= float64(len(yt))
	}
	return acc
}

// TestMLPTrainsOnDigits: every kind of MLP, two clients at once, learns scikit-learn's digits far
// above chance (0.1).
func TestMLPTrainsOnDigits(t *testing.T) {
	train, test := loadData(t, "digits")
	tests := []Config{
		{Options: Options{Kind: Deterministic}},
		{Options: Options{Kind: MCDropout}},
		{Options: Options{Kind: Bayesian, Estimator: LocalReparam}},
		{Options: Options{Kind: Bayesian, Estimator: Flipout, VarParam: SoftplusParam}},
	}
	for _, cfg := range tests {
		cfg.Arch, cfg.InputShape, cfg.NumClasses, cfg.Clients, cfg.Seed = ArchMLP, train.Shape, 10, 2, 1
		m := newModel(t, cfg)
		acc := trainAndScore(t, m, OptimizerConfig{Kind: Adam, LearningRate: 0.01}, train.X, train.Labels, test.X, test.Labels, 150, 32, 4)
		for c, a := range acc {
			if a < 0.8 {
				t.Errorf("%s %s client %d: test accuracy %.3f, want >= 0.8", cfg.Kind, cfg.Estimator, c, a)
			}
		}
		t.Logf("%s %s: test accuracy %.3f", cfg.Kind, cfg.Estimator, acc)
	}
}

// TestConvNetsTrainOnFashionMNIST: LeNet (deterministic, the Bayesian-dense LeNet of Ozer et al. (2022),
// and MC dropout) and the 3-conv CNN learn a Fashion-MNIST subset well above chance (0.1) in a short run.
func TestConvNetsTrainOnFashionMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("trains convolutional nets")
	}
	train, test := loadData(t, "fashion-mnist")
	x, y := subset(train, 3000, 1)
	xt, yt := subset(test, 500, 2)
	be := testBackend(t)
	tests := []struct {
		cfg   Config
		steps int
	}{
		{Config{Options: Options{Arch: ArchLeNet, Kind: Deterministic}, Clients: 2}, 80},
		{Config{Options: Options{Arch: ArchLeNet, Kind: Bayesian, BayesianLayers: 3, Estimator: LocalReparam}}, 80},
		{Config{Options: Options{Arch: ArchLeNet, Kind: MCDropout, Estimator: Flipout}}, 80},
		{Config{Options: Options{Arch: ArchLeNet, Kind: Bayesian, Estimator: Flipout}}, 80},
		{Config{Options: Options{Arch: ArchCNN3, Kind: Deterministic, ConvChannels: []int{8, 16, 16}}}, 60},
	}
	for _, tc := range tests {
		cfg := tc.cfg
		cfg.InputShape, cfg.NumClasses, cfg.Seed = train.Shape, 10, 3
		m, err := NewWithBackend(be, cfg)
		if err != nil {
			t.Fatal(err)
		}
		acc := trainAndScore(t, m, OptimizerConfig{Kind: Adam, LearningRate: 3e-3}, x, y, xt, yt, tc.steps, 32, 2)
		for c, a := range acc {
			if a < 0.55 {
				t.Errorf("%s %s (last %d Bayesian) client %d: test accuracy %.3f, want >= 0.55", cfg.Arch, cfg.Kind, cfg.BayesianLayers, c, a)
			}
		}
		t.Logf("%s %s (last %d Bayesian): test accuracy %.3f", cfg.Arch, cfg.Kind, cfg.BayesianLayers, acc)
	}
}
