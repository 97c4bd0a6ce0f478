package notebook

import (
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestHealthLines checks the lines a notebook prints beside rules that combine variances: one per
// group with a flagged run, none for deterministic groups, and a count when nothing is flagged.
func TestHealthLines(t *testing.T) {
	row := func(spread, local, disagreement float64) results.Row {
		return results.Row{Round: 5, Metrics: map[string]float64{results.Accuracy: 0.8, results.Spread: spread, results.SpreadStart: 1.378,
			results.VarMoved: local, results.VarShift: local, results.VarClamped: 0, results.VarLocalMoved: local, results.VarLocalShift: local,
			results.VarDisagreement: disagreement}}
	}
	run := func(rule string, seed int64, r results.Row) results.Run {
		return results.Run{Meta: results.Meta{Setting: "s-" + rule, Seed: seed, Labels: map[string]string{"rule": rule}},
			Status: results.Status{State: results.Completed}, Rows: []results.Row{r}}
	}
	fedavg := results.Row{Round: 5, Metrics: map[string]float64{results.Accuracy: 0.8}}
	frozen, learned := row(1.39, 0, 0), row(3, 0.9, 0.3)
	tests := []struct {
		name string
		runs []results.Run
		want []string
	}{
		{"one rule frozen", []results.Run{run("EAA", 0, frozen), run("EAA", 1, frozen), run("GAA", 0, learned), run("FedAvg", 0, fedavg)},
			[]string{"rule=EAA: FROZEN: the variances stayed at their initial value"}},
		{"none flagged", []results.Run{run("GAA", 0, learned), run("FedAvg", 0, fedavg)},
			[]string{"posterior health: no variational run is flagged: 1 learned their variances"}},
		{"deterministic only", []results.Run{run("FedAvg", 0, fedavg)}, nil},
	}
	for _, tc := range tests {
		got, err := HealthLines(tc.runs, "rule")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d lines %q, want %d", tc.name, len(got), got, len(tc.want))
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], tc.want[i]) {
				t.Errorf("%s: line %q, want it to start with %q", tc.name, got[i], tc.want[i])
			}
		}
	}
}
