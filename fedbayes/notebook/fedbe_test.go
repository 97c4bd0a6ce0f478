package notebook

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
)

func TestPieceCells(t *testing.T) {
	r := func(acc, nll float64) metrics.ClassificationResult {
		return metrics.ClassificationResult{Accuracy: acc, NLL: nll}
	}
	for _, tc := range []struct {
		piece Piece
		want  []string
	}{
		{Piece{"one", []metrics.ClassificationResult{r(0.5, 1.25)}}, []string{"0.500", "1.250"}},
		{Piece{"three", []metrics.ClassificationResult{r(0.5, 1), r(0.75, 3), r(1, 2)}},
			[]string{"0.750 [0.500, 1.000]", "2.000 [1.000, 3.000]"}},
	} {
		if got := tc.piece.Cells(); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: %q, want %q", tc.piece.What, got, tc.want)
		}
	}
}

func TestAnatomyMarkdown(t *testing.T) {
	one := []metrics.ClassificationResult{{Accuracy: 0.5, NLL: 1}}
	a := []Piece{{"clients", one}, {"student", one}}
	md, err := AnatomyMarkdown([]string{"Gaussian", "Dirichlet"}, a, a)
	want := "| test set | Gaussian: accuracy | NLL | Dirichlet: accuracy | NLL |\n| --- | ---: | ---: | ---: | ---: |\n" +
		"| clients | 0.500 | 1.000 | 0.500 | 1.000 |\n| student | 0.500 | 1.000 | 0.500 | 1.000 |\n"
	if err != nil || md != want {
		t.Errorf("AnatomyMarkdown:\n%s\nwant\n%s(%v)", md, want, err)
	}
	for _, tc := range []struct {
		names     []string
		anatomies [][]Piece
		err       string
	}{
		{[]string{"G"}, [][]Piece{a, a}, "1 names for 2 anatomies"},
		{[]string{"G", "D"}, [][]Piece{a, a[:1]}, `anatomy "D" lists other pieces than "G"`},
		{[]string{"G", "D"}, [][]Piece{a, {a[1], a[0]}}, `anatomy "D" lists other pieces`},
	} {
		if _, err := AnatomyMarkdown(tc.names, tc.anatomies...); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v: error %v, want %q", tc.names, err, tc.err)
		}
	}
}

// tinyRounds is a multi-round spec on 300 digits that runs in seconds.
func tinyRounds(t *testing.T) predictive.RoundsSpec {
	if _, err := os.Stat(filepath.Join(data.Dir(), data.SklearnDir, "digits.csv.gz")); err != nil {
		t.Skipf("digits not installed: %v", err)
	}
	return predictive.RoundsSpec{
		Setup:  predictive.Setup{Name: "nb", Dataset: "digits", Subsample: 300, TestSubsample: 100, Clients: 3, Hidden: []int{8}, Seeds: []int64{1}, Methods: []string{predictive.RoundsFedAvg}},
		Alpha:  1,
		Rounds: 2,
		Local:  predictive.LocalConfig{Epochs: 1, BatchSize: 16, LearningRate: 0.05},
		FedBE:  predictive.FedBEConfig{Samples: 2, Distill: predictive.DistillConfig{Epochs: 1, BatchSize: 16, SWACycles: 1}},
	}
}

// The federation splits the data as the spec says, and the anatomy scores every piece of a FedBE
// server step: M samples, K clients, their mean, the ensemble and the student.
func TestFederationAnatomy(t *testing.T) {
	spec := tinyRounds(t)
	f, err := NewFederation(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, c := range f.Clients {
		total += c.Len()
	}
	if len(f.Clients) != 3 || len(f.Sizes) != 3 || total+f.Server.Len() != 300 || f.Server.Len() != 60 || f.Test.Len() != 100 {
		t.Fatalf("federation: %d clients of %v, server %d, test %d", len(f.Clients), f.Sizes, f.Server.Len(), f.Test.Len())
	}
	lc := spec.Local
	lc.Seed = 1
	trained, err := f.FirstRound(lc)
	if err != nil {
		t.Fatal(err)
	}
	fc := spec.FedBE
	fc.Seed, fc.Distribution = 1, "dirichlet"
	pieces, err := f.FedBEAnatomy(trained, fc)
	if err != nil {
		t.Fatal(err)
	}
	counts := []int{3, 1, 2, 1, 1}
	for i, p := range pieces {
		if len(p.Results) != counts[i] {
			t.Errorf("%s: %d results, want %d", p.What, len(p.Results), counts[i])
		}
		for _, r := range p.Results {
			if !(r.Accuracy >= 0 && r.Accuracy <= 1 && r.NLL > 0) {
				t.Errorf("%s: %+v", p.What, r)
			}
		}
	}
	bad := spec
	bad.Clients = 1
	if _, err := NewFederation(bad, 1); err == nil || !strings.Contains(err.Error(), "clients") {
		t.Errorf("one client: %v", err)
	}
}

// cancelOnUpdate cancels a context at the first round reported.
type cancelOnUpdate struct {
	progress.Reporter
	cancel context.CancelFunc
}

func (c cancelOnUpdate) Update(int, map[string]float64, progress.Timings) { c.cancel() }

// An interrupt stops RunRounds with a *Stopped error that says the run starts again; the next call
// finishes it.
func TestRunRoundsInterrupt(t *testing.T) {
	spec := tinyRounds(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := runRounds(ctx, dir, spec, cancelOnUpdate{Reporter: progress.Discard, cancel: cancel})
	var stopped *Stopped
	if !errors.As(err, &stopped) || stopped.Run != "nb-fedavg-seed1" || stopped.Round != 1 || !stopped.Restarts {
		t.Fatalf("error %v (%#v), want stopped after round 1 of nb-fedavg-seed1", err, stopped)
	}
	if !strings.Contains(err.Error(), "this one starts again") {
		t.Errorf("message %q", err)
	}
	var inc *Incomplete
	if _, err := LoadDir(dir); !errors.As(err, &inc) {
		t.Errorf("LoadDir after the stop: %v", err)
	}
	if err := runRounds(context.Background(), dir, spec, progress.Discard); err != nil {
		t.Fatal(err)
	}
	runs, err := LoadDir(dir)
	if err != nil || len(runs) != 1 || len(runs[0].Rows) != 2 {
		t.Fatalf("LoadDir after the rerun: %d runs, %v", len(runs), err)
	}
	if _, ok := runs[0].Rows[1].Metrics[results.ECE]; !ok {
		t.Errorf("round 2 has no ECE: %v", runs[0].Rows[1].Metrics)
	}
}
