package aggregate

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/posterior"
)

// scalarKL sums the float64 KL over all Gaussian elements of two posteriors.
func scalarKL(t *testing.T, p, q *posterior.Posterior) float64 {
	s := 0.0
	for i, spec := range testModel {
		if !spec.gaussian {
			continue
		}
		for e := range p.Params[i].Mean.Size() {
			a := scalarAt(t, []*posterior.Posterior{p, q}, i, e)
			s += KL(a[0], a[1])
		}
	}
	return s
}

func TestKLWeightsMatchScalar(t *testing.T) {
	be := backend.MustDefault()
	clients, prev := randomPosteriors(rand.New(rand.NewPCG(20, 21)), 4)
	kl, err := KLMatrix(clients, Options{Backend: be})
	if err != nil {
		t.Fatal(err)
	}
	maxKL := make([]float64, len(clients))
	for k := range clients {
		for j := range clients {
			want := scalarKL(t, clients[k], clients[j])
			if !near(kl[k][j], want, 1e-9) {
				t.Errorf("KL(%d||%d) = %v, float64 reference %v", k, j, kl[k][j], want)
			}
			maxKL[k] = math.Max(maxKL[k], want)
		}
	}
	w, err := MaxDiscrepancyWeights(clients, Options{Backend: be})
	want, _ := weightsFromDivergences(maxKL, "")
	for k := range w {
		if err != nil || !near(w[k], want[k], 1e-9) {
			t.Fatalf("max-discrepancy weights %v (%v), want %v", w, err, want)
		}
	}
	w, err = FixedPointWeights(clients, prev, Options{Backend: be})
	d := make([]float64, len(clients))
	for k := range d {
		d[k] = scalarKL(t, prev, clients[k])
	}
	want, _ = weightsFromDivergences(d, "")
	for k := range w {
		if err != nil || !near(w[k], want[k], 1e-9) {
			t.Fatalf("fixed-point weights %v (%v), want %v", w, err, want)
		}
	}
	// Identical clients: zero divergences, equal weights.
	same := []*posterior.Posterior{clients[0], clients[0], clients[0]}
	if w, err := MaxDiscrepancyWeights(same, Options{Backend: be}); err != nil || !near(w[1], 1.0/3, 1e-15) {
		t.Errorf("identical clients: %v %v", w, err)
	}
	if _, err := FixedPointWeights(clients, nil, Options{Backend: be}); err == nil {
		t.Error("fixed-point weights without previous: no error")
	}
	det := &posterior.Posterior{Params: []posterior.Param{clients[0].Params[0]}}
	if _, err := KLMatrix([]*posterior.Posterior{det, det}, Options{Backend: be}); err == nil ||
		!strings.Contains(err.Error(), "Gaussian parameters") {
		t.Errorf("deterministic-only KL: %v", err)
	}
}

func TestFedBE(t *testing.T) {
	be := backend.MustDefault()
	clients, _ := randomPosteriors(rand.New(rand.NewPCG(30, 31)), 3)
	w := []float64{0.5, 0.3, 0.2}
	const M = 3000
	models, err := FedBEGaussian(clients, w, M, 4, Options{Backend: be})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := FedBEGaussian(clients, w, M, 4, Options{Backend: be})
	if len(models) != M || models[0].Params[1].LogVar != nil {
		t.Fatalf("got %d models", len(models))
	}
	p := 1
	for e, v := range flat(t, models[0].Params[p].Mean) {
		if v != flat(t, again[0].Params[p].Mean)[e] {
			t.Fatalf("FedBEGaussian: same seed, different model 0")
		}
	}
	// The sample moments over the M models match the fitted Gaussian (Chen & Chao).
	for e := range clients[0].Params[p].Mean.Size() {
		sc := scalarAt(t, clients, p, e)
		var mu, s2 float64
		for k := range sc {
			mu += w[k] * sc[k].Mean
		}
		for k := range sc {
			s2 += w[k] * (sc[k].Mean - mu) * (sc[k].Mean - mu)
		}
		var m1, m2 float64
		for _, m := range models {
			x := float64(flat(t, m.Params[p].Mean)[e])
			m1 += x
			m2 += x * x
		}
		m1 /= M
		v := m2/M - m1*m1
		if math.Abs(m1-mu) > 5*math.Sqrt(s2/M) || math.Abs(v/s2-1) > 5*math.Sqrt(2.0/M) {
			t.Errorf("element %d: sample N(%v, %v), fitted N(%v, %v)", e, m1, v, mu, s2)
		}
	}
	dm, err := FedBEDirichlet(clients, w, 0.5, 5, 9, Options{Backend: be})
	if err != nil {
		t.Fatal(err)
	}
	coefs := DirichletMixtureCoefficients(w, 0.5, 5, 9)
	for m := range dm {
		sum := 0.0
		for _, c := range coefs[m] {
			sum += c
			if c < 0 {
				t.Errorf("negative coefficient %v", c)
			}
		}
		if !near(sum, 1, 1e-12) {
			t.Errorf("coefficients sum to %v", sum)
		}
		for e, got := range flat(t, dm[m].Params[p].Mean) {
			want := 0.0
			for k, c := range scalarAt(t, clients, p, e) {
				want += coefs[m][k] * c.Mean
			}
			if !near(float64(got), want, 1e-5) {
				t.Errorf("Dirichlet model %d element %d: %v, want %v", m, e, got, want)
			}
		}
	}
	if _, err := FedBEDirichlet(clients, w, -1, 5, 9, Options{Backend: be}); err == nil {
		t.Error("negative alpha: no error")
	}
	if _, err := FedBEGaussian(clients, w, 0, 1, Options{Backend: be}); err == nil {
		t.Error("M = 0: no error")
	}
}
