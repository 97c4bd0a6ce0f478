package models

import (
	"math"
	"testing"

	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestEstimatorsAgreeInExpectation: for one Gaussian dense layer y = x w + b on a fixed input, every
// estimator's output has mean x mu_w + mu_b and variance x^2 sigma_w^2 + sigma_b^2.
func TestEstimatorsAgreeInExpectation(t *testing.T) {
	const samples = 3000
	x := []float32{0.5, -1.5, 2, 1}
	muW := []float32{0.3, -0.2, 0.1, 0.4}
	lvW := []float32{-1, -2, -0.5, -3}
	muB, lvB := float32(0.25), float32(-2)
	wantMean, wantVar := float64(muB), math.Exp(float64(lvB))
	for i := range x {
		wantMean += float64(x[i] * muW[i])
		wantVar += float64(x[i]*x[i]) * math.Exp(float64(lvW[i]))
	}
	post := &posterior.Posterior{Params: []posterior.Param{
		{Name: "/l00_dense/biases", Mean: tensors.FromValue([]float32{muB}), LogVar: tensors.FromValue([]float32{lvB})},
		{Name: "/l00_dense/weights", Mean: tensors.FromFlatDataAndDimensions(muW, 4, 1), LogVar: tensors.FromFlatDataAndDimensions(lvW, 4, 1)},
	}}
	for _, est := range []Estimator{Reparam, LocalReparam, Flipout} {
		m := newModel(t, Config{Options: Options{Arch: ArchMLP, Hidden: []int{}, Kind: Bayesian, Estimator: est}, Task: Regression, InputShape: []int{4}, Seed: 42})
		if err := m.SetPosterior(post); err != nil {
			t.Fatal(err)
		}
		p, err := m.Predict(x, samples)
		if err != nil {
			t.Fatal(err)
		}
		var sum, sum2 float64
		for _, v := range p.Probs {
			sum += float64(v)
			sum2 += float64(v) * float64(v)
		}
		mean := sum / samples
		variance := (sum2 - samples*mean*mean) / (samples - 1)
		seMean := math.Sqrt(wantVar / samples)
		seVar := wantVar * math.Sqrt(2.0/(samples-1))
		if math.Abs(mean-wantMean) > 4*seMean {
			t.Errorf("%s: output mean %.4f, want %.4f (standard error %.4f)", est, mean, wantMean, seMean)
		}
		if math.Abs(variance-wantVar) > 4*seVar {
			t.Errorf("%s: output variance %.4f, want %.4f (standard error %.4f)", est, variance, wantVar, seVar)
		}
		t.Logf("%s: mean %.4f (want %.4f), variance %.4f (want %.4f)", est, mean, wantMean, variance, wantVar)
	}
}
