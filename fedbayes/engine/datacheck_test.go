package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/strategy"
)

// TestDataErrorsBeforeAnyRun checks that what only the data shows to be wrong is refused by Run as a
// *SpecError naming the field, before the results directory (or any run directory in it) exists.
func TestDataErrorsBeforeAnyRun(t *testing.T) {
	requireDigits(t)
	requireDiabetes(t)
	for _, tc := range []struct {
		name   string
		base   func() *Spec
		modify func(s *Spec)
		path   string
		// says is a part of the message.
		says string
	}{
		{"unknown sort feature", diabetesSpec, func(s *Spec) { s.Partition.SortFeature = "nope" }, "partition.sort_feature", `"nope" is not a feature of diabetes`},
		{"sort feature in one setting of a sweep", diabetesSpec, func(s *Spec) {
			s.Sweep = map[string][]json.RawMessage{"partition.sort_feature": {json.RawMessage(`"bmi"`), json.RawMessage(`"BMI"`)}}
		}, "partition.sort_feature", `"BMI" is not a feature`},
		{"lenet on the digits", digitsSpec, func(s *Spec) { s.Model.Arch = "lenet" }, "model.arch", "InputShape"},
		{"more clients than examples", digitsSpec, func(s *Spec) {
			s.Partition = PartitionSpec{Method: "iid", Clients: 700}
		}, "partition", "700 clients"},
		{"more fedkt teachers than examples", digitsSpec, func(s *Spec) {
			s.Model.Kind, s.Aggregation.Rule, s.Dataset.ServerFraction = "deterministic", "fedkt", 0.2
			s.Aggregation.Options = optionsJSON(strategy.FedKTOptions{Students: 1, Teachers: 200})
		}, "aggregation.options.teachers", "200 teachers per student"},
		{"pre-training split of a tiny server set", digitsSpec, func(s *Spec) {
			s.Aggregation.Rule, s.Dataset.ServerFraction = "DWC", 0.005
			s.Aggregation.Pretrain = &PretrainSpec{Epochs: 1}
		}, "aggregation.pretrain.validation_fraction", "of the server set (3 examples)"},
		{"dataset not installed", digitsSpec, func(s *Spec) { s.Dataset.Dir = t.TempDir() }, "dataset.name", "digits"},
		// The same data as an earlier, valid setting: the checks that depend on the rule or the model
		// still run for the later setting.
		{"fedkt teachers after fedavg on the same data", digitsSpec, func(s *Spec) {
			s.Model.Kind, s.Dataset.ServerFraction = "deterministic", 0.2
			s.Aggregation.Rule = " FedKT"
			s.Aggregation.Options = optionsJSON(strategy.FedKTOptions{Students: 1, Teachers: 200})
			s.Variants = []Variant{
				{Label: "avg", Set: map[string]json.RawMessage{"aggregation.rule": json.RawMessage(`"FedAvg"`), "aggregation.options": json.RawMessage(`null`)}},
				{Label: "kt", Set: map[string]json.RawMessage{"aggregation.rule": json.RawMessage(`" FedKT"`)}},
			}
		}, "aggregation.options.teachers", "200 teachers per student"},
		{"lenet after an mlp on the same data", digitsSpec, func(s *Spec) {
			s.Sweep = map[string][]json.RawMessage{"model.arch": {json.RawMessage(`"mlp"`), json.RawMessage(`"lenet"`)}}
		}, "model.arch", "InputShape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.base()
			tc.modify(s)
			if err := s.Validate(); err != nil {
				t.Fatalf("Validate refuses already (%v); the case needs the data", err)
			}
			dir := t.TempDir() + "/results"
			_, err := Run(context.Background(), s, Options{Dir: dir, Progress: progress.Discard})
			var se *SpecError
			if !errors.As(err, &se) || !strings.HasPrefix(se.Path, tc.path) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v, want a SpecError at %s saying %q", err, tc.path, tc.says)
			}
			if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
				t.Errorf("the results directory was created (%v)", statErr)
			}
			t.Log(err)
		})
	}
}
