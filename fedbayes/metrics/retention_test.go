package metrics

import (
	"strings"
	"testing"
)

func TestRetentionCurveHandComputed(t *testing.T) {
	scores := []float64{0.9, 0.1, 0.5, 0.3}
	correct := []bool{false, true, false, true}
	got, err := RetentionCurve(scores, correct, []float64{0.25, 0.5, 0.75, 1})
	mustNoErr(t, err)
	want := []RetentionPoint{
		{0.25, 1, 1, 0.1}, {0.5, 2, 1, 0.3}, {0.75, 3, 2.0 / 3, 0.5}, {1, 4, 0.5, 0.9},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("point %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Ties keep input order: with equal scores, the first inputs are retained first.
	got, err = RetentionCurve([]float64{1, 1, 1, 1}, []bool{true, false, false, false}, []float64{0.25, 0.01})
	mustNoErr(t, err)
	if got[0].Accuracy != 1 || got[1].Retained != 1 {
		t.Errorf("ties: %+v", got)
	}
}

func TestRetentionFromUncertainty(t *testing.T) {
	// Input 0: confident, correct. Input 1: the samples disagree (epistemic only); tie on p-bar goes
	// to class 0, wrong. Input 2: both samples flat (aleatoric only), wrong.
	samples := []float32{
		0.99, 0.01, 1, 0, 0.5, 0.5, // sample 0
		0.98, 0.02, 0, 1, 0.5, 0.5, // sample 1
	}
	r, err := EvaluateUncertainty(samples, []int32{0, 1, 1}, 2, 2, 10)
	mustNoErr(t, err)
	// Ranking, least uncertain first: entropy 0 (0.11), 1 (1), 2 (1, tie keeps order);
	// aleatoric 1 (0), 0 (0.03), 2 (0.5); epistemic and MI 2 (0), 0 (~0), 1 (0.5 / ln 2).
	for _, tc := range []struct {
		m    Measure
		want [3]float64
	}{
		{MeasureEntropy, [3]float64{1, 0.5, 1.0 / 3}},
		{MeasureAleatoric, [3]float64{0, 0.5, 1.0 / 3}},
		{MeasureEpistemic, [3]float64{0, 0.5, 1.0 / 3}},
		{MeasureMutualInformation, [3]float64{0, 0.5, 1.0 / 3}},
	} {
		pts, err := r.Retention(tc.m, []float64{1.0 / 3, 2.0 / 3, 1})
		mustNoErr(t, err)
		for i, p := range pts {
			if p.Accuracy != tc.want[i] || p.Retained != i+1 {
				t.Errorf("%v: point %d = %+v, want accuracy %v", tc.m, i, p, tc.want[i])
			}
		}
	}
	if pts, _ := r.Retention(MeasureEpistemic, []float64{1}); pts[0].Threshold != 0.5 {
		t.Errorf("epistemic threshold at 100%%: %+v", pts)
	}
}

func TestRetentionErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		scores    []float64
		correct   []bool
		fractions []float64
		want      string
	}{
		{"empty", nil, nil, nil, "no inputs"},
		{"length", []float64{1}, []bool{true, false}, nil, "1 scores but 2"},
		{"zero fraction", []float64{1}, []bool{true}, []float64{0}, "fraction 0 is 0"},
		{"big fraction", []float64{1}, []bool{true}, []float64{0.5, 1.5}, "fraction 1 is 1.5"},
		{"no fractions", []float64{1}, []bool{true}, []float64{}, "empty list"},
	} {
		_, err := RetentionCurve(tc.scores, tc.correct, tc.fractions)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if f := DefaultRetentionFractions(20); len(f) != 20 || f[0] != 0.05 || f[19] != 1 {
		t.Errorf("DefaultRetentionFractions(20) = %v", f)
	}
}
