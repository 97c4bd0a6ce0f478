package engine

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// runQuiet runs a spec into dir without progress output.
func runQuiet(t *testing.T, s *Spec, dir string, resume bool) *Summary {
	t.Helper()
	sum, err := Run(context.Background(), s, Options{Dir: dir, Resume: resume, Progress: progress.Discard})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// finalGlobal reads the global posterior of a run's last checkpoint.
func finalGlobal(t *testing.T, runDir string) *posterior.Posterior {
	t.Helper()
	c, ok, _, err := results.LatestCheckpoint(runDir)
	if err != nil || !ok {
		t.Fatalf("no checkpoint in %s: %v", runDir, err)
	}
	_, g, _, err := decodeCheckpoint(c.Blob)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// maxAbsDiff is the largest absolute difference between two posteriors' values.
func maxAbsDiff(t *testing.T, a, b *posterior.Posterior) float64 {
	t.Helper()
	if len(a.Params) != len(b.Params) {
		t.Fatalf("%d vs %d parameters", len(a.Params), len(b.Params))
	}
	worst := 0.0
	for i, p := range a.Params {
		q := b.Params[i]
		for _, pair := range [][2]*tensors.Tensor{{p.Mean, q.Mean}, {p.LogVar, q.LogVar}} {
			if (pair[0] == nil) != (pair[1] == nil) {
				t.Fatalf("parameter %s: Gaussian in one posterior only", p.Name)
			}
			if pair[0] == nil {
				continue
			}
			x, _ := tensors.CopyFlatData[float32](pair[0])
			y, _ := tensors.CopyFlatData[float32](pair[1])
			for j := range x {
				worst = math.Max(worst, math.Abs(float64(x[j]-y[j])))
			}
		}
	}
	return worst
}

// TestVectorizedMatchesSequential checks that the clients trained together in one computation (each
// with its own number of steps per epoch) give the global model of the one-client-at-a-time path.
func TestVectorizedMatchesSequential(t *testing.T) {
	requireDigits(t)
	tests := []struct {
		name   string
		modify func(s *Spec)
	}{
		{"bayesian sgd momentum dirichlet", func(s *Spec) {}},
		{"adam, maxdisc weights, 3 of 4 clients", func(s *Spec) {
			s.Training.Optimizer, s.Training.Momentum, s.Training.LearningRate = "adam", 0, 0.01
			s.Aggregation.Weighting = "maxdisc"
			s.Partition.Participation = 0.75
		}},
		{"flipout, prior reset, fedprox, 2 epochs", func(s *Spec) {
			s.Model.Estimator = "flipout"
			s.Training.LearningRate, s.Training.Momentum = 0.02, 0.5
			s.Training.Prior = "previous-global"
			s.Training.ProxMu = 0.1
			s.Training.LocalEpochs = 2
		}},
		{"deterministic fedavg, adam", func(s *Spec) {
			s.Model = ModelSpec{Arch: "mlp", Kind: "deterministic", Hidden: []int{16}}
			s.Aggregation = AggregationSpec{Rule: "FedAvg", Weighting: "size"}
			s.Training.Optimizer, s.Training.Momentum, s.Training.LearningRate = "adam", 0, 0.01
		}},
		{"mc dropout fedavg", func(s *Spec) {
			s.Model = ModelSpec{Arch: "mlp", Kind: "mcdropout", Hidden: []int{16}}
			s.Aggregation = AggregationSpec{Rule: "FedAvg", Weighting: "size"}
		}},
		// Each client's cavity must reach its own slot (setClientPriors) in both paths.
		{"pvi, 3 of 4 clients, 3 rounds", func(s *Spec) {
			s.Aggregation = AggregationSpec{Rule: "pvi"}
			s.Partition.Participation = 0.75
			s.Training.Rounds = 3
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var globals []*posterior.Posterior
			var rows [][]results.Row
			for _, mode := range []string{"vectorized", "sequential"} {
				s := digitsSpec()
				tc.modify(s)
				s.Training.Mode = mode
				dir := t.TempDir()
				sum := runQuiet(t, s, dir, false)
				if sum.Runs[0].State != results.Completed {
					t.Fatalf("%s: %+v", mode, sum.Runs[0])
				}
				globals = append(globals, finalGlobal(t, sum.Runs[0].Dir))
				run, err := results.ReadRun(sum.Runs[0].Dir)
				if err != nil {
					t.Fatal(err)
				}
				rows = append(rows, run.Rows)
			}
			d := maxAbsDiff(t, globals[0], globals[1])
			t.Logf("max abs difference of the global models: %g", d)
			if d > 1e-4 {
				t.Errorf("vectorised and sequential global models differ by %g", d)
			}
			for i := range rows[0] {
				a, b := rows[0][i], rows[1][i]
				if !reflect.DeepEqual(a.Clients, b.Clients) || a.BytesSent != b.BytesSent {
					t.Errorf("round %d: clients %v / %v, bytes %d / %d", a.Round, a.Clients, b.Clients, a.BytesSent, b.BytesSent)
				}
				for _, m := range []string{results.Accuracy, results.NLL, "loss"} {
					if math.Abs(a.Metrics[m]-b.Metrics[m]) > 1e-3*math.Max(1, math.Abs(a.Metrics[m])) {
						t.Errorf("round %d: %s %v (vectorised) vs %v (sequential)", a.Round, m, a.Metrics[m], b.Metrics[m])
					}
				}
			}
		})
	}
}

// TestRunLearnsAndRecords runs a short real federated training and checks that it learns and what it
// writes: rows, provenance, checkpoints, figures.
func TestRunLearnsAndRecords(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Training.Rounds, s.Training.LocalEpochs = 4, 2
	s.Evaluation.Every = 2
	dir := t.TempDir()
	sum := runQuiet(t, s, dir, false)
	r := sum.Runs[0]
	if r.State != results.Completed || r.Round != 4 {
		t.Fatalf("run: %+v", r)
	}
	if acc := r.Metrics[results.Accuracy]; acc < 0.6 {
		t.Errorf("accuracy after 4 rounds %.3f, want clearly above chance (0.1)", acc)
	}
	run, err := results.ReadRun(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Rows) != 2 || run.Rows[0].Round != 2 || run.Rows[1].Round != 4 {
		t.Fatalf("rows at rounds %v, want 2 and 4 (every 2)", rowRounds(run.Rows))
	}
	row := run.Rows[1]
	for _, m := range []string{results.Accuracy, results.NLL, results.ECE, results.Spread, results.WeightedAccuracy, results.WorstAccuracy, "loss", MetricLearningRate} {
		if _, ok := row.Metrics[m]; !ok {
			t.Errorf("row lacks metric %q", m)
		}
	}
	if len(row.Clients) != 4 || len(row.ClientWeights) != 4 || len(row.ClientAccuracy) != 4 {
		t.Errorf("row: clients %v, weights %v, client accuracy %v", row.Clients, row.ClientWeights, row.ClientAccuracy)
	}
	// Bytes: 4 clients, both ways, float32 means and log-variances of a 64-16-10 Bayesian MLP.
	params := int64((64*16 + 16 + 16*10 + 10) * 2)
	if want := 2 * 4 * 4 * params; row.BytesSent != want {
		t.Errorf("bytes sent %d, want %d", row.BytesSent, want)
	}
	if row.Time.LocalSeconds <= 0 || row.Time.EvalSeconds <= 0 {
		t.Errorf("timings %+v", row.Time)
	}
	if run.Meta.Seed != 3 || run.Meta.Info.Backend == "" || run.Meta.Labels["rule"] != "GAA" {
		t.Errorf("meta: seed %d, backend %q, labels %v", run.Meta.Seed, run.Meta.Info.Backend, run.Meta.Labels)
	}
	var stored Spec
	if err := json.Unmarshal(run.Meta.Spec, &stored); err != nil || stored.Training.Rounds != 4 || stored.Training.BatchSize != 32 {
		t.Errorf("stored spec: %v %+v", err, stored.Training)
	}
	spec, err := plots.ReadSpecFile(filepath.Join(dir, FiguresFile))
	if err != nil {
		t.Fatalf("figures.json: %v", err)
	}
	if len(spec.Figures) == 0 || spec.Figures[0].Name != results.Accuracy {
		t.Errorf("figures: %+v", spec.Figures)
	}
	if _, err := spec.BuildAll(); err != nil {
		t.Errorf("figures do not build: %v", err)
	}
	// Same seed, same result (timings aside).
	again := runQuiet(t, s, t.TempDir(), false)
	if !reflect.DeepEqual(again.Runs[0].Metrics, r.Metrics) {
		t.Errorf("same seed, different metrics:\n%v\n%v", again.Runs[0].Metrics, r.Metrics)
	}
	// Without --resume, an existing run is an error before any work.
	if _, err := Run(context.Background(), s, Options{Dir: dir, Progress: progress.Discard}); err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Errorf("rerun into the same directory: %v", err)
	}
	// With it, a finished run is kept.
	sum2 := runQuiet(t, s, dir, true)
	if !sum2.Runs[0].AlreadyDone || sum2.Runs[0].State != results.Completed {
		t.Errorf("resume of a completed run: %+v", sum2.Runs[0])
	}
	// A finished run of another spec is refused, not kept silently.
	changed := *s
	changed.Training.Rounds++
	if _, err := Run(context.Background(), &changed, Options{Dir: dir, Resume: true, Progress: progress.Discard}); err == nil || !strings.Contains(err.Error(), "another experiment (the specs differ: training.rounds: 4 in the recorded run, 5 now)") {
		t.Errorf("resume with a changed spec: %v", err)
	}
	// More seeds in the sweep: the finished run is kept (only the seed list differs), the new seed runs.
	more := *s
	more.Seeds = []int64{r.Seed, r.Seed + 1}
	sum3 := runQuiet(t, &more, dir, true)
	if len(sum3.Runs) != 2 || !sum3.Runs[0].AlreadyDone || sum3.Runs[1].AlreadyDone || sum3.Runs[1].State != results.Completed {
		t.Errorf("resume with one more seed: %+v", sum3.Runs)
	}
}

func rowRounds(rows []results.Row) []int {
	var r []int
	for _, row := range rows {
		r = append(r, row.Round)
	}
	return r
}

// TestDivergenceAndSweepGoesOn sweeps a learning rate that makes the run diverge and a sane one: the
// first is recorded as diverged with its round and reason, the second completes.
func TestDivergenceAndSweepGoesOn(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Training.Rounds = 2
	s.Sweep = map[string][]json.RawMessage{"training.lr": raws(1e30, 0.05)}
	dir := t.TempDir()
	sum := runQuiet(t, s, dir, false)
	if len(sum.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(sum.Runs))
	}
	bad, good := sum.Runs[0], sum.Runs[1]
	if bad.State != results.Diverged || bad.Round != 1 || bad.Reason == "" {
		t.Errorf("lr 1e30: %+v, want diverged in round 1 with a reason", bad)
	}
	if good.State != results.Completed {
		t.Errorf("lr 0.05: %+v", good)
	}
	if sum.Diverged() != 1 {
		t.Errorf("Diverged() = %d", sum.Diverged())
	}
	run, err := results.ReadRun(bad.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status.State != results.Diverged || run.Status.Round != 1 || !strings.Contains(run.Status.Reason, "client") {
		t.Errorf("status.json: %+v", run.Status)
	}
}

// TestPretrainAndDWC runs DWC with the global model pre-trained on the server set (Fischer et al. (2024),
// Sec. 3.6).
func TestPretrainAndDWC(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Dataset.ServerFraction = 0.2
	s.Aggregation = AggregationSpec{Rule: "DWC", Pretrain: &PretrainSpec{Epochs: 3, Patience: 2}}
	s.Training.Rounds = 1
	s.Evaluation.Fairness = "test-share"
	sum := runQuiet(t, s, t.TempDir(), false)
	r := sum.Runs[0]
	if r.State != results.Completed {
		t.Fatalf("%+v", r)
	}
	if _, ok := r.Metrics[MetricDWCFallbacks]; !ok {
		t.Errorf("no %s metric: %v", MetricDWCFallbacks, r.Metrics)
	}
	if r.Metrics[results.Accuracy] < 0.3 {
		t.Errorf("pre-trained DWC accuracy %.3f", r.Metrics[results.Accuracy])
	}
}

// TestFashionMNISTLearns: two rounds of a Bayesian MLP on a 3,000-image Fashion-MNIST subsample, 5
// clients, reach an accuracy far above chance (0.1).
func TestFashionMNISTLearns(t *testing.T) {
	requireFashionMNIST(t)
	s := &Spec{
		Name:        "fmnist",
		Dataset:     DatasetSpec{Name: "fashion-mnist", Subsample: 3000, TestSubsample: 1000},
		Partition:   PartitionSpec{Method: "iid", Clients: 5},
		Model:       ModelSpec{Arch: "mlp", Kind: "bayesian", Hidden: []int{100}},
		Aggregation: AggregationSpec{Rule: "GAA", Weighting: "size"},
		Training:    TrainingSpec{Rounds: 2, BatchSize: 64, LearningRate: 0.05, Momentum: 0.9},
		Evaluation:  EvaluationSpec{Samples: 3, FairnessExamples: 50},
	}
	sum := runQuiet(t, s, t.TempDir(), false)
	if acc := sum.Runs[0].Metrics[results.Accuracy]; sum.Runs[0].State != results.Completed || acc < 0.6 {
		t.Errorf("Fashion-MNIST after 2 rounds: %s, accuracy %.3f; want completed and > 0.6", sum.Runs[0].State, acc)
	}
}
