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
	e := Expected{Quick: Measurement{Seconds: 117, Cores: 2, Load: 9.66, Date: "2026-12-02"}, Paper: "weeks"}
	want := "expected time (headless): about 2 minutes (117 s measured on 2 cores at a load average of 9.7, 2026-12-02); other budgets: paper weeks"
	if got := e.Line(Quick, "headless"); got != want {
		t.Errorf("Line(quick) = %q, want %q", got, want)
	}
	if got := e.Line(Reduced, "headless"); !strings.HasPrefix(got, "expected time (headless): not measured; other budgets: quick about 2 minutes (117 s measured on 2 cores at a load") {
		t.Errorf("Line(reduced) = %q", got)
	}
	if got := (Expected{}).Line(Quick, "x"); got != "expected time (x): not measured" {
		t.Errorf("Line of nothing measured = %q", got)
	}
}

// TestAbout checks the rounded times of Measurement.String.
func TestAbout(t *testing.T) {
	for _, tc := range []struct {
		sec  int
		want string
	}{
		{3, "about 10 s"}, {44, "about 40 s"}, {45, "about 50 s"}, {114, "about 110 s"}, {115, "about 2 minutes"},
		{120, "about 2 minutes"}, {134, "about 2 minutes"}, {135, "about 2.5 minutes"}, {600, "about 10 minutes"},
	} {
		if got := about(tc.sec); got != tc.want {
			t.Errorf("about(%d) = %q, want %q", tc.sec, got, tc.want)
		}
	}
}

// TestMachineNow checks the line stating this machine's load, from the text of /proc/loadavg.
func TestMachineNow(t *testing.T) {
	for _, tc := range []struct {
		loadavg string
		want    string
	}{
		{"3.14 2.50 1.20 2/300 4567\n", "this machine now: 2 cores at a load average of 3.1"},
		{"", ""}, {"x 1 2", ""}, {"-1 0 0", ""}, {"NaN 0 0", ""},
	} {
		if got := machineNow(tc.loadavg, 2); got != tc.want {
			t.Errorf("machineNow(%q) = %q, want %q", tc.loadavg, got, tc.want)
		}
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
