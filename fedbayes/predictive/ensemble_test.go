package predictive

import (
	"math"
	"testing"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
)

// linearSample returns a stacked posterior of newLinear(K, 1) with weights w[k] and biases b[k].
func linearSample(t *testing.T, m *models.Model, w, b []float32) *posterior.Posterior {
	t.Helper()
	p, err := m.Posterior()
	if err != nil {
		t.Fatal(err)
	}
	f, err := flatten(p)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range f.dims {
		if len(d) == 3 {
			copy(f.values[i], w)
		} else {
			copy(f.values[i], b)
		}
	}
	out, err := f.posterior()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPredictSamplesRegression: two samples of two linear clients; predictive mean and variance by
// hand (noise variance 1).
func TestPredictSamplesRegression(t *testing.T) {
	m := newLinear(t, 2, 1)
	a := linearSample(t, m, []float32{1, 2}, []float32{0, 0})
	b := linearSample(t, m, []float32{3, 4}, []float32{1, 1})
	cp, err := PredictSamples(m, []*posterior.Posterior{a, b}, []float32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	// Client 0: sample a gives [1, 2], sample b [4, 7]. Client 1: a [2, 4], b [5, 9].
	want := []struct{ mean, vari []float64 }{
		{[]float64{2.5, 4.5}, []float64{2.25 + 1, 6.25 + 1}},
		{[]float64{3.5, 6.5}, []float64{2.25 + 1, 6.25 + 1}},
	}
	for k, w := range want {
		for n := range w.mean {
			if !near(float64(cp.Mean[k][n]), w.mean[n], 1e-5) || !near(float64(cp.Var[k][n]), w.vari[n], 1e-4) {
				t.Errorf("client %d example %d: N(%v, %v), want N(%v, %v)", k, n, cp.Mean[k][n], cp.Var[k][n], w.mean[n], w.vari[n])
			}
		}
	}
	if cp.Samples != 2 || cp.Classes != 0 {
		t.Errorf("samples %d classes %d", cp.Samples, cp.Classes)
	}
}

// TestPriorPredictive: for a linear model f = w x + b with w, b ~ N(0, s^2), the prior predictive
// is N(0, s^2 (x^2 + 1) + noise); for a classifier with a symmetric prior it is uniform.
func TestPriorPredictive(t *testing.T) {
	m := newLinear(t, 50, 1)
	x := []float32{0, 2}
	pr, err := PriorPredictive(m, x, 4000, 1.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	for n, xv := range x {
		want := 2.25*(float64(xv)*float64(xv)+1) + 1
		if !near(float64(pr.Var[n]), want, 0.06*want) || math.Abs(float64(pr.Mean[n])) > 0.1*math.Sqrt(want) {
			t.Errorf("x = %v: prior N(%v, %v), want N(0, %v)", xv, pr.Mean[n], pr.Var[n], want)
		}
	}
	if pr.Draws != 4000 {
		t.Errorf("draws %d", pr.Draws)
	}
	c, err := models.NewWithBackend(backend.MustDefault(), models.Config{Options: models.Options{Arch: models.ArchMLP, Hidden: []int{8}}, InputShape: []int{3},
		NumClasses: 4, Clients: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := PriorPredictive(c, []float32{1, -1, 0.5, 0, 2, 1}, 3000, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pc.Probs {
		if math.Abs(float64(p)-0.25) > 0.04 {
			t.Errorf("prior class probability %d = %v, want about 1/4", i, p)
		}
	}
	if _, err := PriorPredictive(c, []float32{1, 2, 3}, 0, 1, 1); err == nil {
		t.Errorf("zero draws accepted")
	}
}
