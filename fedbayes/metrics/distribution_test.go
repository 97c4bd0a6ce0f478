package metrics

import (
	"math"
	"strings"
	"testing"
)

// TestDistributionHandComputed: five order statistics against numpy.quantile's linear method,
// worked by hand.
func TestDistributionHandComputed(t *testing.T) {
	for _, c := range []struct {
		name   string
		values []float64
		want   Distribution
	}{
		// Positions 0.1 x 4 = 0.4, 2, 3.6 in 1 2 3 4 5 (given shuffled).
		{"five", []float64{3, 1, 5, 2, 4}, Distribution{5, 1, 1.4, 3, 4.6, 5}},
		{"one", []float64{0.7}, Distribution{1, 0.7, 0.7, 0.7, 0.7, 0.7}},
		// Positions 0.1, 0.5, 0.9 between 0.2 and 0.6.
		{"two", []float64{0.6, 0.2}, Distribution{2, 0.2, 0.24, 0.4, 0.56, 0.6}},
		// Ten values 0..9: positions 0.9, 4.5, 8.1.
		{"ten", []float64{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, Distribution{10, 0, 0.9, 4.5, 8.1, 9}},
		// An infinite NLL: the 0.9 quantile between 2 and +Inf is +Inf, the max +Inf, no NaN.
		{"infinite", []float64{1, 2, math.Inf(1), math.Inf(1)}, Distribution{4, 1, 1.3, 2 + 0.5*math.Inf(1), math.Inf(1), math.Inf(1)}},
	} {
		got, err := DistributionOf(c.values)
		mustNoErr(t, err)
		w := c.want
		for _, f := range []struct {
			name      string
			got, want float64
		}{{"min", got.Min, w.Min}, {"p10", got.P10, w.P10}, {"median", got.Median, w.Median}, {"p90", got.P90, w.P90}, {"max", got.Max, w.Max}} {
			if !(f.got == f.want || near(f.got, f.want, 1e-12)) {
				t.Errorf("%s: %s %v, want %v", c.name, f.name, f.got, f.want)
			}
		}
		if got.Clients != w.Clients {
			t.Errorf("%s: %d clients, want %d", c.name, got.Clients, w.Clients)
		}
	}
}

// TestDistributionRefuses: no values, a NaN.
func TestDistributionRefuses(t *testing.T) {
	if _, err := DistributionOf(nil); err == nil || !strings.Contains(err.Error(), "no values") {
		t.Errorf("empty: %v", err)
	}
	if _, err := DistributionOf([]float64{1, math.NaN()}); err == nil || !strings.Contains(err.Error(), "value 1 is NaN") {
		t.Errorf("NaN: %v", err)
	}
}

// TestQuantileAgreesWithWorstPercentile: FairnessResult.WorstPercentile is the 0.1 quantile.
func TestQuantileAgreesWithWorstPercentile(t *testing.T) {
	acc := []float64{0.9, 0.1, 0.35, 0.8, 0.55, 0.2, 0.61}
	r, err := FairnessFromAccuracies(acc, nil)
	mustNoErr(t, err)
	d, err := DistributionOf(acc)
	mustNoErr(t, err)
	if d.P10 != r.WorstPercentile {
		t.Errorf("P10 %v, WorstPercentile %v", d.P10, r.WorstPercentile)
	}
}
