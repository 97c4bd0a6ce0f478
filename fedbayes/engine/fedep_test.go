package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestFedSEPRunLearns runs FedSEP (fedep with one shared site, its default damping 2/10) on digits
// with 10 Dirichlet clients and checks that the global model learns and its variances moved, that a
// resumed run's state is the one shared site, and that a spec that asks it for what it cannot do is
// refused with the field named, as PVI's.
func TestFedSEPRunLearns(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Dataset.Subsample, s.Dataset.TestSubsample = 1500, 300
	s.Partition = PartitionSpec{Method: "dirichlet", Clients: 10, Alpha: 0.5, MinSize: 20}
	s.Aggregation = AggregationSpec{Rule: "fedep", Options: json.RawMessage(`{"shared_site": true}`)}
	s.Training.Rounds, s.Training.LocalEpochs, s.Training.LearningRate = 10, 2, 0.05
	s.Training.VarianceOptimizer, s.Training.VarianceLR = "adam", 0.01
	dir := t.TempDir()
	sum := runQuiet(t, s, dir, false)
	r := sum.Runs[0]
	if r.State != results.Completed {
		t.Fatalf("FedSEP run: %s (%s)", r.State, r.Reason)
	}
	t.Logf("FedSEP after 10 rounds: accuracy %.4f, nll %.4f, variances moved %.3f", r.Metrics[results.Accuracy], r.Metrics[results.NLL], r.Metrics[results.VarMoved])
	if acc := r.Metrics[results.Accuracy]; acc < 0.7 {
		t.Errorf("FedSEP's accuracy after 10 rounds: %v, want at least 0.7", acc)
	}
	if moved := r.Metrics[results.VarMoved]; !(moved > 0.5) {
		t.Errorf("FedSEP's global variances moved: %v of them, want most", moved)
	}
	c, ok, _, err := results.LatestCheckpoint(r.Dir)
	if err != nil || !ok {
		t.Fatalf("no checkpoint: %v", err)
	}
	_, _, state, err := decodeCheckpoint(c.Blob)
	if err != nil || state == nil {
		t.Fatalf("FedSEP's checkpoint holds no state (%v)", err)
	}
	for _, tc := range []struct {
		modify func(s *Spec)
		want   string
	}{
		{func(s *Spec) { s.Training.Prior = "previous-global" }, "training.prior"},
		{func(s *Spec) { s.Model.KLWeight = 0.1 }, "model.kl_weight"},
		{func(s *Spec) { s.Model.Kind = "deterministic" }, "model.kind"},
		{func(s *Spec) { s.Training.ProxMu = 0.1 }, "training.prox_mu"},
		{func(s *Spec) { s.Aggregation.Options = json.RawMessage(`{"shared_site": true, "damping": 0}`) }, ""},
		{func(s *Spec) { s.Aggregation.Options = json.RawMessage(`{"shared": true}`) }, "aggregation.options.shared"},
	} {
		bad := digitsSpec()
		bad.Aggregation = AggregationSpec{Rule: "fedep", Options: json.RawMessage(`{"shared_site": true}`)}
		tc.modify(bad)
		err := bad.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", bad.Aggregation.Options, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming it", tc.want, err)
		}
	}
}
