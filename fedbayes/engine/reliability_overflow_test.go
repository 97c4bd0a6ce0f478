package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
)

// overflowSpec is a tiny regression sweep (a Bayesian MLP on diabetes) whose first setting, at
// learning rate 3, overflows the predictive variance of seed 2 at its first evaluation (its
// parameters stay finite), and whose second setting, at 0.01, runs normally: issue 36's "predictive
// variance is +Inf" of a regression MLP at a high learning rate.
func overflowSpec() *Spec {
	raw := func(v string) json.RawMessage { return json.RawMessage(v) }
	return &Spec{
		Name:        "overflow",
		Dataset:     DatasetSpec{Name: "diabetes"},
		Partition:   PartitionSpec{Clients: 2},
		Model:       ModelSpec{Kind: "bayesian", Hidden: []int{8}},
		Aggregation: AggregationSpec{Rule: "GAA"},
		Training:    TrainingSpec{Rounds: 2, LocalEpochs: 5, BatchSize: 16, LearningRate: 3},
		Evaluation:  EvaluationSpec{Samples: 2},
		Variants: []Variant{
			{Label: "high", Set: map[string]json.RawMessage{"training.lr": raw("3")}},
			{Label: "low", Set: map[string]json.RawMessage{"training.lr": raw("0.01")}},
		},
		Seeds: []int64{2, 1},
	}
}

// TestEvaluationOverflowDiverges checks that an evaluation overflow is recorded as diverged, not
// failed, and that the sweep goes on past it (issue 36: the engine left the sweep, --resume stopped
// at the same run again, and with -jobs 2 runs never ran): every run runs in one call, in two
// workers' shares (Options.Runs, as -jobs 2 gives them), and a resume goes past it.
func TestEvaluationOverflowDiverges(t *testing.T) {
	requireDiabetes(t)
	want := []results.State{results.Diverged, results.Completed, results.Completed, results.Completed}
	check := func(t *testing.T, dir string, runs []RunSummary) {
		t.Helper()
		if len(runs) != len(want) {
			t.Fatalf("%d runs, want %d", len(runs), len(want))
		}
		for i, r := range runs {
			if r.State != want[i] {
				t.Errorf("run %s seed %d: %q (%s), want %s", r.Setting, r.Seed, r.State, r.Reason, want[i])
			}
		}
		if !strings.Contains(runs[0].Reason, "predictive variance") || !strings.Contains(runs[0].Reason, "is +Inf") {
			t.Errorf("reason %q, want the overflowing variance", runs[0].Reason)
		}
		run, err := results.ReadRun(filepath.Join(dir, results.RunName(runs[0].Setting, runs[0].Seed)))
		if err != nil || run.Status.State != results.Diverged {
			t.Errorf("recorded %+v, %v; want diverged", run.Status, err)
		}
	}
	opts := func(dir string, resume bool, runs []int) Options {
		return Options{Dir: dir, Resume: resume, Progress: progress.Discard, NoFigures: true, Runs: runs}
	}
	t.Run("one call", func(t *testing.T) {
		dir := t.TempDir()
		sum, err := Run(context.Background(), overflowSpec(), opts(dir, false, nil))
		if err != nil {
			t.Fatal(err)
		}
		check(t, dir, sum.Runs)
		if sum.Diverged() != 1 {
			t.Errorf("summary counts %d diverged, want 1", sum.Diverged())
		}
		again, err := Run(context.Background(), overflowSpec(), opts(dir, true, nil))
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		check(t, dir, again.Runs)
		for _, r := range again.Runs {
			if !r.AlreadyDone {
				t.Errorf("resume ran %s seed %d again", r.Setting, r.Seed)
			}
		}
	})
	t.Run("two workers", func(t *testing.T) {
		dir := t.TempDir()
		var all [4]RunSummary
		for k := 0; k < 2; k++ {
			sum, err := Run(context.Background(), overflowSpec(), opts(dir, true, []int{k, k + 2}))
			if err != nil {
				t.Fatalf("worker %d: %v", k, err)
			}
			all[k], all[k+2] = sum.Runs[0], sum.Runs[1]
		}
		check(t, dir, all[:])
	})
}
