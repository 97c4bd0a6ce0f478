package results

import (
	"math"
	"slices"
	"testing"
)

// TestMetricsDeclaredOnce: every metric is declared once, the export and progress ranks are unique,
// and the orders, labels and ranges read from Metrics are the ones the reports, figures and checks
// show.
func TestMetricsDeclaredOnce(t *testing.T) {
	seen := map[string]bool{}
	exports, lines := map[int]string{}, map[int]string{}
	for _, m := range Metrics {
		if seen[m.Name] {
			t.Errorf("metric %q declared twice", m.Name)
		}
		seen[m.Name] = true
		if prev, ok := exports[m.Export]; ok && m.Export > 0 {
			t.Errorf("export rank %d of %q and %q", m.Export, prev, m.Name)
		}
		exports[m.Export] = m.Name
		if prev, ok := lines[m.Line]; ok && m.Line > 0 {
			t.Errorf("line rank %d of %q and %q", m.Line, prev, m.Name)
		}
		lines[m.Line] = m.Name
		if m.Range != nil && !(m.Range.Lo < m.Range.Hi) {
			t.Errorf("%q: empty range %+v", m.Name, *m.Range)
		}
	}
	if got, want := RankedMetrics(func(m Metric) int { return m.Export }), []string{Accuracy, NLL, ECE, Brier, MSE, Spread, WeightedAccuracy, WorstAccuracy, Loss}; !slices.Equal(got, want) {
		t.Errorf("export order %v, want %v", got, want)
	}
	if got, want := RankedMetrics(func(m Metric) int { return m.Line }), []string{Accuracy, MSE, NLL, ECE, Loss}; !slices.Equal(got, want) {
		t.Errorf("progress order %v, want %v", got, want)
	}
	for name, want := range map[string]string{NLL: "test NLL (nats)", Accuracy: "test accuracy", VarDisagreement: "clients' sd of log σ²", Brier: Brier, "zeta": "zeta"} {
		if got := MetricOf(name).Label(); got != want {
			t.Errorf("label of %q: %q, want %q", name, got, want)
		}
	}
	if m := MetricOf("zeta"); m.Standard() || m.Range != nil || m.Better != NoDirection {
		t.Errorf("unknown metric declared: %+v", m)
	}
	for name, want := range map[string]Direction{Accuracy: HigherIsBetter, "client_accuracy_p10": HigherIsBetter, NLL: LowerIsBetter, "client_nll_max": LowerIsBetter, "bytes_sent": LowerIsBetter, Spread: NoDirection} {
		if m := MetricOf(name); !m.Standard() || m.Better != want {
			t.Errorf("%q: direction %v (standard %v), want %v", name, m.Better, m.Standard(), want)
		}
	}
	for _, tc := range []struct {
		metric string
		v      float64
		ok     bool
	}{
		{"client_ece_median", 0.5, true}, {"client_ece_median", 1.5, false},
		{"client_nll_p90", math.Inf(1), true}, {"client_nll_p90", -0.1, false},
		{Brier, 2, true}, {Brier, 2.01, false}, {NLL, -3, true}, {MSE, math.Inf(1), true},
		{Spread, math.Inf(1), false}, {"time_per_round", -1, true}, {"zeta", math.NaN(), true},
	} {
		if err := checkValue(tc.metric, tc.v); (err == nil) != tc.ok {
			t.Errorf("checkValue(%s, %v) = %v, want ok %v", tc.metric, tc.v, err, tc.ok)
		}
	}
}
