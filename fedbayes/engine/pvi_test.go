package engine

import (
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestPVIRunLearns runs partitioned VI on digits with 10 Dirichlet clients (its default damping 2/10)
// and checks that the global model learns (accuracy well above chance), that its variances moved
// (the clients' KL terms are against their cavities, not the fixed prior), and that a spec that
// asks PVI for what it cannot do is refused with the field named.
func TestPVIRunLearns(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Dataset.Subsample, s.Dataset.TestSubsample = 1500, 300
	s.Partition = PartitionSpec{Method: "dirichlet", Clients: 10, Alpha: 0.5, MinSize: 20}
	s.Aggregation = AggregationSpec{Rule: "pvi"}
	s.Training.Rounds, s.Training.LocalEpochs, s.Training.LearningRate = 10, 2, 0.05
	s.Training.VarianceOptimizer, s.Training.VarianceLR = "adam", 0.01
	sum := runQuiet(t, s, t.TempDir(), false)
	r := sum.Runs[0]
	if r.State != results.Completed {
		t.Fatalf("PVI run: %s (%s)", r.State, r.Reason)
	}
	t.Logf("PVI after 10 rounds: accuracy %.4f, nll %.4f, variances moved %.3f", r.Metrics[results.Accuracy], r.Metrics[results.NLL], r.Metrics[results.VarMoved])
	if acc := r.Metrics[results.Accuracy]; acc < 0.7 {
		t.Errorf("PVI's accuracy after 10 rounds: %v, want at least 0.7", acc)
	}
	if moved := r.Metrics[results.VarMoved]; !(moved > 0.5) {
		t.Errorf("PVI's global variances moved: %v of them, want most", moved)
	}
	for _, tc := range []struct {
		modify func(s *Spec)
		want   string
	}{
		{func(s *Spec) { s.Training.Prior = "previous-global" }, "training.prior"},
		{func(s *Spec) { s.Model.KLWeight = 0.1 }, "model.kl_weight"},
		{func(s *Spec) { s.Model.Kind = "deterministic" }, "model.kind"},
		{func(s *Spec) { s.Training.ProxMu = 0.1 }, "training.prox_mu"},
	} {
		bad := digitsSpec()
		bad.Aggregation = AggregationSpec{Rule: "pvi"}
		tc.modify(bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming it", tc.want, err)
		}
	}
}
