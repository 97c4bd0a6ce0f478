package report

import (
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// healthRow is a row of round r with a spread and, when local >= 0, every health metric.
func healthRow(r int, spread, start, moved, clamped, local float64) results.Row {
	m := map[string]float64{results.Accuracy: 0.8, results.Spread: spread}
	if local >= 0 {
		m[results.SpreadStart], m[results.VarMoved], m[results.VarShift], m[results.VarClamped], m[results.VarLocalMoved], m[results.VarLocalShift], m[results.VarDisagreement] = start, moved, 0.01, clamped, local, local/10, local
	}
	return results.Row{Round: r, Metrics: m}
}

// TestRowHealth checks each verdict and that its message says what it means.
func TestRowHealth(t *testing.T) {
	adamRow := healthRow(10, 2.2, 1.378, 1, 0, 0)
	adamRow.Metrics[results.VarLocalShift], adamRow.Metrics[results.VarDisagreement] = 0.094, 0.2
	uniformRow := healthRow(10, 16.04, 10.19, 1, 0, 0)
	uniformRow.Metrics[results.VarLocalShift], uniformRow.Metrics[results.VarDisagreement] = 0.09, 0.0015
	arithRow := healthRow(10, 8.8, 1.378, 0.9, 0, 0.01)
	arithRow.Metrics[results.VarLocalShift] = 0.0016
	tests := []struct {
		name   string
		rows   []results.Row
		state  HealthState
		frozen bool
		msg    string
	}{
		{"deterministic", []results.Row{{Round: 5, Metrics: map[string]float64{results.Accuracy: 0.9}}}, HealthNotVariational, false, "not variational"},
		{"no rows", nil, HealthNotVariational, false, "not variational"},
		{"old record", []results.Row{healthRow(5, 1.38, 0, 0, 0, -1)}, HealthUnmeasured, false, "not recorded"},
		// Issue 33: spread 1.378 -> 1.390, nothing moved by local training.
		{"frozen at init", []results.Row{healthRow(5, 1.384, 1.378, 0, 0, 0), healthRow(10, 1.390, 1.378, 0, 0, 0.001)}, HealthFrozen, true,
			"the variances stayed at their initial value: rules differ here only by their own arithmetic on that shared value, not by how they weigh what the clients learned (local training moved at most 0.1 % of them by more than 0.1 in log σ² in a recorded round, 0.0001 on average; the spread went from 1.378 to 1.39)"},
		// BFL-P's AALV: log sigma^2 = -9 below the clamp at -8.
		{"clamped", []results.Row{healthRow(10, 2.267, 2.267, 0, 1, 0)}, HealthClamped, true, "100 % of the variances sit at the clamp bound"},
		// Learned in an early row is enough, and a clamp does not override it.
		{"learned", []results.Row{healthRow(5, 9, 10.2, 0.8, 0.6, 0.3), healthRow(10, 8.5, 10.2, 0.85, 0.6, 0.01)}, HealthLearned, false,
			"the variances learned: 85 % of the global model's variances moved by more than 0.1 in log σ² from their initial value, and the clients' differ by up to 0.3 in log σ²"},
		{"threshold", []results.Row{healthRow(10, 9, 10, 0.1, 0, MinDisagreement)}, HealthLearned, false, "learned"},
		// Adam from log sigma^2 = -6 on ozer2022-fmnist-c10-iid-medium's setting (docs/models.md).
		{"uniform", []results.Row{uniformRow}, HealthUniform, true, "the variances moved together: 100 % of the global model's variances moved by more than 0.1 in log σ² from their initial value, but the clients' differ by at most 0.0015"},
		// Adam from log sigma^2 = -10 (docs/models.md): every round moves all variances by 0.094, under
		// the threshold, and the global model by 0.94 after 10 rounds.
		{"slow but steady", []results.Row{adamRow}, HealthLearned, false, "100 % of the global model's variances moved"},
		{"rule's arithmetic", []results.Row{arithRow}, HealthFrozen, true, "arithmetic alone"},
	}
	for _, tc := range tests {
		h := RunHealth(results.Run{Rows: tc.rows})
		if h.State != tc.state || h.Flagged() != tc.frozen || !strings.Contains(h.Message, tc.msg) {
			t.Errorf("%s: got %s (flagged %v) %q, want %s (flagged %v) containing %q", tc.name, h.State, h.Flagged(), h.Message, tc.state, tc.frozen, tc.msg)
		}
		// A frozen run says what would move its variances, and that it is the optimiser's step.
		if hint := strings.Contains(h.Message, `variance_optimizer "adam"`) && strings.Contains(h.Message, "rather than by the data"); hint != (h.State == HealthFrozen) {
			t.Errorf("%s (%s): the variance-optimizer hint present %v", tc.name, h.State, hint)
		}
	}
	h := RowHealth([]results.Row{healthRow(5, 9, 10.2, 0.8, 0, 0.3), healthRow(10, 8.5, 10.2, 0.85, 0.01, 0.2)})
	if h.Rows != 2 || h.LocalMovedMax != 0.3 || h.Moved != 0.85 || h.Clamped != 0.01 || h.SpreadStart != 10.2 || h.SpreadEnd != 8.5 {
		t.Errorf("figures: %+v", h)
	}
	if h := RowHealth(nil); !math.IsNaN(h.SpreadEnd) || h.Short() != "" {
		t.Errorf("no rows: %+v, short %q", h, h.Short())
	}
}

// TestHealthShort checks the tags.
func TestHealthShort(t *testing.T) {
	for s, want := range map[HealthState]string{HealthLearned: "learned", HealthFrozen: "FROZEN", HealthClamped: "CLAMPED", HealthUniform: "UNIFORM", HealthUnmeasured: "unmeasured", HealthNotVariational: ""} {
		if got := (Health{State: s}).Short(); got != want {
			t.Errorf("%s: Short %q, want %q", s, got, want)
		}
	}
}

func TestAtMostSaysNoneForZero(t *testing.T) {
	for _, c := range []struct {
		share float64
		want  string
	}{{0, "none"}, {0.001, "at most 0.1 %"}, {0.99, "at most 99 %"}} {
		if got := AtMost(c.share); got != c.want {
			t.Errorf("AtMost(%g) = %q, want %q", c.share, got, c.want)
		}
	}
}
