package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/results"
)

// TestDefaultVarianceTraining checks which specs WithDefaults gives the default variance training
// (TrainingSpec.defaultOptimizers): a Bayesian model whose spec names no optimizer, no variance
// optimizer and no variance rate, and nothing else. Every default it sets validates, and
// WithDefaults applied twice gives what it gives once.
func TestDefaultVarianceTraining(t *testing.T) {
	dflt := [3]string{"sgd", string(DefaultVarianceOptimizer), fmt.Sprint(DefaultVarianceLR)}
	plain := [3]string{"sgd", "", "0"}
	for _, tc := range []struct {
		name   string
		modify func(*Spec)
		want   [3]string // optimizer, variance_optimizer, variance_lr after WithDefaults
		valid  bool
	}{
		{"bare bayesian", func(s *Spec) {}, dflt, true},
		{"kind left out (bayesian)", func(s *Spec) { s.Model.Kind = "" }, dflt, true},
		{"training options other than the optimizers", func(s *Spec) {
			s.Training = TrainingSpec{Rounds: 3, LocalEpochs: 2, BatchSize: 32, LearningRate: 0.05, Momentum: 0.9}
		}, dflt, true},
		{"compat paper is the default mode", func(s *Spec) { s.Model.Compat = "paper" }, dflt, true},
		{"sgd named: every parameter with sgd", func(s *Spec) { s.Training.Optimizer = "sgd" }, plain, true},
		{"adam named", func(s *Spec) { s.Training.Optimizer = "adam" }, [3]string{"adam", "", "0"}, true},
		{"variance optimizer named, rate left out", func(s *Spec) { s.Training.VarianceOptimizer = "adam" },
			[3]string{"sgd", "adam", "0"}, true},
		{"variance rate without optimizer", func(s *Spec) { s.Training.VarianceLR = 0.005 },
			[3]string{"sgd", "", "0.005"}, false},
		{"deterministic", func(s *Spec) { s.Model.Kind = models.Deterministic }, plain, true},
		{"mc dropout", func(s *Spec) { s.Model.Kind = models.MCDropout }, plain, true},
		{"bfl-p compat", func(s *Spec) { s.Model.Compat = models.CompatBFLP }, plain, true},
		{"sampling clients", func(s *Spec) {
			s.Model.Kind = models.Deterministic
			s.Training.Sampler = &predictive.SamplerConfig{Method: predictive.SGLD}
		}, plain, true},
		// Refused for its kind (a sampler needs a deterministic net), not for a variance optimizer
		// the user did not set.
		{"sampling clients of a bayesian model", func(s *Spec) {
			s.Training.Sampler = &predictive.SamplerConfig{Method: predictive.SGLD}
		}, plain, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Spec{Dataset: DatasetSpec{Name: "digits"}, Model: ModelSpec{Kind: models.Bayesian}}
			tc.modify(s)
			d := s.WithDefaults()
			got := [3]string{d.Training.Optimizer, d.Training.VarianceOptimizer, fmt.Sprint(d.Training.VarianceLR)}
			if got != tc.want {
				t.Errorf("optimizer, variance_optimizer, variance_lr = %q, want %q", got, tc.want)
			}
			if again := d.WithDefaults().Training; again.Optimizer != got[0] || again.VarianceOptimizer != got[1] || fmt.Sprint(again.VarianceLR) != got[2] {
				t.Errorf("WithDefaults twice gives %q %q %v, once %q", again.Optimizer, again.VarianceOptimizer, again.VarianceLR, got)
			}
			if err := s.Validate(); (err == nil) != tc.valid {
				t.Errorf("Validate: %v, want valid %v", err, tc.valid)
			}
		})
	}
}

// TestDefaultVarianceTrainingDocumented checks that docs/models.md states the default variance
// training that WithDefaults sets.
func TestDefaultVarianceTrainingDocumented(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "models.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i := strings.Index(doc, "\n## Default variance training\n")
	if i < 0 {
		t.Fatal(`docs/models.md has no section "Default variance training"`)
	}
	section := doc[i+1:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	want := fmt.Sprintf("`training.variance_optimizer` `%s` at `training.variance_lr` `%g`", DefaultVarianceOptimizer, DefaultVarianceLR)
	if !strings.Contains(section, want) {
		t.Errorf("the section does not state the default %q", want)
	}
}

// TestBayesianSpecWithoutOptimizerLearnsVariances runs on digits a Bayesian spec that names no
// optimizer (quick-digits' training cut to EAA and 8 rounds: 5 IID clients, 2 epochs of batch 32,
// 18 steps a round): the default variance training moves every log sigma^2 by about 0.018 a round,
// so the run is not flagged frozen. The same spec with the optimizer named "sgd", the default before
// DefaultVarianceOptimizer, leaves them where they started, and RunHealth says so. The clients are
// IID and Adam moves each of them by the same step, so the variances move together: HealthUniform,
// not HealthLearned (docs/models.md, "Default variance training").
func TestBayesianSpecWithoutOptimizerLearnsVariances(t *testing.T) {
	requireDigits(t)
	spec := func() *Spec {
		return &Spec{Name: "no-optimizer", Dataset: DatasetSpec{Name: "digits"}, Partition: PartitionSpec{Clients: 5},
			Model: ModelSpec{Kind: models.Bayesian, Hidden: []int{32}}, Aggregation: AggregationSpec{Rule: "EAA"},
			Training:   TrainingSpec{Rounds: 8, LocalEpochs: 2, BatchSize: 32, LearningRate: 0.05, Momentum: 0.9},
			Evaluation: EvaluationSpec{Samples: 2}}
	}
	former := spec()
	former.Training.Optimizer = string(models.SGD)
	for _, tc := range []struct {
		name  string
		spec  *Spec
		state results.HealthState
		moved float64 // least share of the global model's variances moved from their initial value
	}{
		{"no optimizer named", spec(), results.HealthUniform, 0.99},
		{"sgd named", former, results.HealthFrozen, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sum := runQuiet(t, tc.spec, dir, false)
			r := sum.Runs[0]
			run, err := results.ReadRun(filepath.Join(dir, results.RunName(r.Setting, r.Seed)))
			if err != nil {
				t.Fatal(err)
			}
			h := results.RunHealth(run)
			t.Logf("%s: %s", h.State, h.Message)
			if h.State != tc.state || h.Moved < tc.moved {
				t.Errorf("%s with %.3g of the variances moved, want %s with at least %.3g", h.State, h.Moved, tc.state, tc.moved)
			}
		})
	}
}
