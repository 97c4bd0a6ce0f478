package metrics

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestUncertaintyHandComputed(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		samples               []float32 // [M, 1, C]
		m, c                  int
		entropy, ale, epi, mi float64
		predicted             int32
	}{
		// Two confident samples that disagree: all uncertainty is epistemic.
		{"disagree", []float32{1, 0, 0, 1}, 2, 2, 1, 0, 0.5, math.Ln2, 0},
		// Two identical flat samples: all uncertainty is aleatoric.
		{"flat", []float32{0.5, 0.5, 0.5, 0.5}, 2, 2, 1, 0.5, 0, 0, 0},
		// p1 = (0.7, 0.2, 0.1), p2 = (0.5, 0.3, 0.2): p-bar = (0.6, 0.25, 0.15).
		{"three classes", []float32{0.7, 0.2, 0.1, 0.5, 0.3, 0.2}, 2, 3,
			0.8534739433956112, (0.46 + 0.62) / 2, 0.015, 0.02190117896849375, 0},
		// A single sample (a deterministic model): no epistemic part.
		{"one sample", []float32{0.1, 0.9}, 1, 2,
			-(0.1*math.Log(0.1) + 0.9*math.Log(0.9)) / math.Ln2, 0.18, 0, 0, 1},
	} {
		r, err := EvaluateUncertainty(tc.samples, []int32{0}, tc.c, tc.m, 10)
		mustNoErr(t, err)
		u := r.Inputs[0]
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"entropy", u.Entropy, tc.entropy}, {"aleatoric", u.Aleatoric, tc.ale},
			{"epistemic", u.Epistemic, tc.epi}, {"mi", u.MutualInformation, tc.mi},
			{"mean entropy", r.MeanEntropy, tc.entropy}, {"mean epistemic", r.MeanEpistemic, tc.epi}} {
			if !near(c.got, c.want, 1e-6) {
				t.Errorf("%s: %s = %.9g, want %.9g", tc.name, c.name, c.got, c.want)
			}
		}
		if u.Predicted != tc.predicted || u.Label != 0 || u.Correct() != (tc.predicted == 0) {
			t.Errorf("%s: predicted %d label %d", tc.name, u.Predicted, u.Label)
		}
	}
}

func TestDecomposeHandComputed(t *testing.T) {
	ale, epi, err := Decompose([]float32{0.7, 0.2, 0.1, 0.5, 0.3, 0.2}, 2, 3)
	mustNoErr(t, err)
	// Diagonal: mean of p(1-p); off-diagonal: -mean of p_i p_j. Epistemic: mean of (p - p-bar) outer products.
	wantA := []float64{
		0.23, -0.145, -0.085,
		-0.145, 0.185, -0.04,
		-0.085, -0.04, 0.125,
	}
	wantE := []float64{
		0.01, -0.005, -0.005,
		-0.005, 0.0025, 0.0025,
		-0.005, 0.0025, 0.0025,
	}
	for i := range wantA {
		if !near(ale[i], wantA[i], 1e-7) || !near(epi[i], wantE[i], 1e-7) {
			t.Errorf("entry %d: aleatoric %.9g (want %v), epistemic %.9g (want %v)", i, ale[i], wantA[i], epi[i], wantE[i])
		}
	}
	if _, _, err := Decompose([]float32{0.5, 0.5}, 2, 2); err == nil {
		t.Errorf("Decompose with too few values gave no error")
	}
	if _, _, err := Decompose([]float32{0.5, 0.6}, 1, 2); err == nil {
		t.Errorf("Decompose with unnormalised row gave no error")
	}
}

// TestUncertaintyIdentities checks, on random samples, that the traces agree with Decompose, that
// aleatoric + epistemic = sum(p-bar) - |p-bar|^2 (= 1 - |p-bar|^2 for exactly normalised rows), and that MI is non-negative and entropies are in [0, 1].
func TestUncertaintyIdentities(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const m, n, c = 8, 50, 5
	samples := randomProbs(rng, m*n, c, 2)
	labels := randomLabels(rng, n, c)
	r, err := EvaluateUncertainty(samples, labels, c, m, 0)
	mustNoErr(t, err)
	rows := make([]float32, m*c)
	for i, u := range r.Inputs {
		for s := range m {
			copy(rows[s*c:(s+1)*c], samples[(s*n+i)*c:(s*n+i+1)*c])
		}
		ale, epi, err := Decompose(rows, m, c)
		mustNoErr(t, err)
		var ta, te, sq, sum float64
		for k := range c {
			ta += ale[k*c+k]
			te += epi[k*c+k]
			var pb float64
			for s := range m {
				pb += float64(rows[s*c+k])
			}
			pb /= m
			sq += pb * pb
			sum += pb
		}
		if !near(ta, u.Aleatoric, 1e-12) || !near(te, u.Epistemic, 1e-12) || !near(ta+te, sum-sq, 1e-12) {
			t.Errorf("input %d: traces %v %v, scores %v %v, sum(pbar)-|pbar|^2 = %v", i, ta, te, u.Aleatoric, u.Epistemic, sum-sq)
		}
		if u.MutualInformation < 0 || u.Entropy < 0 || u.Entropy > 1+1e-12 {
			t.Errorf("input %d: MI %v entropy %v out of range", i, u.MutualInformation, u.Entropy)
		}
	}
}

func TestUncertaintyStreamingMatchesOneShot(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const m, n, c = 4, 300, 10
	samples := randomProbs(rng, m*n, c, 2)
	labels := randomLabels(rng, n, c)
	want, err := EvaluateUncertainty(samples, labels, c, m, 15)
	mustNoErr(t, err)
	// The mean predictive's classification metrics equal those of Classification on p-bar.
	for _, batch := range []int{1, 13, 300} {
		a, err := NewUncertainty(c, m, 15)
		mustNoErr(t, err)
		for s := 0; s < n; s += batch {
			e := min(n, s+batch)
			var part []float32
			for j := range m {
				part = append(part, samples[(j*n+s)*c:(j*n+e)*c]...)
			}
			mustNoErr(t, a.Add(part, labels[s:e]))
		}
		got, err := a.Result()
		mustNoErr(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("batch %d: streamed result differs from one-shot", batch)
		}
	}
}

func TestUncertaintyMeanPredictive(t *testing.T) {
	// Two samples of two inputs; the classification metrics are those of the averaged rows.
	samples := []float32{
		0.9, 0.1, 0.2, 0.8, // sample 0, inputs 0 and 1
		0.7, 0.3, 0.6, 0.4, // sample 1
	}
	r, err := EvaluateUncertainty(samples, []int32{0, 0}, 2, 2, 10)
	mustNoErr(t, err)
	want, err := EvaluateClassification([]float32{0.8, 0.2, 0.4, 0.6}, []int32{0, 0}, 2, 10)
	mustNoErr(t, err)
	if !near(r.Classification.NLL, want.NLL, 1e-7) || r.Classification.Accuracy != want.Accuracy ||
		!near(r.Classification.ECE, want.ECE, 1e-7) {
		t.Errorf("mean predictive metrics %+v, want %+v", r.Classification, want)
	}
}

func TestUncertaintyErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []float32
		labels  []int32
		want    string
	}{
		{"empty", nil, nil, "empty"},
		{"length", make([]float32, 6), []int32{0}, "want 4"},
		{"bad sample", []float32{0.5, 0.5, 0.5, 0.7}, []int32{0}, "MC sample 1"},
		{"label", []float32{0.5, 0.5, 0.5, 0.5}, []int32{5}, "label 5 out of range"},
	} {
		a, err := NewUncertainty(2, 2, 0)
		mustNoErr(t, err)
		err = a.Add(tc.samples, tc.labels)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if _, err := a.Result(); err == nil {
			t.Errorf("%s: Result after a rejected batch gave no error", tc.name)
		}
	}
	if _, err := NewUncertainty(2, 0, 0); err == nil {
		t.Errorf("NewUncertainty with M=0 gave no error")
	}
	if _, err := NewUncertainty(1, 3, 0); err == nil {
		t.Errorf("NewUncertainty with C=1 gave no error")
	}
	if _, err := Measure(9).Of(InputUncertainty{}); err == nil {
		t.Errorf("unknown measure gave no error")
	}
}
