package models

import (
	"math"
	"testing"
)

// TestClientsMatchSeparateModels trains a K-client model and K one-client models (seed Seed+k) on the
// same per-client batches: losses, posteriors and predictions must agree.
func TestClientsMatchSeparateModels(t *testing.T) {
	const k, bs, dim, classes, steps = 3, 6, 5, 3, 4
	tests := []struct {
		name  string
		cfg   Config
		opt   OptimizerConfig
		lenet bool // a LeNet on 16x16x2 images: per-client convolutions and their gradients
	}{
		{"flipout adam", Config{Options: Options{Kind: Bayesian, Estimator: Flipout, InitLogVar: -4}}, OptimizerConfig{Kind: Adam, LearningRate: 0.01}, false},
		{"local sgd", Config{Options: Options{Kind: Bayesian, Estimator: LocalReparam, VarParam: SoftplusParam, InitLogVar: -4}}, OptimizerConfig{Kind: SGD, LearningRate: 0.1, Momentum: 0.9, WeightDecay: 1e-3}, false},
		{"reparam hybrid", Config{Options: Options{Kind: Bayesian, Estimator: Reparam, BayesianLayers: 1, InitLogVar: -4}}, OptimizerConfig{Kind: SGD, LearningRate: 0.1, Momentum: 0.5}, false},
		{"mc dropout", Config{Options: Options{Kind: MCDropout, DropoutRate: 0.3}}, OptimizerConfig{Kind: Adam, LearningRate: 0.01, WeightDecay: 1e-2}, false},
		{"regression", Config{Options: Options{Kind: Bayesian, InitLogVar: -4}, Task: Regression, LearnNoise: true}, OptimizerConfig{Kind: Adam, LearningRate: 0.01}, false},
		{"lenet bayesian head sgd", Config{Options: Options{Kind: Bayesian, Estimator: LocalReparam, BayesianLayers: 2, InitLogVar: -4}}, OptimizerConfig{Kind: SGD, LearningRate: 0.05, Momentum: 0.9}, true},
		{"lenet flipout adam", Config{Options: Options{Kind: Bayesian, Estimator: Flipout, InitLogVar: -4}}, OptimizerConfig{Kind: Adam, LearningRate: 0.01}, true},
	}
	for _, tc := range tests {
		cfg := tc.cfg
		cfg.Arch, cfg.InputShape, cfg.Hidden, cfg.Seed = ArchMLP, []int{dim}, []int{7}, 10
		dim := dim
		if tc.lenet {
			dim = 16 * 16 * 2
			cfg.Arch, cfg.InputShape, cfg.Hidden = ArchLeNet, []int{16, 16, 2}, nil
			cfg.ConvChannels, cfg.DenseWidths = []int{2, 3}, []int{4}
		}
		if cfg.Task != Regression {
			cfg.NumClasses = classes
		}
		cfg.Clients = k
		multi := newModel(t, cfg)
		solo := make([]*Model, k)
		for c := range solo {
			sc := cfg
			sc.Clients, sc.Seed = 1, cfg.Seed+int64(c)
			solo[c] = newModel(t, sc)
		}
		tm, err := multi.NewTrainer(tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		ts := make([]*Trainer, k)
		for c := range ts {
			if ts[c], err = solo[c].NewTrainer(tc.opt); err != nil {
				t.Fatal(err)
			}
		}
		sizes := []int{30, 60, 90}
		for step := 0; step < steps; step++ {
			x, y := synthetic(int64(100+step), k, bs, dim, classes)
			targets := make([]float32, len(y))
			for i, v := range y {
				targets[i] = float32(v) - 1
			}
			b := Batch{X: x, Labels: y, DatasetSizes: sizes}
			if cfg.Task == Regression {
				b.Labels, b.Targets = nil, targets
			}
			stM, err := tm.Step(b)
			if err != nil {
				t.Fatal(err)
			}
			for c := 0; c < k; c++ {
				bc := Batch{X: x[c*bs*dim : (c+1)*bs*dim], DatasetSizes: sizes[c : c+1]}
				if cfg.Task == Regression {
					bc.Targets = targets[c*bs : (c+1)*bs]
				} else {
					bc.Labels = y[c*bs : (c+1)*bs]
				}
				stS, err := ts[c].Step(bc)
				if err != nil {
					t.Fatal(err)
				}
				if d := math.Abs(stM.Loss[c] - stS.Loss[0]); d > 1e-5*math.Max(1, math.Abs(stS.Loss[0])) {
					t.Errorf("%s step %d client %d: loss %v together, %v alone", tc.name, step, c, stM.Loss[c], stS.Loss[0])
				}
			}
		}
		for c := 0; c < k; c++ {
			pm, err := multi.ClientPosterior(c)
			if err != nil {
				t.Fatal(err)
			}
			ps, _ := solo[c].ClientPosterior(0)
			for i := range pm.Params {
				a, b := flat32(t, pm.Params[i].Mean), flat32(t, ps.Params[i].Mean)
				for j := range a {
					if math.Abs(float64(a[j]-b[j])) > 1e-5 {
						t.Fatalf("%s client %d %s[%d]: %v together, %v alone", tc.name, c, pm.Params[i].Name, j, a[j], b[j])
					}
				}
			}
		}
		// Predictions (3 MC samples, the sampling streams continue in step).
		xt, _ := synthetic(7, 1, 5, dim, classes)
		pm, err := multi.Predict(xt, 3)
		if err != nil {
			t.Fatal(err)
		}
		for c := 0; c < k; c++ {
			ps, err := solo[c].Predict(xt, 3)
			if err != nil {
				t.Fatal(err)
			}
			for s := 0; s < 3; s++ {
				a, b := pm.Sample(c, s), ps.Sample(0, s)
				for j := range a {
					if math.Abs(float64(a[j]-b[j])) > 1e-4 {
						t.Fatalf("%s client %d sample %d [%d]: %v together, %v alone", tc.name, c, s, j, a[j], b[j])
					}
				}
			}
		}
	}
}

// TestConvClientsForward checks the per-client convolutions: a 2-client LeNet (Flipout, Bayesian)
// predicts what two one-client LeNets predict.
func TestConvClientsForward(t *testing.T) {
	for _, est := range []Estimator{Flipout, LocalReparam, Reparam} {
		cfg := Config{Options: Options{Arch: ArchLeNet, ConvChannels: []int{2, 3}, DenseWidths: []int{4}, Kind: Bayesian, Estimator: est, InitLogVar: -3}, InputShape: []int{16, 16, 2}, NumClasses: 3,
			Clients: 2, Seed: 5}
		multi := newModel(t, cfg)
		x, _ := synthetic(3, 1, 4, 16*16*2, 2)
		pm, err := multi.Predict(x, 2)
		if err != nil {
			t.Fatal(err)
		}
		for c := 0; c < 2; c++ {
			sc := cfg
			sc.Clients, sc.Seed = 1, cfg.Seed+int64(c)
			ps, err := newModel(t, sc).Predict(x, 2)
			if err != nil {
				t.Fatal(err)
			}
			for s := 0; s < 2; s++ {
				a, b := pm.Sample(c, s), ps.Sample(0, s)
				for j := range a {
					if math.Abs(float64(a[j]-b[j])) > 1e-5 {
						t.Fatalf("%s client %d sample %d [%d]: %v together, %v alone", est, c, s, j, a[j], b[j])
					}
				}
			}
		}
	}
}
