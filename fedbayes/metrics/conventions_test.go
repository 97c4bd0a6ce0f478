package metrics

import (
	"math"
	"testing"
)

// TestNLLEpsilonAndBins checks the two conventions BFL-P's scores.py uses against hand-computed values:
// NLL with log(p + 1e-8) instead of log(max(p, 1e-12)), and ECE with more bins.
func TestNLLEpsilonAndBins(t *testing.T) {
	// Example 0: confidence 0.91 on class 0, label 0 (hit). Example 1: confidence 0.95 on class 0,
	// label 1 (miss, p_y = 0.05). Example 2: p_y = 0 exactly (miss, confidence 1).
	probs := []float32{0.91, 0.09, 0.95, 0.05, 1, 0}
	labels := []int32{0, 1, 1}
	cases := []struct {
		name    string
		bins    int
		eps     float64
		wantNLL float64
		wantECE float64
	}{
		// 10 bins: 0.91 and 0.95 share bin 9 with 1.0: |1 hit - (0.91 + 0.95 + 1)| / 3.
		{"default", 10, 0, (-math.Log(0.91) - math.Log(0.05) - math.Log(1e-12)) / 3, math.Abs(1-(0.91+0.95+1)) / 3},
		// 100 bins: three separate bins: (0.09 + 0.95 + 1) / 3.
		{"bfl-p", 100, 1e-8, (-math.Log(0.91+1e-8) - math.Log(0.05+1e-8) - math.Log(1e-8)) / 3, (0.09 + 0.95 + 1) / 3},
	}
	for _, c := range cases {
		a, err := NewClassification(2, c.bins)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.SetNLLEpsilon(c.eps); err != nil {
			t.Fatal(err)
		}
		if err := a.Add(probs, labels); err != nil {
			t.Fatal(err)
		}
		r, err := a.Result()
		if err != nil {
			t.Fatal(err)
		}
		// float32 inputs: 0.91 and 0.95 are not exact, so compare to 1e-6.
		if math.Abs(r.NLL-c.wantNLL) > 1e-6 {
			t.Errorf("%s: NLL %v, want %v", c.name, r.NLL, c.wantNLL)
		}
		if math.Abs(r.ECE-c.wantECE) > 1e-6 {
			t.Errorf("%s: ECE %v, want %v", c.name, r.ECE, c.wantECE)
		}
	}
	a, _ := NewClassification(2, 0)
	for _, eps := range []float64{-1e-8, 1, math.NaN()} {
		if err := a.SetNLLEpsilon(eps); err == nil {
			t.Errorf("SetNLLEpsilon(%v): want an error", eps)
		}
	}
	_ = a.Add(probs, labels)
	if err := a.SetNLLEpsilon(1e-8); err == nil {
		t.Error("SetNLLEpsilon after Add: want an error")
	}
}

// TestWorstReadings checks the two readings of "worst 10%" on 12 clients by hand: the mean of the
// lowest ceil(1.2) = 2 clients, (0.3 + 0.5) / 2 = 0.4, and the 10th percentile at position
// 0.1 x 11 = 1.1 of the sorted accuracies, 0.5 + 0.1 (0.55 - 0.5) = 0.505.
func TestWorstReadings(t *testing.T) {
	acc := []float64{0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 0.55, 0.65, 0.75, 0.85, 0.95, 0.3}
	r, err := FairnessFromAccuracies(acc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.WorstClients != 2 || math.Abs(r.Worst-0.4) > 1e-12 {
		t.Errorf("worst clients %d, mean %v; want 2 and 0.4", r.WorstClients, r.Worst)
	}
	if math.Abs(r.WorstPercentile-0.505) > 1e-12 {
		t.Errorf("10th percentile %v, want 0.505", r.WorstPercentile)
	}
	one, err := FairnessFromAccuracies([]float64{0.7}, nil)
	if err != nil || one.WorstPercentile != 0.7 || one.Worst != 0.7 {
		t.Errorf("one client: %+v, %v", one, err)
	}
}
