package notebook

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
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

// tinyRounds is a multi-round FedBE spec on 500 digits that runs in seconds, as an engine spec.
func tinyRounds(t *testing.T) *engine.Spec {
	if _, err := os.Stat(filepath.Join(data.Dir(), data.SklearnDir, "digits.csv.gz")); err != nil {
		t.Skipf("digits not installed: %v", err)
	}
	s := presets.ChenSpec(&engine.Spec{Name: "nb", Dataset: engine.DatasetSpec{Name: "digits", Subsample: 500, TestSubsample: 100},
		Partition: engine.PartitionSpec{Clients: 3, Alpha: 1}, Model: engine.ModelSpec{Hidden: []int{8}},
		Training: engine.TrainingSpec{Rounds: 1, LocalEpochs: 1, BatchSize: 16, LearningRate: 0.05}, Seeds: []int64{1}},
		predictive.FedBEConfig{Samples: 2, Distill: predictive.DistillConfig{Epochs: 1, BatchSize: 16, SWACycles: 1}})
	return s
}

// The federation splits the data as the engine does, and the anatomy scores every piece of a FedBE
// server step: M samples, K clients, their mean, the ensemble and the student; with the round's seed
// and the spec's options the student is round 1's global model of the engine's fedbe-dirichlet run.
func TestFederationAnatomy(t *testing.T) {
	spec := tinyRounds(t)
	f, err := NewFederation(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The split itself is engine.NewFederation's (checked in package engine).
	if len(f.Clients) != 3 || f.Server == nil {
		t.Fatalf("federation: %d clients, server %v", len(f.Clients), f.Server)
	}
	trained, err := f.FirstRound()
	if err != nil {
		t.Fatal(err)
	}
	fc := predictive.FedBEConfig{Samples: 2, Distill: predictive.DistillConfig{Epochs: 1, BatchSize: 16, SWACycles: 1},
		Seed: f.AggregateSeed(1), Distribution: "dirichlet"}
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
	dir := t.TempDir()
	if _, err := train(context.Background(), dir, progress.Discard, spec); err != nil {
		t.Fatal(err)
	}
	run, err := results.ReadRun(filepath.Join(dir, results.RunName("nb-"+strategy.FedBEDirichlet, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pieces[4].Results[0].Accuracy, run.Rows[0].Metrics[results.Accuracy]; got != want {
		t.Errorf("the anatomy's student scores %v, round 1 of the run %v", got, want)
	}
	bad := spec.Clone()
	bad.Dataset.Name = "nosuch"
	if _, err := NewFederation(bad, 1); err == nil || !strings.Contains(err.Error(), "dataset.name") {
		t.Errorf("unknown dataset: %v", err)
	}
}
