package notebook

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
)

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		knob, fast string
		want       Budget
		line, err  string
	}{
		{"quick", "", Quick, "budget: quick", ""},
		{" Paper ", "", Paper, "budget: paper", ""},
		{"reduced", "0", Reduced, "budget: reduced", ""},
		{"paper", "1", Quick, `FEDBAYES_FAST=1 overrides the knob "paper"`, ""},
		{"full", "", "", "", `budget "full": use "quick"`},
		{"full", "1", "", "", `budget "full"`}, // a typo is reported even in fast mode
	} {
		t.Setenv(FastEnv, tc.fast)
		got, line, err := Resolve(tc.knob)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Resolve(%q): error %v, want %q", tc.knob, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || !strings.Contains(line, tc.line) {
			t.Errorf("Resolve(%q) with %s=%q = %q, %q, %v; want %q, %q", tc.knob, FastEnv, tc.fast, got, line, err, tc.want, tc.line)
		}
	}
}

func TestExpectedLine(t *testing.T) {
	e := Expected{Quick: "about 2 min", Paper: "weeks"}
	if got := e.Line(Quick, "2 cores"); got != "expected time (2 cores): about 2 min; other budgets: paper weeks" {
		t.Errorf("Line(quick) = %q", got)
	}
	if got := e.Line(Reduced, "2 cores"); !strings.HasPrefix(got, "expected time (2 cores): not measured;") {
		t.Errorf("Line(reduced) = %q", got)
	}
}

func TestResultsDir(t *testing.T) {
	t.Setenv(ResultsEnv, "")
	dir, err := ResultsDir("02-federated-vi", Quick)
	if err != nil {
		t.Fatal(err)
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// Under the repository (which may itself be a clone in /tmp, as in CI), never os.TempDir() itself.
	if dir != filepath.Join(root, "results", "02-federated-vi", "quick") || filepath.Dir(dir) == os.TempDir() {
		t.Errorf("ResultsDir = %q (repo %q)", dir, root)
	}
	if _, err := os.Stat(filepath.Join(root, "fedbayes", "notebook")); err != nil {
		t.Errorf("repo root %q does not hold fedbayes/notebook", root)
	}
	other := t.TempDir()
	t.Setenv(ResultsEnv, other)
	if dir, err := ResultsDir("x", Paper); err != nil || dir != filepath.Join(other, "x", "paper") {
		t.Errorf("with %s: %q, %v", ResultsEnv, dir, err)
	}
	if _, err := ResultsDir("../x", Paper); err == nil {
		t.Error("a name with a slash was accepted")
	}
}

// cancelAt cancels a context when the sweep reaches round n.
type cancelAt struct {
	progress.Reporter
	n      int
	cancel context.CancelFunc
}

func (c cancelAt) Update(round int, m map[string]float64, t progress.Timings) {
	if round >= c.n {
		c.cancel()
	}
}

// An interrupt stops training with a *Stopped error naming the last round kept; Load then says the
// runs are incomplete, and training again resumes and finishes them.
func TestTrainInterruptAndResume(t *testing.T) {
	if _, err := os.Stat(filepath.Join(data.Dir(), data.SklearnDir, "digits.csv.gz")); err != nil {
		t.Skipf("digits not installed: %v", err)
	}
	s := &engine.Spec{
		Name:       "nb",
		Dataset:    engine.DatasetSpec{Name: "digits", Subsample: 300, TestSubsample: 100},
		Partition:  engine.PartitionSpec{Clients: 3},
		Model:      engine.ModelSpec{Hidden: []int{8}},
		Training:   engine.TrainingSpec{Rounds: 3, BatchSize: 32, LearningRate: 0.1},
		Evaluation: engine.EvaluationSpec{Samples: 2},
		Seeds:      []int64{1, 2},
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := train(ctx, dir, cancelAt{Reporter: progress.Discard, n: 2, cancel: cancel}, s)
	var stopped *Stopped
	if !errors.As(err, &stopped) || stopped.Round != 2 || stopped.Run != "nb-seed1" {
		t.Fatalf("error %v (%#v), want stopped after round 2 of nb-seed1", err, stopped)
	}
	if !strings.Contains(err.Error(), "stopped after round 2 of nb-seed1; run the cell again to resume") {
		t.Errorf("message %q", err)
	}
	_, err = Load(dir, s)
	var inc *Incomplete
	if !errors.As(err, &inc) || inc.Done != 0 || inc.Want != 2 {
		t.Fatalf("Load after the stop: %v", err)
	}
	out, err := train(context.Background(), dir, progress.Discard, s)
	if err != nil || out.Runs != 2 {
		t.Fatalf("resume: %v, %+v", err, out)
	}
	runs, err := Load(dir, s)
	if err != nil || len(runs) != 2 || len(runs[0].Rows) != 3 {
		t.Fatalf("Load after the resume: %d runs, %v", len(runs), err)
	}
	if got := Values(runs, "rule"); len(got) != 1 {
		t.Errorf("Values(rule) = %v", got)
	}
	series, err := SeedSeries(runs, "rule", results.Accuracy)
	if err != nil || len(series) != 1 || len(series[0].Runs) != 2 || len(series[0].X) != 3 {
		t.Errorf("SeedSeries: %+v, %v", series, err)
	}
}

func TestCheck(t *testing.T) {
	defer func() { exit = os.Exit }()
	for _, tc := range []struct {
		err            error
		code           int
		stdout, stderr string
	}{
		// An interrupt fails the cell, so that Run All stops (a clean message, no panic).
		{&Stopped{Run: "a-seed0", Round: 4}, 1, "stopped after round 4 of a-seed0; run the cell again to resume\n", ""},
		{&Incomplete{Done: 1, Want: 3, Missing: []string{"b"}}, 0, "1 of 3 runs are finished (not yet: b)", ""},
		{errors.New("dataset.name \"x\": unknown"), 1, "", "error: dataset.name \"x\": unknown\n"},
	} {
		code := -1
		exit = func(c int) { code = c }
		var out, errOut bytes.Buffer
		check(tc.err, &out, &errOut)
		if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errOut.String(), tc.stderr) ||
			strings.Contains(out.String()+errOut.String(), "panic") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.err, code, out.String(), errOut.String())
		}
	}
	exit = func(int) { t.Error("exit on a nil error") }
	check(nil, os.Stdout, os.Stderr)
}
