package predictive

import (
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// scalarSamples builds S stacked posteriors of one parameter "w" of shape [K, 1] from values[s][k].
func scalarSamples(values [][]float32) []*posterior.Posterior {
	var out []*posterior.Posterior
	for _, v := range values {
		out = append(out, &posterior.Posterior{Params: []posterior.Param{
			{Name: "w", Mean: tensors.FromFlatDataAndDimensions(append([]float32(nil), v...), len(v), 1)}}})
	}
	return out
}

func TestEPMCMCHandComputed(t *testing.T) {
	// Client 0 samples {1, 3}: mean 2, variance 2; client 1 samples {5, 7}: mean 6, variance 2.
	// Prior N(0, 2^2): precision 1/2 + 1/2 - 1/4 = 0.75, mean (2/2 + 6/2) / 0.75.
	g, err := EPMCMC(scalarSamples([][]float32{{1, 5}, {3, 7}}), 2)
	if err != nil {
		t.Fatal(err)
	}
	mean := tensors.MustCopyFlatData[float32](g.Params[0].Mean)
	lv := tensors.MustCopyFlatData[float32](g.Params[0].LogVar)
	if len(mean) != 1 || !near(float64(mean[0]), 4/0.75, 1e-5) || !near(float64(lv[0]), -math.Log(0.75), 1e-6) {
		t.Errorf("EP-MCMC N(%v, exp(%v)), want N(%v, 1/0.75)", mean, lv, 4/0.75)
	}
	// A parameter that never moved gets the variance floor, and dominates the product.
	g, err = EPMCMC(scalarSamples([][]float32{{1, 5}, {1, 7}}), 1e4)
	if err != nil {
		t.Fatal(err)
	}
	mean = tensors.MustCopyFlatData[float32](g.Params[0].Mean)
	if !near(float64(mean[0]), 1, 1e-6) {
		t.Errorf("floored client should dominate: mean %v", mean)
	}
	tests := []struct {
		samples []*posterior.Posterior
		std     float64
		want    string
	}{
		{scalarSamples([][]float32{{1, 5}}), 1, "at least 2 samples"},
		{scalarSamples([][]float32{{1, 5}, {3, 7}}), 0, "priorStd"},
		{scalarSamples([][]float32{{1, 5}, {3, 7}}), 1, "precision"},
	}
	for _, tc := range tests {
		if _, err := EPMCMC(tc.samples, tc.std); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

func TestDrawModels(t *testing.T) {
	g := &posterior.Posterior{Params: []posterior.Param{
		{Name: "a", Mean: tensors.FromFlatDataAndDimensions([]float32{2, -1}, 2), LogVar: tensors.FromFlatDataAndDimensions([]float32{float32(math.Log(0.25)), 0}, 2)},
		{Name: "b", Mean: tensors.FromFlatDataAndDimensions([]float32{7}, 1)},
	}}
	const M = 20000
	st, err := DrawModels(g, M, 5)
	if err != nil {
		t.Fatal(err)
	}
	f, err := flatten(st)
	if err != nil {
		t.Fatal(err)
	}
	if f.dims[0][0] != M || f.dims[0][1] != 2 || f.dims[1][0] != M {
		t.Fatalf("dims %v", f.dims)
	}
	for j, want := range [][2]float64{{2, 0.25}, {-1, 1}} {
		var s, s2 float64
		for m := 0; m < M; m++ {
			v := float64(f.values[0][m*2+j])
			s += v
			s2 += v * v
		}
		mean, variance := s/M, s2/M-(s/M)*(s/M)
		if !near(mean, want[0], 0.03) || !near(variance, want[1], 0.05*want[1]) {
			t.Errorf("element %d: mean %v variance %v, want %v", j, mean, variance, want)
		}
	}
	for m := 0; m < M; m++ {
		if f.values[1][m] != 7 {
			t.Fatalf("deterministic parameter changed: %v", f.values[1][m])
		}
	}
	again, _ := DrawModels(g, M, 5)
	h, _ := flatten(again)
	if h.values[0][123] != f.values[0][123] {
		t.Errorf("same seed, different draws")
	}
	if _, err := DrawModels(g, 0, 1); err == nil {
		t.Errorf("M = 0 accepted")
	}
}

func TestFedAvgModel(t *testing.T) {
	stacked := scalarSamples([][]float32{{1, 5}})[0]
	g, err := FedAvgModel(stacked, []float64{30, 10})
	if err != nil {
		t.Fatal(err)
	}
	v := tensors.MustCopyFlatData[float32](g.Params[0].Mean)
	if len(v) != 1 || !near(float64(v[0]), 0.75*1+0.25*5, 1e-6) || g.Params[0].LogVar != nil {
		t.Errorf("FedAvg %v, want 2", v)
	}
}

func TestLogitAverage(t *testing.T) {
	// Geometric mean of [0.8, 0.2] and [0.5, 0.5]: proportional to [sqrt(0.4), sqrt(0.1)] = [2, 1] / 3.
	got, err := LogitAverage([][]float32{{0.8, 0.2}, {0.5, 0.5}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !near(float64(got[0]), 2.0/3, 1e-6) || !near(float64(got[1]), 1.0/3, 1e-6) {
		t.Errorf("logit average %v", got)
	}
	if _, err := LogitAverage([][]float32{{0.8, 0.2}, {0.5}}, 2); err == nil {
		t.Errorf("mismatched clients accepted")
	}
}
