package engine

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
)

// diabetesSpec is one round on the diabetes set (Hasan (2023), Sec. 4.4) at a test's budget: 5
// clients sorted by the first feature with h = 0.5, a server set, an MLP with a Gaussian likelihood.
func diabetesSpec() *Spec {
	return &Spec{
		Name:        "diabetes",
		Dataset:     DatasetSpec{Name: "diabetes", ServerFraction: 0.2},
		Partition:   PartitionSpec{Method: "heterogeneity", Clients: 5, H: 0.5},
		Model:       ModelSpec{Kind: "deterministic", Hidden: []int{16}},
		Aggregation: AggregationSpec{Rule: "FedAvg", Weighting: "size"},
		Training:    TrainingSpec{Rounds: 1, LocalEpochs: 20, BatchSize: 16, LearningRate: 0.01, Momentum: 0.9},
		Seeds:       []int64{1},
	}
}

// TestRegressionStrategies runs regression through the engine: FedAvg and GAA on optimised clients,
// and on sampling clients (cSGHMC) FedPA, EP-MCMC, the BCM, the mixture and beta-PredBayes with
// Gaussian predictives (Hasan (2023), Eqs. 3.4-3.5, 4.6-4.8). Every run records mse and nll on the
// standardised targets and beats the constant predictor (mse 1 on the training set's scale).
func TestRegressionStrategies(t *testing.T) {
	requireDiabetes(t)
	raw := func(v string) json.RawMessage { return json.RawMessage(v) }
	s := diabetesSpec()
	sampler := `{"epochs": 20, "cycles": 2, "samples_per_cycle": 2, "batch_size": 16, "learning_rate": 0.02}`
	s.Variants = []Variant{
		{Label: "fedavg", Set: map[string]json.RawMessage{"aggregation.rule": raw(`"FedAvg"`)}},
		{Label: "gaa", Set: map[string]json.RawMessage{"model.kind": raw(`"bayesian"`), "aggregation.rule": raw(`"GAA"`)}},
	}
	for _, rule := range []string{"fedpa", "ep-mcmc", "bcm", "mixture", "beta-predbayes"} {
		v := Variant{Label: rule, Set: map[string]json.RawMessage{"aggregation.rule": raw(`"` + rule + `"`), "training.sampler": raw(sampler)}}
		if rule == "fedpa" {
			v.Set["aggregation.options"] = raw(`{"server_lr": 0.5}`) // as the fmnist presets of Hasan's runner
		}
		s.Variants = append(s.Variants, v)
	}
	dir := t.TempDir()
	sum := runQuiet(t, s, dir, false)
	if len(sum.Runs) != len(s.Variants) {
		t.Fatalf("%d runs, want %d", len(sum.Runs), len(s.Variants))
	}
	for _, r := range sum.Runs {
		if r.State != results.Completed {
			t.Fatalf("%s: %s %s", r.Setting, r.State, r.Reason)
		}
		mse, nll := r.Metrics[results.MSE], r.Metrics[results.NLL]
		t.Logf("%s: mse %.3f, nll %.3f, beta %v", r.Setting, mse, nll, r.Metrics[strategy.MetricBeta])
		if !(mse > 0 && mse < 0.9) || math.IsNaN(nll) || math.IsInf(nll, 0) {
			t.Errorf("%s: mse %v, nll %v; want mse below the constant predictor's and a finite nll", r.Setting, mse, nll)
		}
		if _, ok := r.Metrics[results.Accuracy]; ok {
			t.Errorf("%s: an accuracy recorded for regression", r.Setting)
		}
		raw, err := os.ReadFile(filepath.Join(dir, results.RunName(r.Setting, 1), predictive.BetaFile))
		if r.Labels["variant"] != "beta-predbayes" {
			if err == nil {
				t.Errorf("%s: a %s written", r.Setting, predictive.BetaFile)
			}
			continue
		}
		var fit predictive.BetaFit
		if err != nil || json.Unmarshal(raw, &fit) != nil || fit.Beta != r.Metrics[strategy.MetricBeta] || len(fit.Curve) < 3 {
			t.Errorf("%s: %s: %v; fit %+v, want the recorded beta %v and its curve", r.Setting, predictive.BetaFile, err, fit, r.Metrics[strategy.MetricBeta])
		}
	}
}

// TestStrategyFileNames checks that a strategy's files must have plain names other than the run's own.
func TestStrategyFileNames(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"beta.json", true}, {"curve_2.csv", true}, {"../x.json", false}, {"a/b", false}, {".hidden", false},
		{"run.json", false}, {"status.json", false}, {"rounds.jsonl", false}, {"checkpoints", false}, {"", false},
	} {
		err := writeStrategyFiles(dir, map[string][]byte{tc.name: []byte("{}")})
		if (err == nil) != tc.ok {
			t.Errorf("%q: error %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// TestRegressionEvaluationByHand checks the engine's regression evaluation in float64: FedAvg's
// final global model, loaded from its checkpoint and evaluated on the engine's own standardised test
// set, gives mse = mean (y - f(x))^2 and nll = mean of 0.5 log(2 pi s2) + (y - f(x))^2 / (2 s2) with
// the learned noise variance s2, the numbers the run recorded.
func TestRegressionEvaluationByHand(t *testing.T) {
	requireDiabetes(t)
	s := diabetesSpec()
	dir := t.TempDir()
	sum := runQuiet(t, s, dir, false)
	r := sum.Runs[0]
	g := finalGlobal(t, filepath.Join(dir, results.RunName(r.Setting, 1)))
	c := s.WithDefaults()
	prob, err := newProblem(c, 1, &datasetCache{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := posterior.Stack([]*posterior.Posterior{g})
	if err != nil {
		t.Fatal(err)
	}
	_, mean, variance, err := predictive.EnsembleMean(modelConfig(c, prob, 1, 0), st, prob.test.X)
	if err != nil {
		t.Fatal(err)
	}
	var mse, nll float64
	for i, y := range prob.test.Targets {
		d, v := float64(y)-float64(mean[i]), float64(variance[i])
		mse += d * d
		nll += 0.5*math.Log(2*math.Pi*v) + d*d/(2*v)
	}
	n := float64(len(prob.test.Targets))
	mse, nll = mse/n, nll/n
	if d := math.Abs(mse - r.Metrics[results.MSE]); d > 1e-5 {
		t.Errorf("mse %v recorded, %v by hand", r.Metrics[results.MSE], mse)
	}
	if d := math.Abs(nll - r.Metrics[results.NLL]); d > 1e-5 {
		t.Errorf("nll %v recorded, %v by hand", r.Metrics[results.NLL], nll)
	}
	var tm, tv float64
	for _, y := range prob.train.Targets {
		tm += float64(y)
	}
	tm /= float64(len(prob.train.Targets))
	for _, y := range prob.train.Targets {
		tv += (float64(y) - tm) * (float64(y) - tm)
	}
	tv /= float64(len(prob.train.Targets))
	if math.Abs(tm) > 0.3 || math.Abs(tv-1) > 0.3 {
		t.Errorf("the clients' targets have mean %v and variance %v; want them standardised (about 0 and 1)", tm, tv)
	}
}

// TestRegressionSpecErrors checks what a regression dataset refuses, and the regression-only fields
// on a classification dataset, each by its field.
func TestRegressionSpecErrors(t *testing.T) {
	if err := diabetesSpec().Validate(); err != nil {
		t.Fatalf("the base spec is refused: %v", err)
	}
	checkSpecErrors(t, diabetesSpec, []specErrorCase{
		{"dirichlet on regression", func(s *Spec) { s.Partition.Method, s.Partition.H, s.Partition.Alpha = "dirichlet", 0, 0.5 }, "partition.method"},
		{"lenet on regression", func(s *Spec) { s.Model.Arch = "lenet" }, "model.arch"},
		{"fairness on regression", func(s *Spec) { s.Evaluation.Fairness = "local" }, "evaluation.fairness"},
		{"fedbe on regression", func(s *Spec) { s.Aggregation.Rule = "fedbe-gaussian" }, "aggregation.rule"},
		{"d-bcm on regression", func(s *Spec) { s.Aggregation.Rule = "d-bcm" }, "aggregation.rule"},
		{"oneshotfl on regression", func(s *Spec) { s.Aggregation.Rule = "oneshotfl" }, "aggregation.rule"},
		{"fedkt on regression", func(s *Spec) { s.Aggregation.Rule = "fedkt" }, "aggregation.rule"},
		{"bcm without a sampler", func(s *Spec) { s.Aggregation.Rule = "bcm" }, "training.sampler"},
		{"pretraining on regression", func(s *Spec) { s.Aggregation.Pretrain = &PretrainSpec{} }, "aggregation.pretrain"},
		{"negative noise variance", func(s *Spec) { s.Model.NoiseVar = -1 }, "model.noise_var"},
		{"sort feature on iid", func(s *Spec) { s.Partition.Method, s.Partition.H, s.Partition.SortFeature = "iid", 0, "bmi" }, "partition.sort_feature"},
		{"sort feature on classification", func(s *Spec) {
			*s = *digitsSpec()
			s.Partition.SortFeature = "x"
		}, "partition.sort_feature"},
		{"noise variance on classification", func(s *Spec) {
			*s = *digitsSpec()
			s.Model.NoiseVar = 0.5
		}, "model.noise_var"},
	})
}
