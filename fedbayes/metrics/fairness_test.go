package metrics

import (
	"math"
	"strings"
	"testing"
)

func TestFairnessHandComputed(t *testing.T) {
	ten := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}
	for _, tc := range []struct {
		name       string
		acc, w     []float64
		avg, worst float64
		nWorst     int
		spread     float64
	}{
		{"two clients sized 1:3", []float64{0.5, 0.9}, []float64{100, 300}, 0.8, 0.5, 1, 0.4},
		{"equal weights", []float64{0.5, 0.9}, nil, 0.7, 0.5, 1, 0.4},
		{"ten clients: worst 1", ten, nil, 0.55, 0.1, 1, 0.9},
		{"eleven clients: worst 2", append([]float64{0.05}, ten...), nil, (0.05 + 5.5) / 11, 0.075, 2, 0.95},
		{"zero weight ignored", []float64{0.2, 0.6}, []float64{0, 5}, 0.6, 0.2, 1, 0.4},
	} {
		r, err := FairnessFromAccuracies(tc.acc, tc.w)
		mustNoErr(t, err)
		if !near(r.WeightedAverage, tc.avg, 1e-12) || !near(r.Worst, tc.worst, 1e-12) ||
			r.WorstClients != tc.nWorst || !near(r.Spread, tc.spread, 1e-12) || r.Clients != len(tc.acc) {
			t.Errorf("%s: %+v", tc.name, r)
		}
	}
	r, err := FairnessFromAccuracies([]float64{0.5, 0.9}, nil)
	mustNoErr(t, err)
	if !near(r.Std, 0.2, 1e-12) || r.Min != 0.5 || r.Max != 0.9 {
		t.Errorf("std/min/max: %+v", r)
	}
}

func TestFairnessAccumulator(t *testing.T) {
	a, err := NewFairness(3)
	mustNoErr(t, err)
	mustNoErr(t, a.Add(0, 3, 4))
	mustNoErr(t, a.AddPredictions(0, []int32{1, 2}, []int32{1, 0})) // client 0: 4 of 6
	mustNoErr(t, a.Add(1, 1, 2))
	if _, err := a.Result(nil); err == nil || !strings.Contains(err.Error(), "client 2 has no evaluated examples") {
		t.Errorf("missing client: %v", err)
	}
	mustNoErr(t, a.Add(2, 9, 10))
	r, err := a.Result([]float64{6, 2, 10})
	mustNoErr(t, err)
	if want := (4 + 1 + 9) / 18.0; !near(r.WeightedAverage, want, 1e-12) || !near(r.Worst, 0.5, 1e-12) {
		t.Errorf("%+v, want average %v", r, want)
	}
	for _, bad := range [][3]int{{3, 0, 1}, {-1, 0, 1}, {0, 2, 1}, {0, -1, 1}} {
		if err := a.Add(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("Add%v gave no error", bad)
		}
	}
	if err := a.AddPredictions(0, []int32{1}, nil); err == nil {
		t.Errorf("AddPredictions with mismatched lengths gave no error")
	}
	if _, err := NewFairness(0); err == nil {
		t.Errorf("NewFairness(0) gave no error")
	}
}

func TestFairnessErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		acc, w []float64
		want   string
	}{
		{"empty", nil, nil, "no clients"},
		{"accuracy percent", []float64{90}, nil, "client 0 is 90"},
		{"nan", []float64{math.NaN()}, nil, "NaN"},
		{"weights length", []float64{0.5}, []float64{1, 2}, "2 weights for 1 clients"},
		{"negative weight", []float64{0.5, 0.5}, []float64{1, -2}, "weight of client 1"},
		{"zero weights", []float64{0.5}, []float64{0}, "all client weights are zero"},
	} {
		_, err := FairnessFromAccuracies(tc.acc, tc.w)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
