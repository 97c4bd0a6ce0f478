package models

import (
	"math"
	"testing"
)

// TestResNet20Forward builds the three ResNet-20 variants of Fischer et al. (2024) with two clients
// and checks their Monte Carlo predictions: valid distributions, identical samples for the
// deterministic net, different samples for MC dropout and Flipout.
func TestResNet20Forward(t *testing.T) {
	x, _ := synthetic(5, 1, 3, 32*32*3, 2)
	// An untrained ResNet-20 with inference-mode batch norm (running mean 0, variance 1) has huge
	// logits; with zero biases it is positively homogeneous, so small inputs keep the softmax unsaturated.
	for i := range x {
		x[i] *= 1e-3
	}
	for _, tc := range []struct {
		kind       Kind
		stochastic bool
	}{{Deterministic, false}, {MCDropout, true}, {Bayesian, true}} {
		m := newModel(t, Config{Options: Options{Arch: ArchResNet20, Kind: tc.kind, Estimator: Flipout, PriorStd: 10, InitLogVar: -6}, InputShape: []int{32, 32, 3}, NumClasses: 10,
			Clients: 2})
		p, err := m.Predict(x, 2)
		if err != nil {
			t.Fatal(err)
		}
		for c := 0; c < 2; c++ {
			for s := 0; s < 2; s++ {
				probs := p.Sample(c, s)
				for e := 0; e < 3; e++ {
					sum := 0.0
					for _, v := range probs[e*10 : (e+1)*10] {
						if !(v >= 0 && v <= 1) {
							t.Fatalf("%s: probability %v", tc.kind, v)
						}
						sum += float64(v)
					}
					if math.Abs(sum-1) > 1e-4 {
						t.Errorf("%s client %d sample %d example %d: probabilities sum to %v", tc.kind, c, s, e, sum)
					}
				}
			}
			a, b := p.Sample(c, 0), p.Sample(c, 1)
			differ := false
			for i := range a {
				differ = differ || a[i] != b[i]
			}
			if differ != tc.stochastic {
				t.Errorf("%s client %d: samples differ = %v, want %v", tc.kind, c, differ, tc.stochastic)
			}
		}
	}
}

// TestResNet20Trains takes a few SGD steps on one small batch (on the training backend): the loss
// must fall, and batch norm's running statistics must move.
func TestResNet20Trains(t *testing.T) {
	if testing.Short() {
		t.Skip("trains ResNet-20")
	}
	m, err := NewWithBackend(testBackend(t), Config{Options: Options{Arch: ArchResNet20}, InputShape: []int{32, 32, 3}, NumClasses: 4, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := m.NewTrainer(OptimizerConfig{Kind: SGD, LearningRate: 0.05, Momentum: 0.9, WeightDecay: 5e-4})
	if err != nil {
		t.Fatal(err)
	}
	x, y := synthetic(6, 1, 4, 32*32*3, 4)
	var first, last float64
	for s := 0; s < 4; s++ {
		st, err := tr.Step(Batch{X: x, Labels: y, DatasetSizes: []int{4}})
		if err != nil {
			t.Fatal(err)
		}
		if s == 0 {
			first = st.Loss[0]
		}
		last = st.Loss[0]
	}
	if !(last < first) {
		t.Errorf("ResNet-20 loss went from %v to %v on a fixed batch", first, last)
	}
	post, err := m.Posterior()
	if err != nil {
		t.Fatal(err)
	}
	rm := post.Find("/l01_bn/running_mean")
	if rm == nil {
		t.Fatalf("no running mean in the posterior; parameters: %v", m.ParamNames()[:6])
	}
	moved := false
	for _, v := range flat32(t, rm.Mean) {
		moved = moved || v != 0
	}
	if !moved {
		t.Error("batch-norm running mean did not move during training")
	}
}
