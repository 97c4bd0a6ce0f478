package models

import (
	"math"
	"slices"
	"testing"
)

// lenetInputs are n deterministic 28x28 grey images.
func lenetInputs(n int) []float32 {
	x := make([]float32, n*28*28)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.013) * 0.5)
	}
	return x
}

// perSampleMean is the Monte Carlo mean of M one-sample predictions (Predict's path without the
// shared trunk) and the per-element standard error.
func perSampleMean(t *testing.T, m *Model, x []float32, M int) (mean, se []float64) {
	t.Helper()
	var sum, sq []float64
	for s := 0; s < M; s++ {
		p, err := m.Predict(x, 1)
		if err != nil {
			t.Fatal(err)
		}
		v := p.ClientMean(0)
		if sum == nil {
			sum, sq = make([]float64, len(v)), make([]float64, len(v))
		}
		for i, x := range v {
			sum[i] += float64(x)
			sq[i] += float64(x) * float64(x)
		}
	}
	mean, se = make([]float64, len(sum)), make([]float64, len(sum))
	for i := range sum {
		mean[i] = sum[i] / float64(M)
		se[i] = math.Sqrt(math.Max(sq[i]/float64(M)-mean[i]*mean[i], 0) / float64(M))
	}
	return mean, se
}

// TestSharedTrunkPredict checks the shared-trunk path of Predict (the deterministic convolutions of a
// Bayesian LeNet or CNN3 once per chunk, the variational dense head once per sample) against the
// one-pass-per-sample path: the same predictive with nearly no weight noise, the same Monte Carlo mean
// within a few standard errors with noise, independent samples, and the same result from the same
// seed. Chunks of 7 examples make several calls per prediction.
func TestSharedTrunkPredict(t *testing.T) {
	for _, tc := range []struct {
		name       string
		arch       Arch
		initLogVar float64
		tolerance  float64 // on the mean probability: absolute (nearly no noise) or in standard errors
	}{
		{"lenet, nearly no noise", ArchLeNet, LogVarMin, 1e-5},
		{"lenet, noise", ArchLeNet, -3, 4},
		{"cnn3, noise", ArchCNN3, -3, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shape := []int{28, 28, 1}
			cfg := Config{Options: Options{Arch: tc.arch, Kind: Bayesian, BayesianLayers: 1, InitLogVar: tc.initLogVar, ConvChannels: []int{4, 6}}, InputShape: shape, NumClasses: 10,
				Clients: 1, Seed: 3, PredictBatch: 7}
			if tc.arch == ArchLeNet {
				cfg.BayesianLayers, cfg.DenseWidths = 2, []int{12}
			}
			m := newModel(t, cfg)
			if !m.sharedTrunk() {
				t.Fatal("the shared-trunk path is not taken")
			}
			x := lenetInputs(20)
			const M = 200
			p, err := m.Predict(x, M)
			if err != nil {
				t.Fatal(err)
			}
			ref, se := perSampleMean(t, m, x, M)
			worst := 0.0
			for i, v := range p.ClientMean(0) {
				d := math.Abs(float64(v) - ref[i])
				if tc.initLogVar != LogVarMin {
					d /= math.Sqrt(2)*se[i] + 1e-6
				}
				worst = math.Max(worst, d)
			}
			if worst > tc.tolerance {
				t.Errorf("shared-trunk mean differs from the per-sample mean by %.3g (tolerance %g)", worst, tc.tolerance)
			}
			if tc.initLogVar != LogVarMin && slices.Equal(p.Sample(0, 0), p.Sample(0, 1)) {
				t.Error("two samples of the shared-trunk path are equal: the heads share their noise")
			}
			if err := m.ResetNoise(); err != nil {
				t.Fatal(err)
			}
			a, _ := m.Predict(x, 5)
			if err := m.ResetNoise(); err != nil {
				t.Fatal(err)
			}
			b, _ := m.Predict(x, 5)
			if !slices.Equal(a.Probs, b.Probs) {
				t.Error("the same seed gives another prediction")
			}
		})
	}
	det := newModel(t, Config{Options: Options{Arch: ArchLeNet, Kind: Bayesian}, InputShape: []int{28, 28, 1}, NumClasses: 10, Clients: 1})
	if det.sharedTrunk() {
		t.Error("a LeNet with Bayesian convolutions takes the shared-trunk path")
	}
}

// BenchmarkPredict times M = 10 sample predictions of 1,000 images with Ozer et al. (2022)'s Bayesian
// LeNet (variational dense layers), on the shared-trunk path and on the one-pass-per-sample path, and
// reports seconds per 1,000 images.
func BenchmarkPredict(b *testing.B) {
	for _, path := range []string{"shared", "per-sample"} {
		b.Run("bayes-lenet/"+path, func(b *testing.B) {
			m := newModel(b, Config{Options: Options{Arch: ArchLeNet, Kind: Bayesian, BayesianLayers: 3}, InputShape: []int{28, 28, 1}, NumClasses: 10, Clients: 1})
			m.perSample = path == "per-sample"
			x := lenetInputs(1000)
			if _, err := m.Predict(x, 10); err != nil { // compiles
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := m.Predict(x, 10); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/1k-images")
		})
	}
}
