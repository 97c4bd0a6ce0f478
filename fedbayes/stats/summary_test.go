package stats

import (
	"math"
	"testing"
)

func TestSummarizeHandComputed(t *testing.T) {
	tests := []struct {
		name     string
		values   []float64
		mean, se float64
	}{
		// mean 2.5; deviations^2 2.25+0.25+0.25+2.25 = 5; s = sqrt(5/3); SE = s/2.
		{"1..4", []float64{1, 2, 3, 4}, 2.5, math.Sqrt(5.0/3) / 2},
		// mean 0.92; s = sqrt((0.0004+0+0.0004)/2) = 0.02; SE = 0.02/sqrt(3).
		{"three accuracies", []float64{0.90, 0.92, 0.94}, 0.92, 0.02 / math.Sqrt(3)},
		// Same spread far from zero: s = 1, SE = 1/sqrt(3) (a one-pass formula loses this).
		{"large offset", []float64{1e9 + 1, 1e9 + 2, 1e9 + 3}, 1e9 + 2, 1 / math.Sqrt(3)},
		{"equal values", []float64{0.5, 0.5}, 0.5, 0},
		{"two values", []float64{0, 1}, 0.5, 0.5}, // s = sqrt(0.5), SE = sqrt(0.5)/sqrt(2)
	}
	for _, tc := range tests {
		s, err := Summarize(tc.values)
		if err != nil {
			t.Fatal(err)
		}
		if s.N != len(tc.values) || math.Abs(s.Mean-tc.mean) > 1e-12*math.Max(1, math.Abs(tc.mean)) || math.Abs(s.SE-tc.se) > 1e-12 {
			t.Errorf("%s: got %+v, want mean %v SE %v", tc.name, s, tc.mean, tc.se)
		}
	}
	s, err := Summarize([]float64{0.7})
	if err != nil || s.Mean != 0.7 || !math.IsNaN(s.SE) || s.N != 1 {
		t.Errorf("one value: %+v %v; want mean 0.7, SE NaN", s, err)
	}
	s, _ = Summarize([]float64{1, math.Inf(1)})
	if !math.IsInf(s.Mean, 1) {
		t.Errorf("an infinite seed must not be averaged away: %+v", s)
	}
	if _, err := Summarize(nil); err == nil {
		t.Error("summary of nothing accepted")
	}
}
