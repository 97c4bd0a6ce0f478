package engine

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
)

// TestFederationIsRunsRoundOne splits a FedBE spec with NewFederation, trains round 1 with FirstRound
// and takes FedBE's server step with the round's seed (predictive.FedBEServer) and FedAvg's
// (predictive.FedAvgModel): the global models are, bit for bit, those of round 1 of the engine's
// fedbe-gaussian and fedavg runs.
func TestFederationIsRunsRoundOne(t *testing.T) {
	requireDigits(t)
	// Chen & Chao's setting (presets.ChenSpec, the fedbe-* presets) at a test's budget, written out: 3
	// clients, FedAvg and FedBE.
	spec := &Spec{Name: "fed", Dataset: DatasetSpec{Name: "digits", Subsample: 500, TestSubsample: 200, ServerFraction: 0.2},
		Partition:   PartitionSpec{Method: "dirichlet", Clients: 3, Alpha: 1, MinSize: 10},
		Model:       ModelSpec{Arch: "mlp", Kind: "deterministic", Hidden: []int{8}},
		Aggregation: AggregationSpec{Rule: "FedAvg", Weighting: "size"},
		Training:    TrainingSpec{Rounds: 1, LocalEpochs: 1, BatchSize: 16, Optimizer: "sgd", LearningRate: 0.05, Momentum: 0.9},
		Seeds:       []int64{2},
		Variants: []Variant{
			variant("fedavg", "aggregation.rule", "FedAvg"),
			variant("fedbe-gaussian", "aggregation.rule", "fedbe-gaussian", "aggregation.options", json.RawMessage(`{"samples": 2, "alpha": 1,
				"distill": {"optimizer": "sgd", "learning_rate": 0.01, "momentum": 0.9, "epochs": 2, "batch_size": 16, "swa_cycles": 2, "swa_min_lr": 0.001}}`)),
		}}
	if err := SelectMethods(spec, []string{"fedavg", "fedbe-gaussian"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Run(context.Background(), spec, Options{Dir: dir, Progress: progress.Discard, NoFigures: true}); err != nil {
		t.Fatal(err)
	}
	run, err := results.ReadRun(filepath.Join(dir, results.RunName("fed-fedbe-gaussian", 2)))
	if err != nil {
		t.Fatal(err)
	}

	f, err := NewFederation(spec, 2)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, c := range f.Clients {
		total += c.Len()
	}
	if len(f.Clients) != 3 || len(f.Sizes) != 3 || total+f.Server.Len() != 500 || f.Server.Len() != 100 || f.Test.Len() != 200 {
		t.Fatalf("federation: %d clients of %v, server %d, test %d", len(f.Clients), f.Sizes, f.Server.Len(), f.Test.Len())
	}
	trained, ids, err := f.FirstRound(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 3 {
		t.Fatalf("round 1 trained clients %v, want all 3", ids)
	}
	settings, err := spec.Expand()
	if err != nil {
		t.Fatal(err)
	}
	var opts strategy.FedBEOptions
	if err := json.Unmarshal(settings[1].Spec.Aggregation.Options, &opts); err != nil {
		t.Fatal(err)
	}
	fc := predictive.FedBEConfig{Distribution: "gaussian", Samples: 2, Distill: opts.Distill, Seed: f.AggregateSeed(1)}
	g, err := predictive.FedBEServer(f.Config, strategy.Means(trained), f.Sizes, f.Server.X, fc, 1)
	if err != nil {
		t.Fatal(err)
	}
	one, err := posterior.Stack([]*posterior.Posterior{g})
	if err != nil {
		t.Fatal(err)
	}
	probs, _, _, err := predictive.EnsembleMean(f.Config, one, f.Test.X)
	if err != nil {
		t.Fatal(err)
	}
	got, err := metrics.EvaluateClassification(probs, f.Test.Labels, f.Test.NumClasses, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The global model is the run's, to the last bit; its scores agree up to the order of the sums
	// (the engine's evaluator predicts through the one-client model, EnsembleMean through a stack).
	saved := func(setting string) string {
		c, ok, _, err := results.LatestCheckpoint(filepath.Join(dir, results.RunName(setting, 2)))
		if err != nil || !ok {
			t.Fatalf("checkpoint of %s: %v %v", setting, ok, err)
		}
		_, p, _, err := decodeCheckpoint(c.Blob)
		if err != nil {
			t.Fatal(err)
		}
		return posteriorDigest(t, p)
	}
	if a, b := posteriorDigest(t, g), saved("fed-fedbe-gaussian"); a != b {
		t.Errorf("round 1 taken apart gives FedBE's global model %s, the run's checkpoint holds %s", a, b)
	}
	// FedAvg's is the clients' size-weighted mean (predictive.FedAvgModel, what the former runner took).
	avg, err := predictive.FedAvgModel(trained, f.Sizes)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := posteriorDigest(t, avg), saved("fed-fedavg"); a != b {
		t.Errorf("round 1 taken apart gives FedAvg's global model %s, the run's checkpoint holds %s", a, b)
	}
	want := run.Rows[0].Metrics
	if got.Accuracy != want[results.Accuracy] || math.Abs(got.NLL-want[results.NLL]) > 1e-6*want[results.NLL] {
		t.Errorf("round 1 taken apart: accuracy %v, NLL %v; the run recorded %v, %v", got.Accuracy, got.NLL, want[results.Accuracy], want[results.NLL])
	}

	bad := spec.Clone()
	bad.Training.Mode = "sequential"
	fb, err := NewFederation(bad, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := fb.FirstRound(context.Background()); err == nil || !strings.Contains(err.Error(), "sequential") {
		t.Errorf("sequential: %v", err)
	}
}

// TestFederationFirstRoundPVI trains round 1 of a partitioned-VI spec with FirstRound, whose clients
// train against their cavities (strategy.ClientPriors) as the run's do, and takes PVI's server step
// on them by hand: the global model is, bit for bit, the one the run's round-1 checkpoint holds.
func TestFederationFirstRoundPVI(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Aggregation = AggregationSpec{Rule: "pvi"}
	s.Training.Rounds = 1
	dir := t.TempDir()
	runQuiet(t, s, dir, false)
	c, ok, _, err := results.LatestCheckpoint(filepath.Join(dir, results.RunName("digits", 3)))
	if err != nil || !ok {
		t.Fatalf("the run's checkpoint: %v %v", ok, err)
	}
	_, want, _, err := decodeCheckpoint(c.Blob)
	if err != nil {
		t.Fatal(err)
	}

	f, err := NewFederation(s, 3)
	if err != nil {
		t.Fatal(err)
	}
	trained, ids, err := f.FirstRound(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	initial, err := f.Initial()
	if err != nil {
		t.Fatal(err)
	}
	pvi, err := newStrategy(f.spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := pvi.(strategy.Stateful).Restore(nil); err != nil {
		t.Fatal(err)
	}
	sizes := make([]int, len(ids))
	for j, id := range ids {
		sizes[j] = int(f.Sizes[id])
	}
	g, err := pvi.Aggregate(&strategy.Round{Number: 1, IDs: ids, Sizes: sizes, Stacked: trained, Previous: initial,
		Seed: f.AggregateSeed(1), Model: f.Config, Samples: f.spec.Evaluation.Samples})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := posteriorDigest(t, g.Posterior), posteriorDigest(t, want); a != b {
		t.Errorf("PVI's round 1 taken apart gives the global model %s, the run's checkpoint holds %s", a, b)
	}
}
