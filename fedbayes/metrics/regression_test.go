package metrics

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestRegressionHandComputed(t *testing.T) {
	a, err := NewRegression([]float64{0.5, 0.9})
	mustNoErr(t, err)
	// Errors 1 and -2 with variances 1 and 4: both standardised errors are +-1.
	mustNoErr(t, a.Add([]float32{0, 1}, []float32{1, 4}, []float32{1, -1}))
	r, err := a.Result()
	mustNoErr(t, err)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"mse", r.MSE, 2.5}, {"nll", r.NLL, 1.7655121234846454}, {"mean var", r.MeanVariance, 2.5},
		{"ratio", r.VarianceRatio, 1}, {"z2", r.MeanZ2, 1},
		// |z| = 1: outside the 50% interval (z = 0.674), inside the 90% one (z = 1.645).
		{"cover 50", r.Coverage[0].Observed, 0}, {"cover 90", r.Coverage[1].Observed, 1},
		{"cal err", r.CalibrationError, (0.5 + 0.1) / 2},
	} {
		if !near(c.got, c.want, 1e-9) {
			t.Errorf("%s = %.12g, want %.12g", c.name, c.got, c.want)
		}
	}
	if !r.HasVariance || r.N != 2 {
		t.Errorf("%+v", r)
	}
	r, err = EvaluateRegression([]float32{1, 2}, nil, []float32{2, 2})
	mustNoErr(t, err)
	if r.HasVariance || r.MSE != 0.5 || r.Coverage != nil {
		t.Errorf("point predictions: %+v", r)
	}
}

// TestRegressionCalibratedGaussian draws targets from the predicted Gaussians: the calibration
// curve must be the diagonal, MeanZ2 and VarianceRatio near 1; with variances 4x too small
// (overconfident) coverage drops well below the levels.
func TestRegressionCalibratedGaussian(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 20000
	mean := make([]float32, n)
	variance := make([]float32, n)
	small := make([]float32, n)
	target := make([]float32, n)
	for i := range n {
		mean[i] = float32(rng.NormFloat64() * 3)
		sd := 0.5 + 2*rng.Float64()
		variance[i] = float32(sd * sd)
		small[i] = variance[i] / 4
		target[i] = mean[i] + float32(sd*rng.NormFloat64())
	}
	r, err := EvaluateRegression(mean, variance, target)
	mustNoErr(t, err)
	for _, p := range r.Coverage {
		if !near(p.Observed, p.Level, 0.015) {
			t.Errorf("calibrated: coverage at %v is %v", p.Level, p.Observed)
		}
	}
	if !near(r.MeanZ2, 1, 0.05) || r.CalibrationError > 0.01 {
		t.Errorf("calibrated: z2 %v, calibration error %v", r.MeanZ2, r.CalibrationError)
	}
	over, err := EvaluateRegression(mean, small, target)
	mustNoErr(t, err)
	if !near(over.MeanZ2, 4, 0.2) || over.CalibrationError < 0.15 || over.NLL <= r.NLL {
		t.Errorf("overconfident: z2 %v, calibration error %v, NLL %v vs %v", over.MeanZ2, over.CalibrationError, over.NLL, r.NLL)
	}
	// Streaming equals one-shot.
	a, err := NewRegression(nil)
	mustNoErr(t, err)
	for s := 0; s < n; s += 777 {
		e := min(n, s+777)
		mustNoErr(t, a.Add(mean[s:e], variance[s:e], target[s:e]))
	}
	got, err := a.Result()
	mustNoErr(t, err)
	if !reflect.DeepEqual(got, r) {
		t.Errorf("streamed result differs from one-shot")
	}
}

func TestRegressionErrors(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name             string
		mean, vr, target []float32
		want             string
	}{
		{"empty", nil, nil, nil, "empty"},
		{"lengths", []float32{1}, []float32{1, 1}, []float32{1}, "1 means, 2 variances and 1 targets"},
		{"zero variance", []float32{1}, []float32{0}, []float32{1}, "predictive variance is 0"},
		{"nan mean", []float32{nan}, []float32{1}, []float32{1}, "predictive mean is NaN"},
		{"inf target", []float32{1}, []float32{1}, []float32{float32(math.Inf(1))}, "target is +Inf"},
		{"mixing", []float32{1}, nil, []float32{1}, "some batches but not others"},
	} {
		a, err := NewRegression(nil)
		mustNoErr(t, err)
		if tc.name == "mixing" {
			mustNoErr(t, a.Add([]float32{1}, []float32{1}, []float32{1}))
		}
		err = a.Add(tc.mean, tc.vr, tc.target)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	for _, levels := range [][]float64{{}, {0}, {1}, {0.5, math.NaN()}} {
		if _, err := NewRegression(levels); err == nil {
			t.Errorf("NewRegression(%v) gave no error", levels)
		}
	}
	a, _ := NewRegression(nil)
	if _, err := a.Result(); err == nil {
		t.Errorf("empty Result gave no error")
	}
}
