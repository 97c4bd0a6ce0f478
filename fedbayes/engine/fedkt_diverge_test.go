package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
)

// TestFedKTTeachersNaNDiverges: FedKT's teachers trained at a step size of 1e30 give a NaN loss,
// which marks that run diverged at round 1 with the server step's reason (a run failure stopped the
// sweep before); the sweep goes on to the setting at 0.05, which completes, and the summary counts
// one diverged run.
func TestFedKTTeachersNaNDiverges(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Dataset.ServerFraction = 0.2
	s.Model.Kind = "deterministic"
	s.Training.Rounds = 1
	s.Aggregation = AggregationSpec{Rule: strategy.FedKTName, Options: json.RawMessage(`{"students": 1, "teachers": 2, "local": {"epochs": 2}, "distill": {"epochs": 2}}`)}
	for _, lr := range []string{"1e30", "0.05"} {
		s.Variants = append(s.Variants, Variant{Label: "lr-" + lr, Set: map[string]json.RawMessage{"aggregation.options.local.learning_rate": json.RawMessage(lr)}})
	}
	sum, err := Run(context.Background(), s, Options{Dir: t.TempDir(), Progress: progress.Discard, NoFigures: true})
	if err != nil {
		t.Fatalf("the sweep stopped: %v", err)
	}
	if len(sum.Runs) != 2 || sum.Diverged() != 1 {
		t.Fatalf("runs %+v; want 2, one diverged", sum.Runs)
	}
	if r := sum.Runs[0]; r.State != results.Diverged || r.Round != 1 || !strings.Contains(r.Reason, "server step (fedkt): ") || !strings.Contains(r.Reason, "teachers") {
		t.Errorf("lr 1e30: %s at round %d (%s); want diverged at round 1 in the teachers", r.State, r.Round, r.Reason)
	}
	if r := sum.Runs[1]; r.State != results.Completed {
		t.Errorf("lr 0.05: %s (%s)", r.State, r.Reason)
	}
}
