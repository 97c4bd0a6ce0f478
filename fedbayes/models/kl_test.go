package models

import (
	"math"
	"testing"
)

// klByQuadrature integrates q(w) (log q(w) - log p(w)) with Simpson's rule over mu_q +- 12 sigma_q.
func klByQuadrature(muQ, sQ, muP, sP float64) float64 {
	logN := func(w, mu, s float64) float64 {
		d := (w - mu) / s
		return -0.5*d*d - math.Log(s) - 0.5*math.Log(2*math.Pi)
	}
	const n = 20000 // even
	a, b := muQ-12*sQ, muQ+12*sQ
	h := (b - a) / n
	sum := 0.0
	for i := 0; i <= n; i++ {
		w := a + float64(i)*h
		lq := logN(w, muQ, sQ)
		f := math.Exp(lq) * (lq - logN(w, muP, sP))
		switch {
		case i == 0 || i == n:
			sum += f
		case i%2 == 1:
			sum += 4 * f
		default:
			sum += 2 * f
		}
	}
	return sum * h / 3
}

func TestKLGaussianAgainstQuadrature(t *testing.T) {
	tests := []struct{ muQ, sQ, muP, sP float64 }{
		{0, 1, 0, 1},        // identical: 0
		{0.3, 0.1, 0, 1},    // N(0, 1) prior of Ozer et al. (2022)
		{-1.2, 0.05, 0, 10}, // N(0, 100) prior of Fischer et al. (2024)
		{2, 0.5, 0, 1},      // the toy pair of Jamoussi et al. (BA-BFL): N(2, 0.25) vs N(0, 1)
		{0.7, 2, 0.5, 0.3},  // wider than the prior
	}
	for _, tc := range tests {
		got := KLGaussian(tc.muQ, 2*math.Log(tc.sQ), tc.muP, 2*math.Log(tc.sP))
		want := klByQuadrature(tc.muQ, tc.sQ, tc.muP, tc.sP)
		if math.Abs(got-want) > 1e-7*math.Max(1, math.Abs(want)) {
			t.Errorf("KL(N(%v,%v^2) || N(%v,%v^2)) = %.10g, quadrature %.10g", tc.muQ, tc.sQ, tc.muP, tc.sP, got, want)
		}
	}
	if got := KLGaussian(2, math.Log(0.25), 0, 0); math.Abs(got-(0.5*(math.Log(4)+0.25+4-1))) > 1e-12 {
		t.Errorf("hand-computed KL(N(2, 0.25) || N(0, 1)) = %v", got)
	}
}

// TestModelKL checks the KL the training step reports against KLGaussian summed over the posterior
// in float64, for both variance parameterisations and a non-default prior.
func TestModelKL(t *testing.T) {
	for _, vp := range []VarParam{LogVarParam, SoftplusParam} {
		cfg := Config{Options: Options{Arch: ArchMLP, Hidden: []int{4}, Kind: Bayesian, VarParam: vp, PriorStd: 10, InitLogVar: -3}, InputShape: []int{3}, NumClasses: 2,
			Clients: 2, Seed: 3}
		m := newModel(t, cfg)
		tr, err := m.NewTrainer(OptimizerConfig{Kind: SGD, LearningRate: 1e-9})
		if err != nil {
			t.Fatal(err)
		}
		post, err := m.Posterior()
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, 2)
		for _, p := range post.Params {
			mu, lv := flat32(t, p.Mean), flat32(t, p.LogVar)
			for i := range mu {
				want[i*2/len(mu)] += KLGaussian(float64(mu[i]), float64(lv[i]), 0, 2*math.Log(10))
			}
		}
		x, y := synthetic(1, 2, 4, 3, 2)
		st, err := tr.Step(Batch{X: x, Labels: y, DatasetSizes: []int{100, 50}})
		if err != nil {
			t.Fatal(err)
		}
		for k := range want {
			if math.Abs(st.KL[k]-want[k]) > 1e-4*want[k] {
				t.Errorf("%s client %d: model KL %v, float64 reference %v", vp, k, st.KL[k], want[k])
			}
			size := []float64{100, 50}[k]
			if elbo := st.NLL[k] + st.KL[k]/size; math.Abs(st.Loss[k]-elbo) > 1e-5*elbo {
				t.Errorf("%s client %d: loss %v, NLL + KL/|D_k| = %v", vp, k, st.Loss[k], elbo)
			}
		}
	}
}
