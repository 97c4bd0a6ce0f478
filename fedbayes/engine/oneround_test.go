package engine

import (
	"encoding/json"
	"testing"

	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/strategy"
)

// TestOneRoundBaselines runs the one-round baselines OneshotFL and FedKT (Hasan (2023), Table 3.1)
// through engine.Run on a small deterministic MLP beside FedAvg on the same clients, and checks that
// each learns (accuracy well above chance on the ten digits) and repeats with the same seed.
func TestOneRoundBaselines(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Dataset.ServerFraction = 0.2
	s.Model.Kind, s.Model.Hidden = "deterministic", []int{32}
	s.Training.Rounds, s.Training.LocalEpochs, s.Training.Momentum = 1, 5, 0.9
	s.Aggregation.Options = optionsJSON(strategy.OneshotFLOptions{Distill: predictive.DistillConfig{Epochs: 10, BatchSize: 32, LearningRate: 5e-3}})
	s.Variants = []Variant{
		{Label: "oneshotfl", Set: map[string]json.RawMessage{"aggregation.rule": json.RawMessage(`"oneshotfl"`)}},
		{Label: "fedkt", Set: map[string]json.RawMessage{"aggregation.rule": json.RawMessage(`"fedkt"`),
			"aggregation.options.students": json.RawMessage(`2`), "aggregation.options.teachers": json.RawMessage(`2`)}},
	}
	sum := runQuiet(t, s, t.TempDir(), false)
	if len(sum.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(sum.Runs))
	}
	requireLearned(t, sum, 0.4)
	requireRepeats(t, s, sum)
}

// TestOneRoundBaselineSpecErrors checks the refusals of OneshotFL and FedKT, each naming its field.
func TestOneRoundBaselineSpecErrors(t *testing.T) {
	checkSpecErrors(t, digitsSpec, []specErrorCase{
		{"oneshotfl without server set", func(s *Spec) { s.Aggregation.Rule = "oneshotfl" }, "dataset.server_fraction"},
		{"fedkt without server set", func(s *Spec) { s.Aggregation.Rule = "fedkt" }, "dataset.server_fraction"},
		{"fedkt with a sampler", func(s *Spec) {
			s.Aggregation.Rule, s.Dataset.ServerFraction, s.Model.Kind = "fedkt", 0.2, "deterministic"
			s.Training.Sampler = &predictive.SamplerConfig{}
		}, "training.sampler"},
		{"fedkt options on another strategy", func(s *Spec) {
			s.Aggregation.Rule, s.Dataset.ServerFraction = "bcm", 0.2
			s.Aggregation.Options = optionsJSON(strategy.FedKTOptions{Students: 2})
		}, "aggregation.options.students"},
		{"fedkt negative teachers", func(s *Spec) {
			s.Aggregation.Rule, s.Dataset.ServerFraction = "fedkt", 0.2
			s.Aggregation.Options = optionsJSON(strategy.FedKTOptions{Teachers: -1})
		}, "aggregation.options"},
		{"fedkt too many teachers", func(s *Spec) {
			s.Aggregation.Rule, s.Dataset.ServerFraction = "fedkt", 0.2
			s.Aggregation.Options = optionsJSON(strategy.FedKTOptions{Students: 1 << 40, Teachers: 1 << 40})
		}, "aggregation.options"},
		{"student start on bcm", func(s *Spec) {
			s.Aggregation.Rule, s.Dataset.ServerFraction = "bcm", 0.2
			s.Aggregation.Options = optionsJSON(strategy.DistilledOptions{StudentStart: "previous"})
		}, "aggregation.options.student_start"},
		{"unknown student start", func(s *Spec) {
			s.Aggregation.Rule, s.Dataset.ServerFraction = "d-bcm", 0.2
			s.Aggregation.Options = optionsJSON(strategy.DistilledOptions{StudentStart: "fresh"})
		}, "aggregation.options.student_start"},
		{"fedkt bad optimizer", func(s *Spec) {
			s.Aggregation.Rule, s.Dataset.ServerFraction = "fedkt", 0.2
			s.Aggregation.Options = optionsJSON(strategy.FedKTOptions{Local: predictive.LocalConfig{Optimizer: "lbfgs"}})
		}, "aggregation.options.local.optimizer"},
	})
}
