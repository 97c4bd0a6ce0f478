package engine

import (
	"context"
	"path/filepath"
	"testing"

	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/report"
	"fedbayes.dev/fedbayes/results"
)

// fmnistHealthSpec is ozer2022-fmnist-c10-iid's text mode (the Bayesian-dense LeNet, SGD 0.01 with
// momentum 0.9 and weight decay 1e-5, batch 64, the variances with Adam from log sigma^2 = -6; package
// presets checks that the preset has these) cut to seconds: 2 IID clients of 4,800 Fashion-MNIST
// images (75 steps a round), 2 rounds, FVBWA-EAA.
func fmnistHealthSpec(t *testing.T) *Spec {
	t.Helper()
	return &Spec{
		Name:      "health",
		Budget:    "a test budget",
		Dataset:   DatasetSpec{Name: "fashion-mnist", Subsample: 9600, TestSubsample: 500},
		Partition: PartitionSpec{Method: "iid", Clients: 2, Participation: 1},
		Model: ModelSpec{Arch: "lenet", Kind: "bayesian", BayesianLayers: 3, Estimator: "local", VarParam: "logvar",
			PriorStd: 1, InitLogVar: models.DefaultInitLogVar},
		Aggregation: AggregationSpec{Rule: "EAA", Weighting: "size"},
		Training: TrainingSpec{Rounds: 2, LocalEpochs: 1, BatchSize: 64, Optimizer: "sgd", LearningRate: 0.01,
			Momentum: 0.9, WeightDecay: 1e-5, Prior: "fixed", VarianceOptimizer: string(models.Adam), VarianceLR: models.DefaultSpreadLearningRate},
		Evaluation: EvaluationSpec{Every: 1, Samples: 2, Bins: 100, NLLEpsilon: 1e-8, Fairness: "off"},
		Seeds:      []int64{0},
	}
}

// TestVariancesLearnOnFashionMNIST: on real Fashion-MNIST, with the paper presets' defaults (issue
// 33) the Bayesian LeNet's variances move (every one beyond 0.1 in log sigma^2 after 150 steps) and
// the run is not flagged frozen, while the former defaults (log sigma^2 = -10, SGD for every
// parameter) leave them at their initial value and RunHealth says so. With 2 clients and 2 rounds the
// clients still agree on their variances (the KL's pull is the same for both), so the new run is
// HealthUniform: rules differ only by their own arithmetic on a shared variance (docs/models.md measures when they
// do). It also checks that the engine records every health metric in every row.
func TestVariancesLearnOnFashionMNIST(t *testing.T) {
	requireFashionMNIST(t)
	if metrics.DefaultMovedThreshold != report.HealthThreshold {
		t.Fatalf("metrics.DefaultMovedThreshold %v and report.HealthThreshold %v differ", metrics.DefaultMovedThreshold, report.HealthThreshold)
	}
	fresh := fmnistHealthSpec(t)
	old := fmnistHealthSpec(t)
	old.Model.InitLogVar, old.Training.VarianceOptimizer, old.Training.VarianceLR = -10, "", 0
	for _, tc := range []struct {
		name  string
		spec  *Spec
		state report.HealthState
		moved float64 // least share of the global model's variances moved from their initial value
	}{
		{"defaults", fresh, report.HealthUniform, 0.9},
		{"before issue 33", old, report.HealthFrozen, 0},
	} {
		dir := t.TempDir()
		sum := runQuiet(t, tc.spec, dir, false)
		r := sum.Runs[0]
		run, err := results.ReadRun(filepath.Join(dir, results.RunName(r.Setting, r.Seed)))
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range run.Rows {
			for _, m := range results.HealthMetrics {
				if _, ok := row.Metrics[m]; !ok {
					t.Fatalf("%s: round %d does not record %s", tc.name, row.Round, m)
				}
			}
		}
		h := report.RunHealth(run)
		t.Logf("%s: %s: %s", tc.name, h.State, h.Message)
		if h.State != tc.state || h.Moved < tc.moved || (tc.moved == 0) != h.Frozen() {
			t.Errorf("%s: %s with %.3g of the variances moved, want %s with at least %.3g", tc.name, h.State, h.Moved, tc.state, tc.moved)
		}
	}
}

// TestProgressMetricsDropHealth checks that the progress line keeps the ordinary metrics and the share
// of variances moved, and leaves the other posterior-health metrics to the rows and `fedbayes status`.
func TestProgressMetricsDropHealth(t *testing.T) {
	m := map[string]float64{results.Accuracy: 0.8, results.Spread: 1.2}
	for i, k := range results.HealthMetrics {
		m[k] = float64(i)
	}
	got := progressMetrics(m)
	if len(got) != 3 || got[results.Accuracy] != 0.8 || got[results.Spread] != 1.2 || got[results.VarMoved] != m[results.VarMoved] {
		t.Errorf("progress metrics %v, want accuracy, spread and %s", got, results.VarMoved)
	}
	if len(m) != 2+len(results.HealthMetrics) {
		t.Errorf("progressMetrics changed its argument: %v", m)
	}
}

// TestHealthOfVariancesCollapsedToTheClamp checks a run whose rule collapses the variances onto the
// models' lower clamp (GAA divides the shared variance by the number of clients each round, and
// nothing in local training pulls it back at this learning rate): the clients' return to LogVarMin
// from a received value below it is the clamp, not local learning, so the run is CLAMPED, not UNIFORM
// with every variance "moved" by exactly log K.
func TestHealthOfVariancesCollapsedToTheClamp(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Partition = PartitionSpec{Method: "iid", Clients: 5}
	s.Training.Rounds, s.Training.LearningRate = 14, 0.05
	dir := t.TempDir()
	if _, err := Run(context.Background(), s, Options{Dir: dir, NoFigures: true}); err != nil {
		t.Fatal(err)
	}
	runs, _, err := results.Load(dir)
	if err != nil || len(runs) != 1 {
		t.Fatalf("load: %d runs, %v", len(runs), err)
	}
	last := runs[0].Rows[len(runs[0].Rows)-1].Metrics
	if last[results.VarClamped] < 0.99 || last[results.VarLocalShift] > 0.01 {
		t.Errorf("last round: %.3g of the variances at the clamp (want all), local shift %.3g (want about 0, not log 5 = 1.609)",
			last[results.VarClamped], last[results.VarLocalShift])
	}
	if h := report.RunHealth(runs[0]); h.State != report.HealthClamped {
		t.Errorf("health %s (%s), want %s", h.State, h.Message, report.HealthClamped)
	}
}
