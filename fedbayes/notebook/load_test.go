package notebook

import (
	"errors"
	"strings"
	"testing"

	"path/filepath"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
)

// loadSpec is a small spec of rounds rounds and two seeds (nothing is trained: the tests write its
// runs' files).
func loadSpec(rounds int) *engine.Spec {
	return &engine.Spec{
		Name:       "nb",
		Dataset:    engine.DatasetSpec{Name: "digits", Subsample: 300, TestSubsample: 100},
		Partition:  engine.PartitionSpec{Clients: 3},
		Model:      engine.ModelSpec{Hidden: []int{8}},
		Training:   engine.TrainingSpec{Rounds: rounds, BatchSize: 32, LearningRate: 0.1},
		Evaluation: engine.EvaluationSpec{Samples: 2},
		Seeds:      []int64{1, 2},
	}
}

// writeLoadRun writes the run of spec's only setting with seed as `fedbayes run` records it, with a
// row for each of rows and status state at round last ("" leaves it incomplete).
func writeLoadRun(t *testing.T, dir string, spec *engine.Spec, seed int64, rows []int, state results.State, last int) {
	t.Helper()
	settings, err := spec.Expand()
	if err != nil || len(settings) != 1 {
		t.Fatalf("%d settings: %v", len(settings), err)
	}
	st := settings[0]
	meta, err := results.NewMeta(st.Name, st.Labels, seed, st.Spec, runinfo.Info{Fedbayes: runinfo.Version, Backend: "test"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := results.Create(filepath.Join(dir, results.RunName(st.Name, seed)), meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Append(results.Row{Round: r, Metrics: map[string]float64{results.Accuracy: 0.5 + 0.1*float64(r)/10}}); err != nil {
			t.Fatal(err)
		}
	}
	switch state {
	case results.Completed:
		err = w.Complete(last)
	case results.Diverged:
		err = w.Diverge(last, "NaN loss")
	case results.Failed:
		err = w.Fail(last, errors.New("out of memory"))
	default:
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestLoadChecksRuns checks that Load returns a run as finished only when its rows match its status
// and its spec is the one given (issue 36: a run whose rows stop at round 2 of 3 was drawn with round
// 2 as final, and 3-round runs were returned for a 5-round spec).
func TestLoadChecksRuns(t *testing.T) {
	three, five := loadSpec(3), loadSpec(5)
	tests := []struct {
		name  string
		write func(t *testing.T, dir string)
		spec  *engine.Spec
		runs  int    // runs returned
		err   string // "" when none
		inc   bool   // an *Incomplete error
	}{
		{name: "both finished", spec: three, runs: 2, write: func(t *testing.T, dir string) {
			writeLoadRun(t, dir, three, 1, []int{1, 2, 3}, results.Completed, 3)
			writeLoadRun(t, dir, three, 2, []int{1, 2, 3}, results.Completed, 3)
		}},
		{name: "a diverged seed is left out", spec: three, runs: 1, write: func(t *testing.T, dir string) {
			writeLoadRun(t, dir, three, 1, []int{1, 2, 3}, results.Completed, 3)
			writeLoadRun(t, dir, three, 2, []int{1}, results.Diverged, 2)
		}},
		{name: "rows stop at round 2 of 3", spec: three, err: "nb-seed2: rounds.jsonl ends at round 2, but the run completed after round 3: rows are missing; its rows cannot be trusted", write: func(t *testing.T, dir string) {
			writeLoadRun(t, dir, three, 1, []int{1, 2, 3}, results.Completed, 3)
			writeLoadRun(t, dir, three, 2, []int{1, 2}, results.Completed, 3)
		}},
		{name: "3-round runs for a 5-round spec", spec: five, err: "nb-seed1: holds a run of another experiment (the specs differ: training.rounds: 3 in the recorded run, 5 now)", write: func(t *testing.T, dir string) {
			writeLoadRun(t, dir, three, 1, []int{1, 2, 3}, results.Completed, 3)
			writeLoadRun(t, dir, three, 2, []int{1, 2, 3}, results.Completed, 3)
		}},
		{name: "another spec's divergence", spec: five, err: "nb-seed2: holds a run of another experiment", write: func(t *testing.T, dir string) {
			writeLoadRun(t, dir, five, 1, []int{1, 2, 3, 4, 5}, results.Completed, 5)
			writeLoadRun(t, dir, three, 2, []int{1}, results.Diverged, 2)
		}},
		{name: "a failed seed is not finished", spec: three, inc: true, write: func(t *testing.T, dir string) {
			writeLoadRun(t, dir, three, 1, []int{1, 2, 3}, results.Completed, 3)
			writeLoadRun(t, dir, three, 2, []int{1}, results.Failed, 1)
		}},
		{name: "one incomplete", spec: three, inc: true, write: func(t *testing.T, dir string) {
			writeLoadRun(t, dir, three, 1, []int{1, 2, 3}, results.Completed, 3)
			writeLoadRun(t, dir, three, 2, []int{1, 2}, "", 0)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.write(t, dir)
			runs, err := Load(dir, tc.spec)
			var inc *Incomplete
			switch {
			case tc.inc:
				if !errors.As(err, &inc) {
					t.Fatalf("error %v, want *Incomplete", err)
				}
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "remove them") {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if runs != nil {
					t.Errorf("returned %d runs with the error", len(runs))
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if len(runs) != tc.runs {
					t.Errorf("%d runs, want %d", len(runs), tc.runs)
				}
			}
		})
	}
}
